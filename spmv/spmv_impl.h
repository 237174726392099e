/* spmv_impl.h — internals of spmv/ shared by its own files (pjds.c, op.c,
 * cpu/, cuda/).  Never included from another folder.
 *
 * Contents: an MPI return-code macro, a host reference pJDS SpMV (the oracle
 * the CUDA tests compare against), byte size of a pJDS, the pJDS
 * layout helpers, and the coupling list of a Kronecker-sum operator.
 */
#ifndef PL_SPMV_IMPL_H
#define PL_SPMV_IMPL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_error.h"
#include "spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Check an MPI return code: on failure record "<what> failed: <MPI string>"
 * and return PL_ERR_MPI. */
#define PL_MPI(e, what)                                                         \
    do {                                                                        \
        int pl_mpi_e_ = (e);                                                    \
        if (pl_mpi_e_ != MPI_SUCCESS) {                                         \
            char pl_mpi_s_[MPI_MAX_ERROR_STRING];                               \
            int pl_mpi_l_ = 0;                                                  \
            pl_mpi_s_[0] = 0;                                                   \
            MPI_Error_string(pl_mpi_e_, pl_mpi_s_, &pl_mpi_l_);                 \
            return pl_error_set(PL_ERR_MPI, __FILE__, __LINE__, __func__,       \
                                "%s failed: %s", (what), pl_mpi_s_);            \
        }                                                                       \
    } while (0)

/* Index of entry j of pJDS row r (0 <= j < chunk_width[r / C]). */
static inline int64_t pjds_entry(const pjds *p, int32_t r, int32_t j)
{
    return p->chunk_start[r / p->C] + (int64_t)j * p->C + r % p->C;
}

/* Host reference SpMV, serial, one row at a time (the oracle for backend
 * tests; slow).  row_map == NULL: y = A x, else y[row_map[i]] += (A x)[i].
 * Can't fail. */
void pjds_spmv_ref(const pjds *p, const double *x, double *y);

/* Layout of a pJDS of n rows where permuted row s holds len[perm[s]]
 * entries (perm NULL: len[s]): chunk widths, chunk offsets, row_len, nnz,
 * nent; col and val are allocated (nent entries) but not filled — the
 * caller fills every entry.  PL_ERR_ARG for a bad perm or a negative
 * length, PL_ERR_MEM/PL_ERR_OVERFLOW.  Parallel (OpenMP).  On failure *out
 * is zeroed. */
int pjds_layout(int32_t n, int32_t ncols, const int32_t *len, const int32_t *perm, int C, int64_t sigma, pjds *out);

/* Bytes of the arrays of p (what a backend copy of it holds).  Can't fail. */
size_t pjds_bytes(const pjds *p);

/* ---- device halo transport (pl_backend.halo) -----------------------------
 * What the operator needs on a device backend beyond the vector table:
 * copies between device and pinned host buffers that do not synchronise,
 * events to order the backend's stream, a second ("comm") stream, NCCL and
 * CUDA IPC.  Filled by the cuda backend (spmv/cuda/transport.cu); host
 * backends have none (pl_backend.halo == NULL) and exchange through host
 * MPI only.  Everything is enqueued on the backend's stream unless said
 * otherwise. */
