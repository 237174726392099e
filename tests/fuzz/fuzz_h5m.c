/* fuzz_h5m.c — libFuzzer harness of the HDF5 matrix reader.
 * Structure-aware: the input bytes decide a small matrix group in schema 1
 * (sizes, the three datasets with their element types, row_ptr, col_idx and
 * values, the attributes, each of them kept, dropped or made inconsistent),
 * the harness writes it with the HDF5 library to a file in /dev/shm
 * (memory; the reader takes a path and checks it with stat and
 * H5Fis_hdf5), and imports it as h5m_probe does: pl_h5m_open_info,
 * pl_h5m_row_lengths, pl_h5m_read_rows, on one rank, in bounded rounds of
 * 3 entries (pl_h5m_set_block_entries) so the multi-round paths run.
 * Every call must return PL_OK or PL_ERR_INPUT; anything else aborts, as
 * does every sanitizer report.  Damaged bytes inside HDF5's own metadata
 * are fuzz.py's job (the corpus test): here the file is always well-formed
 * HDF5 and every finding is the reader's. */
#define _GNU_SOURCE
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_error.h"
#include "pl_h5matrix.h"

static char path[256];

typedef struct src {
    const uint8_t *d;
    size_t n, p;
} src;
static unsigned u8(src *s) { return s->p < s->n ? s->d[s->p++] : 0; }
static uint64_t u64(src *s)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v = v << 8 | u8(s);
    return v;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/pjds_fuzz_h5m_%d.h5", dir, (int)getpid());
    pl_log_init(1, 0);
    pl_h5m_set_block_entries(3);
    return 0;
}

static void attr_i64(hid_t g, const char *name, hid_t type, int64_t v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || H5Awrite(a, H5T_NATIVE_INT64, &v) < 0) abort();
    H5Aclose(a);
    H5Sclose(sp);
}
static void attr_str(hid_t g, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(v) + 1);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || H5Awrite(a, t, v) < 0) abort();
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
}
static void dset(hid_t g, const char *name, hid_t ftype, hid_t mtype, hsize_t n, const void *buf)
{
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(g, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0 || (n && H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)) abort();
    H5Dclose(d);
    H5Sclose(sp);
}

