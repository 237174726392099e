/* op_layout.c — host vectors between an operator's local order and
 * contiguous blocks of original rows (pl_op_orig_block, pl_op_to_original,
 * pl_op_from_original; spmv.h).
 *
 * Every operator but the RIGHT split of a matrix-free one (op_kron_right.c)
 * holds one contiguous block of original rows [row0, row0 + n_local) in
 * some permutation (pJDS sorts rows inside the block): there the move is
 * the local scatter by pl_op_global_index.  The RIGHT split's rows l
 * n_right + r (r in its phonon block, every l) are strided; the target is
 * then the block of the LEFT split (L_q n_right, (L_q+1 - L_q) n_right), so
 * that whatever reads vectors by contiguous global rows (eigenvector
 * output, observables, checkpoints) sees the layout it sees with the LEFT
 * split.  The move: each local row goes to the owner of its global row
 * (owners by binary search over the target bounds, computed from the
 * tables' sizes alike on every rank), the global indices once by
 * MPI_Alltoallv, then each vector's values by one MPI_Alltoallv; the
 * inverse sends them back along the same plan.  Memory: 8 B per local row
 * for the indices on both sides, 16 B per row of value buffers. */
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "op_impl.h"
#include "op_kron_dist.h"

static int strided(const pl_op *op)
{
    const kron_dist *kd = op->kdist;
    return kd && kd->split == PL_KRON_SPLIT_RIGHT;
}

void pl_op_orig_block(const pl_op *op, int64_t *row0, int64_t *n)
{
    if (!strided(op)) {
        *row0 = op->row0;
        *n = op->n;
        return;
    }
    const kron_dist *kd = op->kdist;
    const int64_t a = pl_op_part(kd->n_left, op->rank, op->size), b = pl_op_part(kd->n_left, op->rank + 1, op->size);
    *row0 = a * kd->n_right;
    *n = (b - a) * kd->n_right;
}

/* The plan of the move: this rank's rows in send order (sp[n]), counts and
 * displacements per rank (sc, sd: sent; rc, rd: received), the global
 * indices received (ri[total received]). */
typedef struct lay_plan {
    int P;
    int32_t *sp;
    int *sc, *sd, *rc, *rd;
    int64_t *ri, nrecv;
    double *sbuf, *rbuf;
} lay_plan;

static void plan_free(lay_plan *p)
{
    free(p->sp);
    free(p->sc);
    free(p->sd);
    free(p->rc);
    free(p->rd);
    free(p->ri);
    free(p->sbuf);
    free(p->rbuf);
    memset(p, 0, sizeof *p);
}

