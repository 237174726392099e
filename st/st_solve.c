/* st_solve.c — the eigensolver on a spectral transformation and the way
 * back (st.h pl_st_solve): lz_solve (with a B: in the B-inner product,
 * lz_options inner_b) or ks_solve with largest_magnitude on
 * the operator, then for every Ritz pair the eigenvalue of A x = lambda B x
 * (sigma + 1/theta for a real shift, theta for B-inverse, the Rayleigh
 * quotient x^H A x / x^H B x for a complex shift), the residual
 * ||A x - lambda B x|| on the original problem, and the order of `which`
 * with the conjugate pairs kept together (a pair is one unit; the member
 * with the positive imaginary part first, as lz_result's column layout
 * wants: Re x, Im x). */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "st_impl.h"

typedef struct unit {
    int first, size; /* result columns [first, first + size) */
    double key;      /* smaller = wanted first */
} unit;

/* The products and dots of one eigenvector x = xr + i xi (xi NULL: real):
 * lambda by the Rayleigh quotient (rq) and ||A x - lambda B x|| / ||x||. */
typedef struct vec_work {
    double *axr, *axi, *bxr, *bxi;
} vec_work;

static int products(pl_st *s, const double *x, double *ax, double *bx)
{
    PL_CALL(st_gather(s, x, s->xfull));
    st_csr_mul(s->A, s->xfull, ax);
    st_csr_mul(s->B, s->xfull, bx);
    return PL_OK;
}

static int eig_and_residual(pl_st *s, const double *xr, const double *xi, vec_work *w, int rq, double complex *lam,
                            double *resid)
{
    const int64_t n = s->nloc;
    PL_CALL(products(s, xr, w->axr, w->bxr));
    if (xi) PL_CALL(products(s, xi, w->axi, w->bxi));
    else {
        memset(w->axi, 0, (size_t)n * sizeof *w->axi);
        memset(w->bxi, 0, (size_t)n * sizeof *w->bxi);
    }
    double d[8] = {0};
    for (int64_t i = 0; i < n; i++) {
        const double r = xr[i], m = xi ? xi[i] : 0.0;
        d[0] += r * w->axr[i] + m * w->axi[i];
        d[1] += r * w->axi[i] - m * w->axr[i];
        d[2] += r * w->bxr[i] + m * w->bxi[i];
        d[3] += r * w->bxi[i] - m * w->bxr[i];
        d[4] += r * r + m * m;
    }
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, d, 5, MPI_DOUBLE, MPI_SUM, s->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce of the Rayleigh quotient failed");
    if (rq) *lam = (d[0] + I * d[1]) / (d[2] + I * d[3]);
    const double lr = creal(*lam), li = cimag(*lam);
    double r2 = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double a = w->axr[i] - lr * w->bxr[i] + li * w->bxi[i];
        const double b = w->axi[i] - lr * w->bxi[i] - li * w->bxr[i];
        r2 += a * a + b * b;
    }
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, &r2, 1, MPI_DOUBLE, MPI_SUM, s->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce of the residual failed");
    *resid = sqrt(r2) / (d[4] > 0 ? sqrt(d[4]) : 1.0);
    return PL_OK;
}

/* the eigenvalue of theta without the eigenvector: sigma + 1/theta, or theta */
static double complex map_theta(const pl_st *s, double complex th)
{
    if (s->kind == PL_ST_B_INVERT) return th;
    return s->sre + 1.0 / th; /* real sigma (a complex one uses the Rayleigh quotient) */
}

