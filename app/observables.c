/* observables.c — ground-state observables of the returned eigenvectors
 * (docs/models.md, "Observables"): the distributed side of hamiltonian/hh_obs.c.
 *
 * Each rank downloads its block of the nev vectors, un-permutes it into the
 * original row order of its block (a local permutation: rows never leave
 * their rank), fetches the halo rows hh_obs_halo_end asks for (the rest of
 * its last electron slice, from the next ranks) and accumulates; one
 * MPI_Allreduce sums the accumulators.  <psi|H|psi> comes from the solve's
 * operator (one SpMV per vector).  No vector is gathered on one rank. */
#define _DEFAULT_SOURCE /* posix_memalign, madvise */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "app_obs.h"
#include "pl_error.h"
#include "pl_spectrum.h"

#define OBS_MPI(call, what)                                                            \
    do {                                                                               \
        PL_CHECK_GOTO((call) == MPI_SUCCESS, PL_ERR_MPI, out, rc, "%s failed", what);  \
    } while (0)

double *app_host_big(size_t n)
{
    const size_t align = (size_t)2 << 20;
    size_t bytes = 0;
    if (pl_mul_size(n ? n : 1, sizeof(double), &bytes)) return NULL;
    bytes = (bytes + align - 1) / align * align;
    void *p = NULL;
    if (posix_memalign(&p, align, bytes)) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: 4 KiB pages work too */
#endif
    return p;
}

int app_obs_wanted(const pl_config *cfg)
{
    if (cfg->output.observables == PL_OBS_FALSE) return 0;
    return cfg->model.type == PL_MODEL_HOLSTEIN_HUBBARD;
}

int app_fetch_rows(MPI_Comm comm, int64_t row0, int64_t n, int nvec, const double *x, size_t ldx, int64_t a,
                   int64_t b, double *out, size_t ldo)
{
    int size, rank, rc = PL_OK;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    int64_t mine[2] = {row0, n}, *blk = NULL, *req = NULL, *want = NULL;
    int *sc = NULL, *sd = NULL, *rcnt = NULL, *rd = NULL;
    double *sbuf = NULL, *rbuf = NULL;
    blk = malloc(((2 * (size_t)size) + 1) * sizeof *blk);
    PL_CHECK_GOTO(blk, PL_ERR_MEM, out, rc, "out of host memory");
    req = malloc(((2 * (size_t)size) + 1) * sizeof *req);
    PL_CHECK_GOTO(req, PL_ERR_MEM, out, rc, "out of host memory");
    want = malloc(((2 * (size_t)size) + 1) * sizeof *want);
    PL_CHECK_GOTO(want, PL_ERR_MEM, out, rc, "out of host memory");
    OBS_MPI(MPI_Allgather(mine, 2, MPI_INT64_T, blk, 2, MPI_INT64_T, comm), "MPI_Allgather of the row blocks");
    /* what this rank asks of each rank: [start, start + count) of [a, b) */
    for (int q = 0; q < size; q++) {
        int64_t s = a > blk[2 * q] ? a : blk[2 * q], e = b < blk[2 * q] + blk[2 * q + 1] ? b : blk[2 * q] + blk[2 * q + 1];
        req[2 * q] = s;
        req[2 * q + 1] = e > s ? e - s : 0;
    }
    OBS_MPI(MPI_Alltoall(req, 2, MPI_INT64_T, want, 2, MPI_INT64_T, comm), "MPI_Alltoall of the halo requests");
    sc = malloc((((size_t)size) + 1) * sizeof *sc);
    PL_CHECK_GOTO(sc, PL_ERR_MEM, out, rc, "out of host memory");
    sd = malloc((((size_t)size) + 1) * sizeof *sd);
    PL_CHECK_GOTO(sd, PL_ERR_MEM, out, rc, "out of host memory");
    rcnt = malloc((((size_t)size) + 1) * sizeof *rcnt);
    PL_CHECK_GOTO(rcnt, PL_ERR_MEM, out, rc, "out of host memory");
    rd = malloc((((size_t)size) + 1) * sizeof *rd);
    PL_CHECK_GOTO(rd, PL_ERR_MEM, out, rc, "out of host memory");
    int64_t ts = 0, tr = 0;
    for (int q = 0; q < size; q++) {
        int64_t s = want[2 * q + 1] * nvec, r = req[2 * q + 1] * nvec;
        PL_CHECK_GOTO(ts + s < INT32_MAX && tr + r < INT32_MAX, PL_ERR_NOTSUP, out, rc,
                      "observables: the halo of %lld values is too large for one MPI message", (long long)(ts + s));
        sc[q] = (int)s;
        sd[q] = (int)ts;
        rcnt[q] = (int)r;
        rd[q] = (int)tr;
        ts += s;
        tr += r;
    }
    sbuf = malloc((((size_t)ts + 1) + 1) * sizeof *sbuf);
    PL_CHECK_GOTO(sbuf, PL_ERR_MEM, out, rc, "out of host memory");
    rbuf = malloc((((size_t)tr + 1) + 1) * sizeof *rbuf);
    PL_CHECK_GOTO(rbuf, PL_ERR_MEM, out, rc, "out of host memory");
    for (int q = 0; q < size; q++)
        for (int v = 0; v < nvec; v++)
            if (want[2 * q + 1] > 0)
                memcpy(sbuf + sd[q] + (size_t)v * want[2 * q + 1], x + (size_t)v * ldx + (want[2 * q] - row0),
                       (size_t)want[2 * q + 1] * sizeof *sbuf);
    OBS_MPI(MPI_Alltoallv(sbuf, sc, sd, MPI_DOUBLE, rbuf, rcnt, rd, MPI_DOUBLE, comm), "MPI_Alltoallv of the halo rows");
    for (int q = 0; q < size; q++)
        for (int v = 0; v < nvec; v++)
            if (req[2 * q + 1] > 0)
                memcpy(out + (size_t)v * ldo + (req[2 * q] - a), rbuf + rd[q] + (size_t)v * req[2 * q + 1],
                       (size_t)req[2 * q + 1] * sizeof *rbuf);
out:
    free(blk);
    free(req);
    free(want);
    free(sc);
    free(sd);
    free(rcnt);
    free(rd);
    free(sbuf);
    free(rbuf);
    return rc;
}