static int plan_make(const pl_op *op, lay_plan *p)
{
    const kron_dist *kd = op->kdist;
    const int P = op->size;
    const int64_t n = op->n, nr = kd->n_right, *gi = op->gidx;
    int64_t *b = NULL, *sg = NULL;
    int32_t *dst = NULL;
    int rc = PL_OK;
    memset(p, 0, sizeof *p);
    p->P = P;
    PL_MALLOC(b, P + 1);
    for (int q = 0; q <= P; q++) b[q] = pl_op_part(kd->n_left, q, P);
    p->sp = malloc((size_t)(n + 1) * sizeof *p->sp);
    dst = malloc((size_t)(n + 1) * sizeof *dst);
    sg = malloc((size_t)(n + 1) * sizeof *sg);
    p->sc = calloc((size_t)P, sizeof *p->sc);
    p->sd = calloc((size_t)P + 1, sizeof *p->sd);
    p->rc = calloc((size_t)P, sizeof *p->rc);
    p->rd = calloc((size_t)P + 1, sizeof *p->rd);
    PL_CHECK_GOTO(p->sp && dst && sg && p->sc && p->sd && p->rc && p->rd, PL_ERR_MEM, out, rc,
                  "out of host memory for the vector layout");
    for (int64_t i = 0; i < n; i++) {
        dst[i] = kd_owner_of(b, P, gi[i] / nr);
        p->sc[dst[i]]++;
    }
    for (int q = 0; q < P; q++) p->sd[q + 1] = p->sd[q] + p->sc[q];
    {
        int *pos = p->rd; /* scratch: the next slot per rank */
        for (int q = 0; q < P; q++) pos[q] = p->sd[q];
        for (int64_t i = 0; i < n; i++) p->sp[pos[dst[i]]++] = (int32_t)i;
    }
    for (int64_t s = 0; s < n; s++) sg[s] = gi[p->sp[s]];
    PL_CHECK_GOTO(MPI_Alltoall(p->sc, 1, MPI_INT, p->rc, 1, MPI_INT, op->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc,
                  "MPI_Alltoall of the layout counts failed");
    p->rd[0] = 0;
    for (int q = 0; q < P; q++) p->rd[q + 1] = p->rd[q] + p->rc[q];
    p->nrecv = p->rd[P];
    p->ri = malloc((size_t)(p->nrecv + 1) * sizeof *p->ri);
    p->sbuf = malloc((size_t)(n + p->nrecv + 1) * sizeof *p->sbuf);
    p->rbuf = malloc((size_t)(n + p->nrecv + 1) * sizeof *p->rbuf);
    PL_CHECK_GOTO(p->ri && p->sbuf && p->rbuf, PL_ERR_MEM, out, rc, "out of host memory for the vector layout");
    PL_CHECK_GOTO(MPI_Alltoallv(sg, p->sc, p->sd, MPI_INT64_T, p->ri, p->rc, p->rd, MPI_INT64_T, op->comm) ==
                      MPI_SUCCESS,
                  PL_ERR_MPI, out, rc, "MPI_Alltoallv of the global rows failed");
out:
    free(b);
    free(dst);
    free(sg);
    if (rc != PL_OK) plan_free(p);
    return rc;
}

int pl_op_to_original(pl_op *op, int nvec, const double *in, size_t ldi, double *out, size_t ldo)
{
    const int64_t n = op->n, *gi = op->gidx;
    int64_t row0 = 0, no = 0;
    pl_op_orig_block(op, &row0, &no);
    if (!strided(op)) {
        for (int v = 0; v < nvec; v++) {
            const double *x = in + (size_t)v * ldi;
            double *o = out + (size_t)v * ldo;
#pragma omp parallel for schedule(static)
            for (int64_t p = 0; p < n; p++) o[gi[p] - row0] = x[p];
        }
        return PL_OK;
    }
    lay_plan p;
    PL_CALL(plan_make(op, &p));
    int rc = PL_OK;
    for (int v = 0; v < nvec && rc == PL_OK; v++) {
        const double *x = in + (size_t)v * ldi;
        double *o = out + (size_t)v * ldo;
        for (int64_t s = 0; s < n; s++) p.sbuf[s] = x[p.sp[s]];
        if (MPI_Alltoallv(p.sbuf, p.sc, p.sd, MPI_DOUBLE, p.rbuf, p.rc, p.rd, MPI_DOUBLE, op->comm) != MPI_SUCCESS)
            rc = PL_ERROR(PL_ERR_MPI, "MPI_Alltoallv of a vector failed");
        for (int64_t s = 0; rc == PL_OK && s < p.nrecv; s++) o[p.ri[s] - row0] = p.rbuf[s];
    }
    plan_free(&p);
    return rc;
}

int pl_op_from_original(pl_op *op, int nvec, const double *in, size_t ldi, double *out, size_t ldo)
{
    const int64_t n = op->n, *gi = op->gidx;
    int64_t row0 = 0, no = 0;
    pl_op_orig_block(op, &row0, &no);
    if (!strided(op)) {
        for (int v = 0; v < nvec; v++) {
            const double *x = in + (size_t)v * ldi;
            double *o = out + (size_t)v * ldo;
#pragma omp parallel for schedule(static)
            for (int64_t p = 0; p < n; p++) o[p] = x[gi[p] - row0];
        }
        return PL_OK;
    }
    lay_plan p;
    PL_CALL(plan_make(op, &p));
    int rc = PL_OK;
    for (int v = 0; v < nvec && rc == PL_OK; v++) {
        const double *x = in + (size_t)v * ldi;
        double *o = out + (size_t)v * ldo;
        for (int64_t s = 0; s < p.nrecv; s++) p.rbuf[s] = x[p.ri[s] - row0];
        if (MPI_Alltoallv(p.rbuf, p.rc, p.rd, MPI_DOUBLE, p.sbuf, p.sc, p.sd, MPI_DOUBLE, op->comm) != MPI_SUCCESS)
            rc = PL_ERROR(PL_ERR_MPI, "MPI_Alltoallv of a vector failed");
        for (int64_t s = 0; rc == PL_OK && s < n; s++) o[p.sp[s]] = p.sbuf[s];
    }
    plan_free(&p);
    return rc;
}
