/* op_kron_dist.h — what the two splits of a matrix-free operator on
 * several ranks share (op_kron_dist.c: the LEFT split, the halo counts and
 * the helpers; op_kron_right.c: the RIGHT split; op_layout.c: the vector
 * layouts).  Private to spmv/. */
#ifndef PL_OP_KRON_DIST_H
#define PL_OP_KRON_DIST_H

#include "pl_kron.h"
#include "spmv.h"
#include "op_impl.h"

/* The split of one operator (op->kdist). */
typedef struct kron_dist {
    int split;               /* PL_KRON_SPLIT_LEFT or _RIGHT                    */
    int64_t n_left, n_right; /* the whole tables' sizes                         */
    int64_t l0, l1;          /* this rank's lines of the split dimension:      */
                             /* left rows (LEFT) or right rows (RIGHT)         */
    int32_t *hmap;           /* lines of that dimension: halo line, or -1      */
    int32_t n_hrows;         /* halo lines                                     */
    int repro;               /* LEFT, pl_op_options.reproducible: every entry  */
                             /* of A in the remote list, in CSR order, reading */
                             /* [halo; x] (op->d_xext): the one-rank row sums  */
} kron_dist;

/* Owner of index c among the parts bounds[0..P] (bounds[P] > c >= 0). */
int kd_owner_of(const int64_t *bounds, int P, int64_t c);
/* The backend's copies of the local operator kl and the remote part rem
 * (none when rem has no rows): both or neither. */
int kd_tables_create(pl_backend *be, const pl_kron *kl, const pl_kron_remote *rem, void **d_kron, void **d_krem);
/* Bytes of the remote lists. */
size_t kd_rem_bytes(const pl_kron_remote *r);
/* op_kron_right.c: the RIGHT split's build (everything that needs no other
 * rank; op->kdist set) and its update (new tables, same plan). */
int pl_op_kron_right_local(pl_op *op, const pl_kron *k);
int pl_op_kron_right_update(pl_op *op, const pl_kron *k);

#endif