/* The matrix-free operator split by phonon configurations (strided rows):
 * each vector downloaded whole, then moved into the contiguous blocks
 * (pl_op_to_original: one all-to-all per vector).  Collective. */
static int vectors_strided(pl_op *op, int nvec, const double *V, size_t ld, double *out)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    pl_backend *be = pl_op_backend(op);
    int64_t o0 = 0, on = 0;
    pl_op_orig_block(op, &o0, &on);
    const size_t n = (size_t)info.n_local;
    double *tmp = NULL;
    int rc = PL_OK;
    PL_MALLOC(tmp, n + 1);
    for (int v = 0; v < nvec && rc == PL_OK; v++) {
        rc = be->download(be, tmp, V + (size_t)v * ld, n);
        int bad = rc != PL_OK, any = 0; /* every rank takes part in the move, or none */
        if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, pl_op_comm(op)) != MPI_SUCCESS) any = 1;
        if (any && rc == PL_OK) rc = PL_ERROR(PL_ERR_MPI, "downloading an eigenvector failed on another rank");
        if (rc == PL_OK) rc = pl_op_to_original(op, 1, tmp, n, out + (size_t)v * (size_t)on, (size_t)on);
    }
    free(tmp);
    PL_CALL(rc);
    return PL_OK;
}

int app_vectors_original(pl_op *op, int nvec, const double *V, size_t ld, double *out)
{
    if (pl_op_kron_split(op) == PL_KRON_SPLIT_RIGHT) return vectors_strided(op, nvec, V, ld, out);
    pl_op_info info;
    pl_op_get_info(op, &info);
    pl_backend *be = pl_op_backend(op);
    const int64_t n = info.n_local, row0 = info.row0, *gi = pl_op_global_index(op);
    /* through a page-locked staging buffer of at most 4 Mi values, chunk by
     * chunk, each scattered by all threads (a pageable download of a fresh
     * buffer runs at the speed of the page faults: 39 ms for HMEp's 50 MB
     * on the H100 host against ~3 ms pinned) */
    const size_t chunk = (size_t)(n < (INT64_C(1) << 22) ? n : (INT64_C(1) << 22));
    double *tmp = NULL;
    int pinned = 0, rc = PL_OK;
    if (be->host_alloc && chunk > 0 && be->host_alloc(be, chunk, &tmp) == PL_OK) pinned = 1;
    else {
        tmp = NULL;
        PL_MALLOC(tmp, chunk + 1);
    }
    for (int v = 0; v < nvec; v++) {
        double *o = out + (size_t)v * (size_t)n;
        for (int64_t c0 = 0; c0 < n; c0 += (int64_t)chunk) {
            const int64_t c1 = c0 + (int64_t)chunk < n ? c0 + (int64_t)chunk : n;
            PL_CALL_GOTO(be->download(be, tmp, V + (size_t)v * ld + (size_t)c0, (size_t)(c1 - c0)), out, rc);
#pragma omp parallel for schedule(static)
            for (int64_t p = c0; p < c1; p++) o[gi[p] - row0] = tmp[p - c0];
        }
    }
out:
    if (pinned) be->host_free(be, tmp);
    else free(tmp);
    return rc;
}