static double unit_key(const pl_st *s, int which, double complex l)
{
    const double complex sg = s->sre + I * s->sim;
    switch (which) {
    case PL_WHICH_NEAREST: return cabs(l - sg);
    case PL_WHICH_NEAREST_REAL: return fabs(creal(l) - s->sre);
    case PL_WHICH_NEAREST_IMAGINARY: return fabs(cimag(l) - s->sim);
    case PL_WHICH_SMALLEST:
    case PL_WHICH_SMALLEST_REAL: return creal(l);
    case PL_WHICH_LARGEST:
    case PL_WHICH_LARGEST_REAL: return -creal(l);
    case PL_WHICH_LARGEST_MAGNITUDE: return -cabs(l);
    case PL_WHICH_LARGEST_IMAGINARY: return -fabs(cimag(l));
    default: return cabs(l - sg);
    }
}

/* Host copies of the m result columns (ld = nloc). */
static int host_vectors(pl_st *s, const lz_result *res, int m, double **hv)
{
    const size_t n = (size_t)s->nloc * (s->cplx ? 2 : 1);
    PL_MALLOC(*hv, n * (size_t)m + 1);
    for (int j = 0; j < m; j++) {
        if (s->be->host_memory) memcpy(*hv + j * n, res->vectors + j * res->ld, n * sizeof **hv);
        else PL_CALL(s->be->download(s->be, *hv + j * n, res->vectors + j * res->ld, n));
    }
    return PL_OK;
}

/* Every pair's eigenvalue, residual and unit (the conjugate member with
 * Im > 0 first: a Rayleigh quotient with Im < 0 conjugates the vector). */
static int recover(pl_st *s, lz_result *res, int m, double *hv, double complex *lam, double *rs, unit *u, int *nu,
                   int which)
{
    const size_t n = (size_t)s->nloc;
    const int rq = 0;
    vec_work w = {0};
    int rc = PL_OK;
    w.axr = malloc((n + 1) * sizeof *w.axr);
    w.axi = malloc((n + 1) * sizeof *w.axi);
    w.bxr = malloc((n + 1) * sizeof *w.bxr);
    w.bxi = malloc((n + 1) * sizeof *w.bxi);
    PL_CHECK_GOTO(w.axr && w.axi && w.bxr && w.bxi, PL_ERR_MEM, out, rc, "out of host memory");
    *nu = 0;
    for (int i = 0; i < m;) {
        const double tim = res->eigenvalues_imag ? res->eigenvalues_imag[i] : 0.0;
        const int pair = tim > 0 && i + 1 < m;
        double *xr = hv + (size_t)i * n, *xi = pair ? hv + (size_t)(i + 1) * n : NULL;
        double complex l = map_theta(s, res->eigenvalues[i] + I * tim);
        PL_CALL_GOTO(eig_and_residual(s, xr, xi, &w, rq, &l, &rs[i]), out, rc);
        if (pair && cimag(l) < 0) { /* store x-bar = Re x - i Im x: its eigenvalue conj(l) first */
            for (size_t k = 0; k < n; k++) xi[k] = -xi[k];
            l = conj(l);
        }
        lam[i] = l;
        if (pair) {
            lam[i + 1] = conj(l);
            rs[i + 1] = rs[i];
        }
        const double k0 = unit_key(s, which, l), k1 = pair ? unit_key(s, which, conj(l)) : k0;
        u[(*nu)++] = (unit){i, pair ? 2 : 1, k0 < k1 ? k0 : k1};
        i += pair ? 2 : 1;
    }
out:
    free(w.axr);
    free(w.axi);
    free(w.bxr);
    free(w.bxi);
    return rc;
}

/* 1 when z = zr + i zi is parallel to y = yr + i yi or to its conjugate
 * (|y^H z| or |y^T z| > 0.99 ||y|| ||z||): the same eigenvector met twice,
 * not a second one of a multiple eigenvalue.  Collective. */