typedef struct pl_halo_xfer pl_halo_xfer; /* the transport state of one operator */
typedef struct pl_halo_ops {
    /* Do ranks of comm share a device?  Collective over comm; every rank
     * gets the same answer: *a < *b the two lowest ranks on one device (of
     * the device whose lowest rank is lowest) and id (idlen bytes) that
     * device as "PCI bus id (GPU-uuid)", or *a = *b = -1 when every rank has
     * a device of its own.  NCCL needs the latter (op_build.c, step 6). */
    int (*shared_device)(pl_backend *be, MPI_Comm comm, int *a, int *b, char *id, size_t idlen);
    /* Collective; *ok = 1 on every rank iff every rank's halo neighbours are
     * on its own node (the condition of CUDA IPC). */
    int (*ipc_possible)(MPI_Comm comm, int n_rnb, const int *rnb, int n_snb, const int *snb, int *ok);
    /* Comm stream and events; with nccl != 0 also an NCCL communicator over
     * comm (collective then).  PL_ERR_INPUT if nccl is asked for and the
     * build has no NCCL. */
    int (*create)(pl_backend *be, int nccl, MPI_Comm comm, pl_halo_xfer **x);
    void (*destroy)(pl_halo_xfer **x);
    /* CUDA IPC set-up, collective over comm (the operator's private
     * communicator): exchanges the halo buffers' IPC handles with the
     * neighbours and maps the receivers' buffers; d_halo must be a
     * cudaMalloc base pointer; rnb, snb, scnt and soff must stay valid while
     * x lives. */
    int (*ipc_setup)(pl_halo_xfer *x, MPI_Comm comm, double *d_halo, int n_rnb, const int *rnb, const int *rcnt,
                     const int *roff, int n_snb, const int *snb, const int *scnt, const int *soff);
    /* buf[i] = src[idx[i]] on the comm stream, after the backend stream's
     * work so far: the local kernel queued next on the backend stream runs
     * beside it.  Later exchanges on the comm stream are ordered after it. */
    int (*gather_side)(pl_halo_xfer *x, size_t n, const int32_t *idx, const double *src, double *buf);
    /* Device -> pinned host, n doubles, then record the "sent" event. */
    int (*d2h_start)(pl_halo_xfer *x, double *h_dst, const double *d_src, size_t n);
    /* Host waits until the last d2h_start has completed. */
    int (*d2h_wait)(pl_halo_xfer *x);
    /* Pinned host -> device on the comm stream; the backend stream waits
     * for it (event) before anything enqueued later. */
    int (*h2d)(pl_halo_xfer *x, double *d_dst, const double *h_src, size_t n);
    /* Halo exchange through NCCL, grouped send/receive per neighbour:
     * recv i: rcnt[i] doubles from rank rnb[i] into d_halo + roff[i]; send
     * i: scnt[i] from d_send + soff[i] to snb[i].  on_comm_stream = 0: on the
     * backend stream.  1: on the comm stream after the backend stream's work
     * so far (the gather), and join makes the backend stream wait. */
    int (*nccl_exchange)(pl_halo_xfer *x, int on_comm_stream, int n_rnb, const int *rnb, const int *rcnt,
                         const int *roff, double *d_halo, int n_snb, const int *snb, const int *scnt,
                         const int *soff, const double *d_send);
    /* The backend stream waits for the comm stream's exchange. */
    int (*join)(pl_halo_xfer *x);
    /* CUDA IPC per apply, after the gather was enqueued: start (tokens,
     * first copies on the comm stream), then finish (remaining copies, wait
     * for own copies and for every sender's); afterwards the backend stream
     * may read the halo (transport.cu explains the protocol). */
    int (*ipc_start)(pl_halo_xfer *x, const double *d_send);
    int (*ipc_finish)(pl_halo_xfer *x, const double *d_send);
} pl_halo_ops;

/* kron_active.c: the couplings c[l, m] != 0 of a Kronecker-sum operator
 * (pl_kron.h), left row by left row in m order: nactive counts them;
 * active writes ptr (n_left + 1: row l's list is [ptr[l], ptr[l + 1])),
 * m and c (nactive entries).  The backends copy this list instead of c.
 * Can't fail. */
int64_t pl_kron_nactive(const pl_kron *k);
void pl_kron_active(const pl_kron *k, int64_t *ptr, int32_t *m, double *c);

/* kron_pack16.c: the right factors' tables of k packed for the CUDA kernel
 * variant 6 (spmv/cuda/kron_row.cu), stored m-major ([m n_right + r]) so
 * that consecutive right rows are consecutive words:
 *   col[m n_right + r] = lo | hi << 16, each PL_KRON_P16_NONE where -1;
 *   val[m n_right + r] = dlo | dhi << 8, indices into dict (0 where none),
 *   dict[i] (i < *ndict <= PL_KRON_P16_DICT) the distinct values of lo_val,
 *   hi_val where the column is >= 0, bitwise (so -0.0 and 0.0 differ).
 * col and val hold n_right nterms entries, dict PL_KRON_P16_DICT.  Returns
 * 1, or 0 where they do not fit: n_right >= PL_KRON_P16_NONE, or more than
 * PL_KRON_P16_DICT distinct values (col, val, dict then undefined).  Can't
 * fail otherwise. */
#define PL_KRON_P16_NONE 0xFFFFu
#define PL_KRON_P16_DICT 256
int pl_kron_pack16(const pl_kron *k, uint32_t *col, uint16_t *val, double *dict, int *ndict);

#ifdef __cplusplus
}
#endif

#endif
