/* pl_petscbin.c — export in PETSc's binary matrix format (pl_h5matrix.h,
 * pl_petsc_write): big-endian int32 class id 1211216, rows, cols, nnz, then
 * the row lengths (int32), the column indices (int32) and the values
 * (float64).  Rank 0 writes three passes over the ranks (lengths, columns,
 * values); rank p sends its lengths, columns and values in pieces of at
 * most B entries with distinct tags, so rank 0's receives in pass order
 * never wait on a send that waits on them.  The file is written under a
 * temporary name and placed when complete (pl_place_file). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pl_error.h"
#include "pl_h5m_impl.h"
#include "pl_place.h"

#define PETSC_MAT_CLASSID 1211216

static uint32_t be32(uint32_t v)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one ? __builtin_bswap32(v) : v;
}
static uint64_t be64(uint64_t v)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one ? __builtin_bswap64(v) : v;
}

/* Piece s..s+n of part (0 lengths, 1 columns, 2 values) of block a, as
 * big-endian bytes in out (4 or 8 bytes an entry). */
static void encode(const pl_csr *a, int part, int64_t s, int64_t n, void *out)
{
    uint32_t *o32 = out;
    uint64_t *o64 = out;
    for (int64_t k = 0; k < n; k++) {
        if (part == 0) o32[k] = be32((uint32_t)(a->row_ptr[s + k + 1] - a->row_ptr[s + k]));
        else if (part == 1) o32[k] = be32((uint32_t)a->col[s + k]);
        else {
            uint64_t u;
            memcpy(&u, &a->val[s + k], 8);
            o64[k] = be64(u);
        }
    }
}

/* Rank 0: part `part` of every rank's block, in rank order, to f.  After an
 * error the pieces are still received (not written). */
static int write_part(FILE *f, const pl_csr *a, const int64_t *cnt, int size, int part, MPI_Comm comm, void *buf,
                      int rc)
{
    const int64_t B = h5m_g_block;
    const size_t w = part == 2 ? 8 : 4;
    for (int p = 0; p < size; p++) {
        const int64_t total = cnt[2 * p + (part == 0 ? 0 : 1)];
        for (int64_t s = 0; s < total; s += B) {
            const int64_t n = total - s < B ? total - s : B;
            if (p == 0) encode(a, part, s, n, buf);
            else if (MPI_Recv(buf, (int)(n * (int64_t)w), MPI_BYTE, p, 200 + part, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return PL_ERROR(PL_ERR_MPI, "MPI_Recv of a matrix piece from rank %d failed", p);
            if (!rc && fwrite(buf, w, (size_t)n, f) != (size_t)n)
                rc = PL_ERROR(PL_ERR_IO, "cannot write the PETSc binary file (%s; disk full?)", strerror(errno));
        }
    }
    return rc;
}

static int send_parts(const pl_csr *a, MPI_Comm comm, void *buf)
{
    const int64_t B = h5m_g_block;
    for (int part = 0; part < 3; part++) {
        const int64_t total = part == 0 ? a->nrows : pl_csr_nnz(a);
        const int64_t w = part == 2 ? 8 : 4;
        for (int64_t s = 0; s < total; s += B) {
            const int64_t n = total - s < B ? total - s : B;
            encode(a, part, s, n, buf);
            if (MPI_Send(buf, (int)(n * w), MPI_BYTE, 0, 200 + part, comm) != MPI_SUCCESS)
                return PL_ERROR(PL_ERR_MPI, "MPI_Send of a matrix piece failed");
        }
    }
    return PL_OK;
}

int pl_petsc_write(const char *file, const pl_csr *a, MPI_Comm comm, int overwrite)
{
    int rank, size, rc = PL_OK;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_rank failed");
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    const int64_t N = a->nrows_global;
    int64_t mine[2] = {a->nrows, pl_csr_nnz(a)}, *cnt = NULL, total = 0;
    PL_MALLOC(cnt, 2 * (size_t)size);
    if (MPI_Allgather(mine, 2, MPI_INT64_T, cnt, 2, MPI_INT64_T, comm) != MPI_SUCCESS) {
        free(cnt);
        return PL_ERROR(PL_ERR_MPI, "MPI_Allgather failed");
    }
    for (int p = 0; p < size; p++) total += cnt[2 * p + 1];
    if (N > INT32_MAX || total > INT32_MAX) {
        free(cnt);
        return PL_ERROR(PL_ERR_INPUT,
                        "the matrix (%lld rows, %lld non-zeros) does not fit PETSc's binary format with 32-bit "
                        "integers; export it as HDF5",
                        (long long)N, (long long)total);
    }
    char tmp[4200];
    FILE *f = NULL;
    void *buf = malloc(8 * (size_t)h5m_g_block);
    if (!buf) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
    if (!rc && rank == 0) {
        struct stat st;
        snprintf(tmp, sizeof tmp, "%s.part-%ld", file, (long)getpid());
        if (strlen(file) > 4000) rc = PL_ERROR(PL_ERR_INPUT, "output file name too long");
        else if (stat(file, &st) == 0 && !overwrite)
            rc = PL_ERROR(PL_ERR_INPUT, "output file '%s' exists (use --overwrite to replace it)", file);
        else if (!(f = fopen(tmp, "wb")))
            rc = PL_ERROR(PL_ERR_INPUT, "cannot create output file '%s' (%s)", tmp, strerror(errno));
        else {
            const uint32_t head[4] = {be32(PETSC_MAT_CLASSID), be32((uint32_t)N), be32((uint32_t)N), be32((uint32_t)total)};
            if (fwrite(head, 4, 4, f) != 4) rc = PL_ERROR(PL_ERR_IO, "cannot write '%s'", tmp);
        }
    }
    rc = h5m_agree(rc, comm);
    if (!rc && rank == 0) {
        for (int part = 0; part < 3; part++) {
            rc = write_part(f, a, cnt, size, part, comm, buf, rc);
            if (rc == PL_ERR_MPI) break;
        }
        if (fclose(f) != 0 && !rc) rc = PL_ERROR(PL_ERR_IO, "cannot close '%s' (%s)", tmp, strerror(errno));
        f = NULL;
        int kept = 0;
        if (!rc) {
            rc = pl_place_file(tmp, file, overwrite);
            kept = rc == PL_ERR_INPUT;
        }
        if (rc && !kept) unlink(tmp);
    } else if (!rc) {
        rc = send_parts(a, comm, buf);
    }
    if (f) {
        fclose(f);
        unlink(tmp);
    }
    rc = h5m_agree(rc, comm);
    free(buf);
    free(cnt);
    return rc;
}