static int parallel(const pl_st *s, const double *zr, const double *zi, const double *yr, const double *yi)
{
    double d[6] = {0};
    for (int64_t k = 0; k < s->nloc; k++) {
        const double b = yi ? yi[k] : 0.0;
        d[0] += yr[k] * zr[k] + b * zi[k]; /* y^H z */
        d[1] += yr[k] * zi[k] - b * zr[k];
        d[2] += yr[k] * zr[k] - b * zi[k]; /* y^T z */
        d[3] += yr[k] * zi[k] + b * zr[k];
        d[4] += yr[k] * yr[k] + b * b;
        d[5] += zr[k] * zr[k] + zi[k] * zi[k];
    }
    MPI_Allreduce(MPI_IN_PLACE, d, 6, MPI_DOUBLE, MPI_SUM, s->comm);
    const double lim = 0.99 * sqrt(d[4] * d[5]);
    return hypot(d[0], d[1]) > lim || hypot(d[2], d[3]) > lim;
}

/* A complex sigma: the operator is the real form R of T = (A - sigma B)^{-1} B on
 * w = [w1; w2]; R w = theta w gives T z+ = theta z+ (z+ = w1 + i w2: lambda =
 * sigma + 1/theta) and conj(T) z- = theta z- (z- = w1 - i w2: lambda = conj
 * sigma + 1/theta); the larger of z+, z- is the eigenvector.  R's
 * eigenvalues are 1/(lambda - sigma) and 1/(lambda - conj sigma): its
 * largest are the lambda nearest sigma and their conjugates.  Each pair of
 * R gives lambda and its conjugate (one unit; a real lambda once, its
 * vector rotated real); a unit whose lambda and eigenvector an earlier one
 * holds (the same pair met through the other set) is dropped.  hz: N-row output columns. */
static int recover_cplx(pl_st *s, lz_result *res, int m, const double *hv, double *hz, double complex *lam, double *rs,
                        unit *u, int *nu, int which)
{
    const size_t n = (size_t)s->nloc, n2 = 2 * n;
    vec_work w = {0};
    int rc = PL_OK, col = 0;
    w.axr = malloc((n + 1) * sizeof *w.axr);
    w.axi = malloc((n + 1) * sizeof *w.axi);
    w.bxr = malloc((n + 1) * sizeof *w.bxr);
    w.bxi = malloc((n + 1) * sizeof *w.bxi);
    PL_CHECK_GOTO(w.axr && w.axi && w.bxr && w.bxi, PL_ERR_MEM, out, rc, "out of host memory");
    *nu = 0;
    for (int i = 0; i < m;) {
        const double tim = res->eigenvalues_imag[i];
        const int pair = tim > 0 && i + 1 < m;
        const double *wr = hv + (size_t)i * n2, *wi = pair ? hv + (size_t)(i + 1) * n2 : NULL;
        const double complex th = res->eigenvalues[i] + I * tim;
        double *zr = hz + (size_t)col * n, *zi = hz + (size_t)(col + 1) * n;
        double np = 0.0, nm = 0.0;
        for (size_t k = 0; k < n; k++) { /* z+- = (Re w1 -+ Im w2) + i (Im w1 +- Re w2) */
            const double a = wr[k], b = wi ? wi[k] : 0.0, c = wr[n + k], d = wi ? wi[n + k] : 0.0;
            np += (a - d) * (a - d) + (b + c) * (b + c);
            nm += (a + d) * (a + d) + (b - c) * (b - c);
        }
        MPI_Allreduce(MPI_IN_PLACE, &np, 1, MPI_DOUBLE, MPI_SUM, s->comm);
        MPI_Allreduce(MPI_IN_PLACE, &nm, 1, MPI_DOUBLE, MPI_SUM, s->comm);
        const double sg = np >= nm ? 1.0 : -1.0;
        for (size_t k = 0; k < n; k++) {
            const double a = wr[k], b = wi ? wi[k] : 0.0, c = wr[n + k], d = wi ? wi[n + k] : 0.0;
            zr[k] = a - sg * d;
            zi[k] = b + sg * c;
        }
        double complex l = (sg > 0 ? s->sre + I * s->sim : s->sre - I * s->sim) + 1.0 / th;
        i += pair ? 2 : 1;
        int dup = 0;
        for (int a = 0; a < *nu && !dup; a++) {
            const double complex p = lam[u[a].first];
            if (cabs(l - p) > 1e-8 * fmax(cabs(p), 1.0) && cabs(l - conj(p)) > 1e-8 * fmax(cabs(p), 1.0)) continue;
            dup = parallel(s, zr, zi, hz + (size_t)u[a].first * n, u[a].size == 2 ? hz + (size_t)(u[a].first + 1) * n
                                                                                   : NULL);
        }
        if (dup) continue;
        const int real = fabs(cimag(l)) <= 1e-10 * fmax(cabs(l), 1.0);
        if (real) { /* z = e^{i phi} x: rotate by phi = arg(z^T z) / 2 into zr */
            double q[2] = {0, 0};
            for (size_t k = 0; k < n; k++) q[0] += zr[k] * zr[k] - zi[k] * zi[k], q[1] += 2 * zr[k] * zi[k];
            MPI_Allreduce(MPI_IN_PLACE, q, 2, MPI_DOUBLE, MPI_SUM, s->comm);
            const double ph = 0.5 * atan2(q[1], q[0]), cs = cos(ph), sn = sin(ph);
            for (size_t k = 0; k < n; k++) zr[k] = cs * zr[k] + sn * zi[k];
            l = creal(l);
        }
        PL_CALL_GOTO(eig_and_residual(s, zr, real ? NULL : zi, &w, 0, &l, &rs[col]), out, rc);
        if (!real && cimag(l) < 0) { /* the member with Im > 0 first: conj(z) */
            for (size_t k = 0; k < n; k++) zi[k] = -zi[k];
            l = conj(l);
        }
        lam[col] = l;
        if (!real) {
            lam[col + 1] = conj(l);
            rs[col + 1] = rs[col];
        }
        const double k0 = unit_key(s, which, l), k1 = real ? k0 : unit_key(s, which, conj(l));
        u[(*nu)++] = (unit){col, real ? 1 : 2, k0 < k1 ? k0 : k1};
        col += real ? 1 : 2;
    }
out:
    free(w.axr);
    free(w.axi);
    free(w.bxr);
    free(w.bxi);
    return rc;
}