/* n_s(k) of the nvec vectors x (this rank's rows [row0, row0 + n),
 * original order) where momenta exist: the one-body density matrix from the
 * rows one hop away (fetched one vector at a time on several ranks: up to
 * the whole vector), summed over the ranks.  Collective. */
static int observables_nk(app_ctx *ctx, const hh_model *m, int64_t row0, int64_t n, int nvec, const double *x,
                          hh_obs *obs)
{
    const size_t S = hh_obs_onebody_size(m);
    const int L = obs->L;
    double *acc = calloc((size_t)nvec * S + 1, sizeof *acc), *buf = NULL;
    pl_exsum *ex = ctx->cfg.solver.reproducible ? calloc((size_t)nvec * S + 1, sizeof *ex) : NULL;
    int rc = PL_OK;
    PL_CHECK_GOTO(acc && (ex || !ctx->cfg.solver.reproducible), PL_ERR_MEM, out, rc,
                  "out of host memory for the momentum distribution");
    for (int v = 0; v < nvec; v++) {
        int64_t xa = 0, xb = 0;
        hh_obs_hop_range(m, row0, row0 + n, &xa, &xb);
        const double *xv = x + (size_t)v * (size_t)n;
        if (ctx->size > 1) { /* every rank fetches, even an empty range */
            free(buf);
            buf = app_host_big((size_t)(xb - xa) + 1);
            PL_CHECK_GOTO(buf, PL_ERR_MEM, out, rc, "out of host memory for the momentum distribution's rows");
            PL_CALL_GOTO(app_fetch_rows(ctx->comm, row0, n, 1, xv, (size_t)n, xa, xb, buf, (size_t)(xb - xa)), out, rc);
            xv = buf;
        } else {
            xa = row0;
        }
        if (ex)
            PL_CALL_GOTO(hh_obs_onebody_exact(m, row0, row0 + n, 1, xv, (size_t)n, xa, ex + (size_t)v * S), out, rc);
        else
            PL_CALL_GOTO(hh_obs_onebody(m, row0, row0 + n, 1, xv, (size_t)n, xa, acc + (size_t)v * S), out, rc);
    }
    if (ex) /* [solver] reproducible: exact sums over configurations, threads and ranks */
        PL_CALL_GOTO(pl_exsum_allreduce(ctx->comm, (size_t)nvec * S, ex, acc), out, rc);
    else
        PL_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, acc, (int)((size_t)nvec * S), MPI_DOUBLE, MPI_SUM, ctx->comm) ==
                          MPI_SUCCESS,
                      PL_ERR_MPI, out, rc, "MPI_Allreduce of the one-body density matrix failed");
    obs->momentum_distribution = malloc(((size_t)nvec * 2 * (size_t)L + 1) * sizeof(double));
    PL_CHECK_GOTO(obs->momentum_distribution, PL_ERR_MEM, out, rc, "out of host memory");
    hh_obs_momentum_distribution(m, nvec, acc, obs->momentum_distribution);
out:
    free(acc);
    free(ex);
    free(buf);
    return rc;
}

