/* spmv_impl.h — internals of spmv/ shared by its own files (pjds.c, op.c,
 * cpu/, cuda/).  Never included from another folder.
 *
 * Contents: an MPI return-code macro, a host reference pJDS SpMV (the oracle
 * the CUDA tests compare against), byte size of a pJDS, and the pJDS
 * layout helpers.
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

/* ---- GPU halo transfers (spmv/cuda/transport.cu; stubs returning
 * PL_ERR_NOTSUP in cuda_stub.c without CUDA) ----------------------------
 * What op.c needs on the cuda backend beyond the pl_backend table: copies
 * between device and pinned host buffers that do not synchronise, events to
 * order the backend's stream, a second ("comm") stream, and NCCL.
 * Everything is enqueued on the backend's stream unless said otherwise. */
typedef struct pl_gpu_xfer pl_gpu_xfer;
/* Create for the cuda backend `be`: comm stream and events; with nccl != 0
 * also an NCCL communicator over `comm` (ncclGetUniqueId on rank 0,
 * MPI_Bcast, ncclCommInitRank; NCCL_NVLS_ENABLE=0 unless set).  Collective
 * over comm when nccl != 0.  PL_ERR_INPUT if nccl is asked for and the
 * build has no NCCL. */
int pl_gpu_xfer_create(pl_backend *be, int nccl, MPI_Comm comm, pl_gpu_xfer **x);
void pl_gpu_xfer_destroy(pl_gpu_xfer **x);
/* Device -> pinned host, n doubles, then record the "sent" event. */
int pl_gpu_d2h_async(pl_gpu_xfer *x, double *h_dst, const double *d_src, size_t n);
/* Host waits until the last pl_gpu_d2h_async has completed. */
int pl_gpu_d2h_wait(pl_gpu_xfer *x);
/* Pinned host -> device on the comm stream; the backend stream waits for
 * it (event) before anything enqueued later. */
int pl_gpu_h2d_async(pl_gpu_xfer *x, double *d_dst, const double *h_src, size_t n);
/* Halo exchange through NCCL, grouped ncclSend/ncclRecv per neighbour:
 * recv i: rcnt[i] doubles from rank rnb[i] into d_halo + roff[i]; send i:
 * scnt[i] from d_send + soff[i] to snb[i].  on_comm_stream = 0: on the
 * backend stream.  1: on the comm stream after the backend stream's work
 * so far (the gather), and pl_gpu_join makes the backend stream wait. */
int pl_gpu_nccl_exchange(pl_gpu_xfer *x, int on_comm_stream, int n_rnb, const int *rnb, const int *rcnt,
                         const int *roff, double *d_halo, int n_snb, const int *snb, const int *scnt,
                         const int *soff, const double *d_send);
/* The backend stream waits for the comm stream's exchange. */
int pl_gpu_join(pl_gpu_xfer *x);
/* buf[i] = src[idx[i]] on the comm stream, after the backend stream's work
 * so far: the local kernel queued next on the backend stream runs beside
 * it.  Later exchanges on the comm stream are ordered after it. */
int pl_gpu_gather_side(pl_gpu_xfer *x, size_t n, const int32_t *idx, const double *src, double *buf);
/* CUDA IPC transport (transport.cu explains the protocol).  possible:
 * collective; *ok = 1 on every rank iff every rank's halo neighbours are on
 * its own node.  setup: collective over comm (the operator's private
 * communicator): exchanges the halo buffers' IPC handles with the
 * neighbours and maps the receivers' buffers; d_halo must be a cudaMalloc
 * base pointer; rnb, snb, scnt and soff must stay valid while x lives.
 * Per apply, after the gather was enqueued: start (tokens, first copies on
 * the comm stream), then finish (remaining copies, wait for own copies and
 * for every sender's); afterwards the backend stream may read the halo. */
int pl_gpu_ipc_possible(MPI_Comm comm, int n_rnb, const int *rnb, int n_snb, const int *snb, int *ok);
int pl_gpu_ipc_setup(pl_gpu_xfer *x, MPI_Comm comm, double *d_halo, int n_rnb, const int *rnb, const int *rcnt,
                     const int *roff, int n_snb, const int *snb, const int *scnt, const int *soff);
int pl_gpu_ipc_start(pl_gpu_xfer *x, const double *d_send);
int pl_gpu_ipc_finish(pl_gpu_xfer *x, const double *d_send);
/* Do ranks of comm share a GPU?  Collective over comm (the ranks allgather
 * their cuda backend's device UUID); every rank gets the same answer:
 * *a < *b the two lowest ranks on one GPU (of the GPU whose lowest rank is
 * lowest) and id (idlen bytes) that GPU as "PCI bus id (GPU-uuid)", or
 * *a = *b = -1 when every rank has a GPU of its own.  NCCL needs the latter
 * (op_build.c, step 6). */
int pl_gpu_shared_device(pl_backend *be, MPI_Comm comm, int *a, int *b, char *id, size_t idlen);

#ifdef __cplusplus
}
#endif

#endif