/* Sort the units (stable insertion sort: a few dozen) and write the first
 * units holding nev eigenvalues (nev + 1 with a pair at the end) back
 * into res. */
static int reorder(pl_st *s, lz_result *res, int nev, const double *hv, const double complex *lam, const double *rs,
                   unit *u, int nu, double tol)
{
    for (int a = 1; a < nu; a++) {
        unit t = u[a];
        int b = a - 1;
        for (; b >= 0 && u[b].key > t.key; b--) u[b + 1] = u[b];
        u[b + 1] = t;
    }
    const size_t n = (size_t)s->nloc;
    /* a complex sigma: a pair is wanted for its member nearest sigma and counts
     * once; its conjugate comes with it (between nev and 2 nev values) */
    int cnt = 0, nconv = 0;
    for (int a = 0, wanted = 0; a < nu && (s->cplx ? wanted : cnt) < nev; a++, wanted++)
        for (int j = 0; j < u[a].size; j++, cnt++) {
            const int src = u[a].first + j;
            res->eigenvalues[cnt] = creal(lam[src]);
            res->eigenvalues_imag[cnt] = cimag(lam[src]);
            res->residuals[cnt] = rs[src];
            const double scale = s->anorm + cabs(lam[src]) * s->bnorm;
            nconv += rs[src] <= tol * (scale > 0 ? scale : 1.0);
            if (s->be->host_memory) memcpy(res->vectors + (size_t)cnt * res->ld, hv + (size_t)src * n, n * sizeof *hv);
            else PL_CALL(s->be->upload(s->be, res->vectors + (size_t)cnt * res->ld, hv + (size_t)src * n, n));
        }
    res->nev = cnt;
    res->nconv = nconv;
    return PL_OK;
}