int app_observables(app_ctx *ctx, pl_op *op, int nvec, const double *V, size_t ld, hh_obs *obs, double *seconds)
{
    const double t0 = pl_wtime();
    memset(obs, 0, sizeof *obs);
    pl_op_info info;
    pl_op_get_info(op, &info);
    pl_backend *be = pl_op_backend(op);
    /* the host side reads contiguous blocks of original rows (pl_op_orig_block:
     * the operator's own, or the electron split's for a phonon split) */
    int64_t row0 = 0, n = 0;
    pl_op_orig_block(op, &row0, &n);
    const int64_t nl = info.n_local, r1 = row0 + n;
    hh_model *m = NULL;
    double *x = NULL, *halo = NULL, *acc = NULL, *eh = NULL, *y = NULL;
    pl_exsum *ex = NULL;
    int rc = PL_OK;
    hh_params hp;
    app_hh_params(&ctx->cfg.model, &hp);
    PL_CALL_GOTO(hh_model_create(&hp, &m), out, rc);
    const double t_m = pl_wtime();
    /* <psi|H|psi> on the backend */
    eh = malloc((((size_t)nvec + 1) + 1) * sizeof *eh);
    PL_CHECK_GOTO(eh, PL_ERR_MEM, out, rc, "out of host memory");
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)nl + 1, &y), out, rc);
    for (int v = 0; v < nvec; v++) {
        PL_CALL_GOTO(pl_op_apply(op, V + (size_t)v * ld, y), out, rc);
        PL_CALL_GOTO(pl_vec_dot(op, V + (size_t)v * ld, y, &eh[v]), out, rc);
    }
    const double t_h = pl_wtime();
    x = app_host_big((size_t)nvec * (size_t)n + 1);
    PL_CHECK_GOTO(x, PL_ERR_MEM, out, rc, "out of host memory");
    PL_CALL_GOTO(app_vectors_original(op, nvec, V, ld, x), out, rc);
    const double t_d = pl_wtime();
    /* the halo: every rank takes part in the exchange, even with none */
    const int64_t h1 = hh_obs_halo_end(m, row0, r1), nh = h1 - r1;
    halo = malloc((((size_t)nvec * (size_t)nh + 1) + 1) * sizeof *halo);
    PL_CHECK_GOTO(halo, PL_ERR_MEM, out, rc, "out of host memory");
    PL_CALL_GOTO(app_fetch_rows(ctx->comm, row0, n, nvec, x, (size_t)n, r1, h1, halo, (size_t)nh), out, rc);
    const size_t S = hh_obs_acc_size(m);
    acc = calloc((size_t)nvec * S + 1, sizeof *acc);
    PL_CHECK_GOTO(acc, PL_ERR_MEM, out, rc, "out of host memory for the observables");
    const double t_a = pl_wtime();
    if (ctx->cfg.solver.reproducible) { /* exact sums: the same on any split of whole configurations */
        ex = calloc((size_t)nvec * S + 1, sizeof *ex);
        PL_CHECK_GOTO(ex, PL_ERR_MEM, out, rc, "out of host memory for the observables");
        PL_CALL_GOTO(hh_obs_accumulate_exact(m, row0, r1, nvec, x, (size_t)n, halo, (size_t)(nh > 0 ? nh : 1), ex),
                     out, rc);
    } else {
        PL_CALL_GOTO(hh_obs_accumulate(m, row0, r1, nvec, x, (size_t)n, halo, (size_t)(nh > 0 ? nh : 1), acc), out,
                     rc);
    }
    const double t_s = pl_wtime();
    if (ex)
        PL_CALL_GOTO(pl_exsum_allreduce(ctx->comm, (size_t)nvec * S, ex, acc), out, rc);
    else
        PL_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, acc, (int)((size_t)nvec * S), MPI_DOUBLE, MPI_SUM, ctx->comm) ==
                          MPI_SUCCESS,
                      PL_ERR_MPI, out, rc, "MPI_Allreduce of the observables failed");
    PL_CALL_GOTO(hh_obs_finish(m, nvec, acc, eh, obs), out, rc);
    const double t_f = pl_wtime();
    if (obs->periodic) PL_CALL_GOTO(observables_nk(ctx, m, row0, n, nvec, x, obs), out, rc);
    pl_debug("observables: model %.3f s, <H> %.3f s, download + un-permute %.3f s, halo %.3f s, sums %.3f s, reduction %.3f s, "
             "n(k) %.3f s",
             t_m - t0, t_h - t_m, t_d - t_h, t_a - t_d, t_s - t_a, t_f - t_s, pl_wtime() - t_f);