static void check(int rc, const char *what)
{
    if (rc == PL_OK || rc == PL_ERR_INPUT) return;
    fprintf(stderr, "fuzz_h5m: %s returned %s (%d): %s\n", what, pl_error_name(rc), rc, pl_error_message());
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    src s = {data, size, 0};
    unsigned flags = u8(&s), flags2 = u8(&s);
    int64_t n = 1 + (int64_t)(u8(&s) % 12); /* rows */
    int lower = flags & 1, symmetric = (flags >> 1) & 1;
    /* the matrix: per row a few entries from the bytes, columns in [-1, n] */
    int64_t cap = n * 6, nnz = 0;
    int64_t *rp = calloc((size_t)n + 1, sizeof *rp), *ci = malloc(sizeof(int64_t) * (size_t)cap);
    double *va = malloc(sizeof(double) * (size_t)cap);
    if (!rp || !ci || !va) abort();
    for (int64_t i = 0; i < n; i++) {
        int len = (int)(u8(&s) % 6);
        for (int k = 0; k < len; k++) {
            unsigned b = u8(&s);
            ci[nnz] = (b & 0x80) ? (int64_t)(b % (unsigned)(n + 2)) - 1 : (i + (int64_t)(b % 3) - 1 + n) % n;
            unsigned vb = u8(&s);
            va[nnz] = vb < 250 ? (double)(int)(vb % 9) - 4.0 : (vb == 250 ? NAN : vb == 251 ? INFINITY : 1e308);
            nnz++;
        }
        rp[i + 1] = nnz;
    }
    /* inconsistencies, each with a small probability */
    int64_t a_rows = n, a_cols = n, a_nnz = nnz, schema = 1;
    unsigned m = u8(&s);
    if (m == 1) a_rows = (int64_t)u64(&s);
    if (m == 2) a_cols = (int64_t)u64(&s);
    if (m == 3) a_nnz = (int64_t)u64(&s);
    if (m == 4) schema = (int64_t)u8(&s);
    if (m == 5 && n > 0) rp[u8(&s) % (unsigned)(n + 1)] = (int64_t)u64(&s);
    if (m == 6 && nnz > 0) ci[u8(&s) % (unsigned)nnz] = (int64_t)u64(&s);
    if (m == 7 && n > 1) { /* swap two row pointers: decreasing */
        int64_t t = rp[1];
        rp[1] = rp[n];
        rp[n] = t;
    }
    hsize_t n_rp = (hsize_t)n + 1, n_ci = (hsize_t)nnz, n_va = (hsize_t)nnz;
    if (m == 8) n_rp = (hsize_t)(u8(&s) % (unsigned)(n + 3));
    if (m == 9) n_ci = (hsize_t)(u8(&s) % (unsigned)(nnz + 2));
    if (m == 10) n_va = (hsize_t)(u8(&s) % (unsigned)(nnz + 2));
    if (n_ci > (hsize_t)nnz || n_va > (hsize_t)nnz) { /* longer than the data: grow with junk-free zeros */
        int64_t *c2 = calloc((size_t)nnz + 2, sizeof *c2);
        double *v2 = calloc((size_t)nnz + 2, sizeof *v2);
        if (!c2 || !v2) abort();
        memcpy(c2, ci, sizeof(int64_t) * (size_t)nnz);
        memcpy(v2, va, sizeof(double) * (size_t)nnz);
        free(ci);
        free(va);
        ci = c2;
        va = v2;
    }
    if (n_rp > (hsize_t)n + 1) {
        int64_t *r2 = calloc((size_t)n + 3, sizeof *r2);
        if (!r2) abort();
        memcpy(r2, rp, sizeof(int64_t) * ((size_t)n + 1));
        free(rp);
        rp = r2;
    }

    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) abort();
    const hid_t ityp[4] = {H5T_STD_I64LE, H5T_STD_I32LE, H5T_STD_U16LE, H5T_STD_I8LE};
    const hid_t ftyp[4] = {H5T_IEEE_F64LE, H5T_IEEE_F32LE, H5T_IEEE_F64BE, H5T_STD_I32LE};
    hid_t t_rp = ityp[(flags >> 2) & 3], t_ci = ityp[(flags >> 4) & 3], t_va = ftyp[(flags >> 6) & 3];
    if (!(flags2 & 1)) dset(f, "row_ptr", t_rp, H5T_NATIVE_INT64, n_rp, rp);
    if (!(flags2 & 2)) dset(f, "col_idx", t_ci, H5T_NATIVE_INT64, n_ci, ci);
    if (!(flags2 & 4)) dset(f, "values", t_va, H5T_NATIVE_DOUBLE, n_va, va);
    if (flags2 & 8) H5Gclose(H5Gcreate2(f, "extra", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    unsigned drop = u8(&s); /* one attribute missing */
    if (drop != 1) attr_i64(f, "pjds_matrix_schema", H5T_STD_I32LE, schema);
    if (drop != 2) attr_i64(f, "rows", H5T_STD_I64LE, a_rows);
    if (drop != 3) attr_i64(f, "cols", H5T_STD_I64LE, a_cols);
    if (drop != 4) attr_i64(f, "nnz", (flags2 & 16) ? H5T_STD_U32LE : H5T_STD_I64LE, a_nnz);
    if (drop != 5) attr_i64(f, "symmetric", H5T_STD_I32LE, symmetric);
    if (drop != 6) attr_str(f, "storage", (flags2 & 32) ? "diagonal" : lower ? "lower" : "full");
    if (flags2 & 64) attr_str(f, "name", "fuzz");
    H5Fclose(f);
    free(rp);
    free(ci);
    free(va);

    pl_h5m_info in;
    int rc = pl_h5m_open_info(path, "/", &in);
    check(rc, "pl_h5m_open_info");
    if (rc == PL_OK && in.rows <= 4096) {
        int32_t *len = malloc(sizeof(int32_t) * (size_t)in.rows);
        if (!len) abort();
        rc = pl_h5m_row_lengths(path, "/", 0, in.rows, len, MPI_COMM_WORLD);
        check(rc, "pl_h5m_row_lengths");
        free(len);
        if (rc == PL_OK) {
            pl_csr b;
            /* two row ranges one after the other, then the whole */
            int64_t half = in.rows / 2;
            rc = pl_h5m_read_rows(path, "/", 0, half, MPI_COMM_WORLD, &b);
            check(rc, "pl_h5m_read_rows");
            if (rc == PL_OK) pl_csr_destroy(&b);
            rc = pl_h5m_read_rows(path, "/", 0, in.rows, MPI_COMM_WORLD, &b);
            check(rc, "pl_h5m_read_rows");
            if (rc == PL_OK) pl_csr_destroy(&b);
        }
    }
    pl_error_clear();
    unlink(path);
    return 0;
}