int pl_st_solve(pl_st *s, const lz_options *opt, int which, int method, lz_result *res)
{
    lz_options o = *opt;
    const int si = s->kind == PL_ST_SHIFT_INVERT, nev = opt->nev;
    PL_CHECK(si || which < PL_WHICH_NEAREST, PL_ERR_INPUT, "which: nearest needs a target (shift-and-invert)");
    PL_CHECK(method == PL_METHOD_KRYLOV_SCHUR || (!s->cplx && s->sym), PL_ERR_ARG,
             "pl_st_solve: Lanczos needs a self-adjoint operator (a symmetric A and B, a real shift)");
    if (si && which != PL_WHICH_NEAREST) { /* another order: among more eigenvalues nearest sigma */
        o.nev = 2 * nev > nev + 6 ? 2 * nev : nev + 6;
        if (o.nev > s->n - 2) o.nev = (int)(s->n - 2) > nev ? (int)(s->n - 2) : nev;
        if (o.ncv && o.ncv < o.nev + 2) o.ncv = 0;
    }
    if (s->cplx) { /* the real form on 2 N rows: each lambda and its conjugate, twice the values */
        o.nev = 2 * o.nev + 2 > 2 * s->n - 2 ? (int)(2 * s->n - 2) : 2 * o.nev + 2;
        if (o.nev < nev) o.nev = nev;
        if (o.ncv && o.ncv < o.nev + 2) o.ncv = 0;
    }
    o.which = si ? PL_WHICH_LARGEST_MAGNITUDE : which;
    o.want_vectors = 1;
    o.value_relative = si; /* each theta against itself: the original residuals follow (lanczos.h) */
    o.estimate_residuals = 1; /* recover() computes them on A x = lambda B x: no solves for the operator's */
    /* a symmetric(-definite) pair: the operator is self-adjoint in <x, y>_B, Lanczos runs in it */
    if (method == PL_METHOD_LANCZOS && s->bop) o.inner_b = s->bop;
    memset(res, 0, sizeof *res);
    PL_CALL(method == PL_METHOD_LANCZOS ? lz_solve(s->op, &o, res) : ks_solve(s->op, &o, res));
    if (res->reason == LZ_CHECKPOINTED || !res->vectors) return PL_OK;
    const int m = res->nev;
    if (!res->eigenvalues_imag) {
        res->eigenvalues_imag = calloc((size_t)m + 1, sizeof *res->eigenvalues_imag);
        PL_CHECK(res->eigenvalues_imag, PL_ERR_MEM, "out of host memory");
    }
    double *hv = NULL, *hz = NULL, *rs = malloc(((size_t)m + 1) * sizeof *rs);
    double complex *lam = malloc(((size_t)m + 1) * sizeof *lam);
    unit *u = malloc(((size_t)m + 1) * sizeof *u);
    int rc = PL_OK, nu = 0;
    PL_CHECK_GOTO(rs && lam && u, PL_ERR_MEM, out, rc, "out of host memory");
    PL_CALL_GOTO(host_vectors(s, res, m, &hv), out, rc);
    if (s->cplx) {
        hz = malloc(((size_t)s->nloc * (size_t)m + 1) * sizeof *hz);
        PL_CHECK_GOTO(hz, PL_ERR_MEM, out, rc, "out of host memory");
        PL_CALL_GOTO(recover_cplx(s, res, m, hv, hz, lam, rs, u, &nu, which), out, rc);
        res->ld = (size_t)s->nloc; /* the N-row vectors (pl_st_vectors_op) */
    } else {
        PL_CALL_GOTO(recover(s, res, m, hv, lam, rs, u, &nu, which), out, rc);
    }
    PL_CALL_GOTO(reorder(s, res, nev, s->cplx ? hz : hv, lam, rs, u, nu, o.tol), out, rc);
out:
    free(hz);
    free(hv);
    free(rs);
    free(lam);
    free(u);
    return rc;
}