out:
    if (y) be->vec_free(be, y);
    free(x);
    free(halo);
    free(acc);
    free(ex);
    free(eh);
    hh_model_destroy(&m);
    if (seconds) *seconds = app_max_over_ranks(ctx, pl_wtime() - t0);
    return rc;
}

int app_obs_write(void *arg, pl_spectrum *sp)
{
    const app_obs_out *ao = arg;
    if (!ao || !ao->obs.buf) return PL_OK;
    const hh_obs *o = &ao->obs;
    PL_CALL(pl_spectrum_attr_double(sp, "observables_seconds", ao->seconds));
    const char *g = "observables";
    const int64_t nv = o->nvec, L = o->L;
    const int64_t d1[1] = {nv}, dd[2] = {nv, (int64_t)o->M + 1}, dr[2] = {nv, L}, dm[3] = {nv, L, L};
    PL_CALL(pl_spectrum_write_array(sp, g, "energy_kinetic", 1, d1, o->energy_kinetic));
    PL_CALL(pl_spectrum_write_array(sp, g, "energy_hubbard", 1, d1, o->energy_hubbard));
    PL_CALL(pl_spectrum_write_array(sp, g, "energy_phonon", 1, d1, o->energy_phonon));
    PL_CALL(pl_spectrum_write_array(sp, g, "energy_coupling", 1, d1, o->energy_coupling));
    PL_CALL(pl_spectrum_write_array(sp, g, "energy_expectation", 1, d1, o->energy_total));
    PL_CALL(pl_spectrum_write_array(sp, g, "double_occupancy", 1, d1, o->double_occupancy));
    PL_CALL(pl_spectrum_write_array(sp, g, "phonon_number", 1, d1, o->phonon_number));
    PL_CALL(pl_spectrum_write_array(sp, g, "norm", 1, d1, o->norm));
    PL_CALL(pl_spectrum_write_array(sp, g, "phonon_distribution", 2, dd, o->phonon_distribution));
    if (o->periodic) {
        PL_CALL(pl_spectrum_write_array(sp, g, "density_correlation", 2, dr, o->density_r));
        PL_CALL(pl_spectrum_write_array(sp, g, "spin_correlation", 2, dr, o->spin_r));
        PL_CALL(pl_spectrum_write_array(sp, g, "electron_phonon_correlation", 2, dr, o->electron_phonon_r));
    } else {
        PL_CALL(pl_spectrum_write_array(sp, g, "density_correlation", 3, dm, o->density_correlation));
        PL_CALL(pl_spectrum_write_array(sp, g, "spin_correlation", 3, dm, o->spin_correlation));
        PL_CALL(pl_spectrum_write_array(sp, g, "electron_phonon_correlation", 3, dm, o->electron_phonon_correlation));
    }
    if (o->momentum_distribution) {
        const int64_t dk[3] = {nv, 2, L};
        PL_CALL(pl_spectrum_write_array(sp, g, "momentum_distribution", 3, dk, o->momentum_distribution));
    }
    const char *how = o->periodic ? "periodic: C[r] = (1/L) sum_i <A_i B_(i+r mod L)>, r = 0..L-1"
                                  : "open: C[i][j] = <A_i B_j>, i, j = 0..L-1";
    if (o->lattice != HH_LATTICE_CHAIN) /* docs/models.md "Lattices" */
        how = o->periodic ? "translations: C[r] = (1/L) sum_i <A_i B_(i+r)>, r = rx + lx ry, i + r the site "
                            "(x + rx mod lx, y + ry mod ly)"
                          : "no translation symmetry: C[i][j] = <A_i B_j>, i, j = 0..L-1";
    PL_CALL(pl_spectrum_group_attr_string(sp, g, "correlations", how));
    if (o->lattice != HH_LATTICE_CHAIN) {
        PL_CALL(pl_spectrum_group_attr_string(sp, g, "lattice", hh_lattice_kind_name(o->lattice)));
        PL_CALL(pl_spectrum_group_attr_double(sp, g, "lx", (double)o->lx)); /* 0: lattice = bonds */
        PL_CALL(pl_spectrum_group_attr_double(sp, g, "ly", (double)o->ly));
    }
    return PL_OK;
}
