/* chebfd_filter.c — the window filter of the Chebyshev filter
 * diagonalization and the plan of a run (lanczos.h cf_plan_make;
 * docs/config.md "[solver] method = chebfd").
 *
 * Filter: H~ = (H - c) / h maps the spectral bounds [emin, emax] onto
 * [-1, 1]; the window [a, b] becomes [xlo, xhi].  Its indicator expands as
 *   c_0 = (t_lo - t_hi) / pi,  c_k = 2 (sin k t_lo - sin k t_hi) / (pi k),
 * t = acos x, damped with the Lanczos sigma factors cubed (cf_filter_coef;
 * PJDS_CHEBFD_KERNEL=0: the Jackson kernel g_k of deg + 1 terms, kpm.c,
 * which the KPM estimate keeps: positive, so its smoothed count is
 * monotone); the edge is smeared over about pi sqrt(1 - x^2) / deg.
 * The constants below are Jackson's; rule_of gives the sigma^3 ones.
 *
 * Degree rule (auto): the search block's extra columns (nb - est) hold the
 * eigenvalues just outside the window, an equal share beyond each inner
 * edge x_e (an edge inside (-1, 1)); d_e is the room (in x) in which the
 * smoothed count beyond the edge reaches that share; degree = 2 pi
 * sqrt(1 - x_e^2) / d_e, the largest over the inner edges (the filter's
 * smear pi sqrt(1 - x^2) / deg is half the room), and at least the width
 * rule cf_degree_rule: 16 sqrt(1 - x_e^2) / w, w the window's width in x
 * (twice it for one inner edge); at least 8, at most CF_DEG_MAX.
 *
 * Estimate: the Chebyshev moments of G groups of random vectors (kpm.c;
 * all unit vectors up to CF_UNIT_MAX rows: the exact trace, with at most
 * CF_UNIT_MOMENTS moments), M = 4 x the degree moments (a quarter of the
 * filter's smear; recomputed once when the degree comes out above M / 3),
 * Jackson-damped; the
 * count of a group is N sum_k g_k c_k mu_k.  Its uncertainty: 2 standard
 * errors of the group mean plus, for each inner edge, half the count the
 * smoothed density puts within one smear width pi sqrt(1 - x^2) / M of it
 * (the smoothed step counts those with weights between 0 and 1).
 * Search block (auto): ceil(1.6 (est + err)) + 8 columns (at least nev + 8
 * for target, smallest and largest), rounded up to whole blocks of 32 (a
 * power of two below 32), at most N. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chebfd_impl.h"
#include "pl_error.h"

/* The rules' constants of a filter kernel (sigma power mu; 0 = Jackson):
 * the width rule's K_DEG, the room rule's K_ROOM (degree x room in x at the
 * centre: 2 pi puts Jackson's first extra eigenvalues about 1.5e-2 below
 * the edge's 1/2, 11.5 the sigma^3 filter's about 2e-4) and the search
 * block's growth over the estimate.  Measured on the 3024-row
 * Holstein-Hubbard window of tests/chebfd (40 pairs, tol 1e-10, one core,
 * 2026-11-26): Jackson with (16, 2 pi, 1.6): degree 1149, block 96, 4
 * iterations, 435,078 SpMMVs + 73,617 for the estimate; sigma^3 with
 * degree 1149, block 96: 3 iterations, 329,186; degree 700, block 128: 3
 * iterations, 269,568 (+ 44,881); 550: 4, 278,760; 450: 6, 340,808. */
typedef struct cf_rule {
    double kdeg, kroom, grow;
} cf_rule;

static cf_rule rule_of(int mu)
{
    const cf_rule jackson = {16.0, 6.2832, 1.6}, sigma = {8.0, 9.0, 2.0};
    return mu > 0 ? sigma : jackson;
}

int cf_kernel_default(void)
{
    const char *e = getenv("PJDS_CHEBFD_KERNEL");
    return e && *e ? atoi(e) : CF_KERNEL_DEFAULT;
}
#define CF_DEG_MIN 8
#define CF_DEG_MAX 200000
#define CF_UNIT_MAX 2048     /* rows up to which the estimate takes every unit vector */
#define CF_UNIT_MOMENTS 512  /* ... with at most this many moments (N M / 2 products)  */
#define CF_GROUPS 4          /* groups of random vectors                           */
#define CF_GROUP_VECTORS 8   /* vectors per group                                   */
#define CF_MOMENTS_FIRST 256 /* moments before the window is known                  */
#define CF_EST_FACTOR 4      /* moments of the estimate per filter degree            */
#define CF_EST_ENOUGH 3      /* ... recomputed only when fewer than 3 per degree      */
#define CF_MOMENTS_MAX 400000
#define CF_BLOCK 32          /* columns per block product (block_size)                */

void cf_options_defaults(cf_options *o)
{
    memset(o, 0, sizeof *o);
    o->mode = CF_INTERVAL;
    o->nev = 4;
    o->tol = 1e-10;
    o->seed = 1;
}

static double clamp1(double x) { return x < -1.0 ? -1.0 : (x > 1.0 ? 1.0 : x); }

void cf_window_coef(double xlo, double xhi, int deg, double *c)
{
    const double pi = acos(-1.0), tl = acos(clamp1(xlo)), th = acos(clamp1(xhi));
    double *g = malloc(((size_t)deg + 1) * sizeof *g);
    if (g) kpm_damping(0, 0.0, deg + 1, g);
    c[0] = (tl - th) / pi * (g ? g[0] : 1.0);
    for (int k = 1; k <= deg; k++)
        c[k] = 2.0 * (sin(k * tl) - sin(k * th)) / (pi * k) * (g ? g[k] : 1.0);
    free(g);
}

/* The filter: cf_window_coef's series damped with the Lanczos sigma
 * factors sinc(k / (deg + 1))^mu instead of Jackson's (mu = 0: Jackson).
 * mu = 3 leaves a transition about as wide as Jackson's near the edge
 * (10 % at 5.2 / deg against 4.8 / deg from it, in x at the spectrum's
 * centre) but falls much faster beyond: 1e-3 at 8.6 / deg and 1e-4 at
 * 13.1 / deg, against Jackson's 16.9 and 32.4 / deg. */
void cf_filter_coef(double xlo, double xhi, int deg, int mu, double *c)
{
    if (mu <= 0) {
        cf_window_coef(xlo, xhi, deg, c);
        return;
    }
    const double pi = acos(-1.0), tl = acos(clamp1(xlo)), th = acos(clamp1(xhi));
    c[0] = (tl - th) / pi;
    for (int k = 1; k <= deg; k++) {
        const double t = pi * k / (deg + 1.0), s = sin(t) / t;
        c[k] = 2.0 * (sin(k * tl) - sin(k * th)) / (pi * k) * pow(s, mu);
    }
}

int cf_degree_rule(double xlo, double xhi, int mu)
{
    const double K_DEG = rule_of(mu).kdeg;
    xlo = clamp1(xlo);
    xhi = clamp1(xhi);
    const int inner = (xlo > -1.0) + (xhi < 1.0);
    if (!inner) return CF_DEG_MIN;
    const double w = (xhi - xlo) * (inner == 1 ? 2.0 : 1.0);
    double d = 0.0;
    if (xlo > -1.0) d = fmax(d, K_DEG * sqrt(1.0 - xlo * xlo) / w);
    if (xhi < 1.0) d = fmax(d, K_DEG * sqrt(1.0 - xhi * xhi) / w);
    if (!(d < CF_DEG_MAX)) return CF_DEG_MAX;
    return d < CF_DEG_MIN ? CF_DEG_MIN : (int)ceil(d);
}

/* The moments of the estimate: G groups (1 with unit vectors) of M each. */
typedef struct cf_mom {
    int G, M, unit;
    double *mu; /* G x M */
    int64_t products;
} cf_mom;

static int moments(pl_op *op, const cf_options *o, double c, double h, int M, cf_mom *m)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    m->unit = info.n_global <= CF_UNIT_MAX;
    if (m->unit && M > CF_UNIT_MOMENTS) M = CF_UNIT_MOMENTS;
    m->G = m->unit ? 1 : CF_GROUPS;
    m->M = M;
    free(m->mu);
    m->mu = malloc((size_t)m->G * (size_t)M * sizeof *m->mu);
    PL_CHECK(m->mu, PL_ERR_MEM, "out of host memory for the KPM moments");
    /* the G groups' vectors in one block product of G x 8 columns: the
     * matrix read once per 32 vectors instead of once per 8 */
    kpm_options ko = {M, m->G * CF_GROUP_VECTORS, m->G * CF_GROUP_VECTORS, m->unit, o->seed * 7919u + 17u, h, c, 1,
                      m->G, 1000u};
    if (m->unit) ko.block = (int)(info.n_global < PL_SPMM_RMAX ? info.n_global : PL_SPMM_RMAX);
    else ko.block = pl_op_block_width(op, ko.block); /* the tables on the CPU: one vector at a time (block_size) */
    kpm_stats st;
    PL_CALL(kpm_moments(op, &ko, m->mu, &st));
    m->products += st.vector_products;
    return PL_OK;
}

/* The smoothed count of [xlo, xhi] of group g's moments. */
static double count_group(const cf_mom *m, int g, int64_t N, double xlo, double xhi, double *c)
{
    cf_window_coef(xlo, xhi, m->M - 1, c);
    double s = 0.0;
    for (int k = 0; k < m->M; k++) s += c[k] * m->mu[(size_t)g * m->M + k];
    return s * (double)N;
}

/* Mean count over the groups and twice its standard error. */
static void count_window(const cf_mom *m, int64_t N, double xlo, double xhi, double *c, double *est, double *se2)
{
    double s = 0.0, q = 0.0;
    for (int g = 0; g < m->G; g++) {
        const double v = count_group(m, g, N, xlo, xhi, c);
        s += v;
        q += v * v;
    }
    *est = s / m->G;
    *se2 = m->G > 1 ? 2.0 * sqrt(fmax(q / m->G - *est * *est, 0.0) * m->G / (m->G - 1) / m->G) : 0.0;
}

/* The window of target / smallest / largest holding about goal eigenvalues
 * (bisection on the smoothed count, monotone for the positive kernel). */
static void choose_window(const cf_options *o, const cf_mom *m, int64_t N, double cen, double h, double goal,
                          double *c, double *xlo, double *xhi)
{
    double lo = 0.0, hi = 2.0, est, se;
    const double xt = (o->target - cen) / h;
    for (int it = 0; it < 100; it++) {
        const double r = 0.5 * (lo + hi);
        double l = -1.0, u = 1.0;
        if (o->mode == CF_SMALLEST) u = -1.0 + r;
        else if (o->mode == CF_LARGEST) l = 1.0 - r;
        else l = xt - r, u = xt + r;
        count_window(m, N, l, u, c, &est, &se);
        if (est < goal) lo = r;
        else hi = r;
    }
    const double r = hi;
    *xlo = -1.0;
    *xhi = 1.0;
    if (o->mode == CF_SMALLEST) *xhi = clamp1(-1.0 + r);
    else if (o->mode == CF_LARGEST) *xlo = clamp1(1.0 - r);
    else *xlo = clamp1(xt - r), *xhi = clamp1(xt + r);
}

/* The estimate of [xlo, xhi] and its uncertainty: 2 standard errors plus,
 * per inner edge, half the count within one smear width of it. */
static void estimate(const cf_mom *m, int64_t N, double xlo, double xhi, double *c, double *est, double *err)
{
    const double pi = acos(-1.0);
    double se = 0.0, edge = 0.0, e2 = 0.0, d = 0.0;
    count_window(m, N, fmax(xlo, -1.0), fmin(xhi, 1.0), c, est, &se);
    for (int s = 0; s < 2; s++) {
        const double x = s ? xhi : xlo;
        if (x <= -1.0 || x >= 1.0) continue;
        const double sw = pi * sqrt(1.0 - x * x) / m->M;
        count_window(m, N, fmax(x - sw, -1.0), fmin(x + sw, 1.0), c, &e2, &d);
        edge += 0.5 * fmax(e2, 0.0);
    }
    *err = se + edge;
}

/* Search block: ceil(1.6 (est + err)) + 8 (target, smallest, largest: at
 * least nev + 8) rounded up to whole blocks of CF_BLOCK = 32 columns, or
 * search_size; at most N.  R = 32 (narrower where the operator's block
 * products cost less per vector so, pl_op_block_width: the Kronecker
 * tables one column at a time on the CPU, whose one-vector SIMD product
 * fuses the step; hh_184800, interval -12.6, -12.4, 2 threads of the
 * development VM, 2026-11-29: the filter's iterations 1.4 s against 2.9-3.4
 * s at R = 32, the KPM estimate's moments 1.6-1.7 against 3.7-4.5 s in
 * blocks of 32, the whole solve 3.0-3.1 against 6.6-6.8 s, the same
 * eigenvalues; a GPU keeps 32: its composed step in blocks of 2 took 0.60
 * against 0.19-0.22 s on one H200).  The fused step of the CUDA backend
 * covers R = 2, 4, 8, 16, 32 only (spmm_kernels.cu; any other R composes
 * the step from spmm, scal, axpy: the first iteration of the HMEp window
 * of bench/chebfd_bench.sh on an H100 took 45.9 s with R = 53, 43.5 s with
 * R = 32); the CPU's covers R <= 64. */
static int block_size(const cf_options *o, int64_t N, cf_plan *p)
{
    double want = ceil(rule_of(p->kernel).grow * (fmax(p->est, 0.0) + p->est_err)) + 8.0;
    if (o->mode != CF_INTERVAL && want < o->nev + 8) want = o->nev + 8;
    /* whole blocks of CF_BLOCK columns (a power of two below it for a small block) */
    if (want > CF_BLOCK) want = ceil(want / CF_BLOCK) * CF_BLOCK;
    else want = exp2(ceil(log2(fmax(want, 2.0))));
    if (o->search_size) want = o->search_size;
    if (want > (double)N) want = (double)N;
    PL_CHECK(want < 2147483647.0, PL_ERR_INPUT,
             "search_size: the window holds about %.3g eigenvalues, too many for one search block", p->est);
    p->nb = (int)want;
    p->R = p->nb < CF_BLOCK ? p->nb : CF_BLOCK;
    return PL_OK;
}

/* The auto degree from the density of states: the extra columns of the
 * search block (extra = nb - est) hold the eigenvalues just outside the
 * window, extra / (inner edges) beyond each inner edge x_e, in a room d_e
 * (in x) where the smoothed count beyond the edge reaches that; degree =
 * K_ROOM sqrt(1 - x_e^2) / d_e, the largest over the inner edges: the
 * filter's smear pi sqrt(1 - x^2) / deg half of d_e; at least the width
 * rule (cf_degree_rule), which a cluster of eigenvalues just outside an
 * edge needs (the room then is small, but the count misjudges it). */
static int degree_dos(const cf_mom *m, int64_t N, double xlo, double xhi, double extra, int mu, double *c)
{
    const int inner = (xlo > -1.0) + (xhi < 1.0), width = cf_degree_rule(xlo, xhi, mu);
    const double K_ROOM = rule_of(mu).kroom;
    if (!inner || !(extra > 0)) return width;
    const double share = fmax(extra / inner, 1.0);
    double deg = width, est, se;
    for (int s = 0; s < 2; s++) {
        const double x = s ? xhi : xlo;
        if (x <= -1.0 || x >= 1.0) continue;
        double lo = 0.0, hi = s ? 1.0 - x : x + 1.0; /* the room up to the spectrum's end */
        for (int it = 0; it < 60; it++) {
            const double d = 0.5 * (lo + hi);
            count_window(m, N, s ? x : x - d, s ? x + d : x, c, &est, &se);
            if (est < share) lo = d;
            else hi = d;
        }
        deg = fmax(deg, K_ROOM * sqrt(1.0 - x * x) / hi);
    }
    if (!(deg < CF_DEG_MAX)) return CF_DEG_MAX;
    return deg < CF_DEG_MIN ? CF_DEG_MIN : (int)ceil(deg);
}

static int check_window(const cf_options *o, cf_plan *p)
{
    if (o->mode == CF_INTERVAL) {
        PL_CHECK(o->a < o->b, PL_ERR_INPUT, "interval: [%g, %g] is empty or inverted (need a < b)", o->a, o->b);
        PL_CHECK(o->b > p->emin && o->a < p->emax, PL_ERR_INPUT,
                 "interval: [%g, %g] lies outside the spectrum's bounds [%.6g, %.6g]", o->a, o->b, p->emin, p->emax);
        p->a = o->a;
        p->b = o->b;
    }
    if (o->mode == CF_TARGET)
        PL_CHECK(o->target > p->emin && o->target < p->emax, PL_ERR_INPUT,
                 "target: %g lies outside the spectrum's bounds [%.6g, %.6g]", o->target, p->emin, p->emax);
    return PL_OK;
}

int cf_plan_make(pl_op *op, const cf_options *o, cf_plan *p)
{
    memset(p, 0, sizeof *p);
    p->kernel = cf_kernel_default();
    pl_op_info info;
    pl_op_get_info(op, &info);
    const int64_t N = info.n_global;
    PL_CHECK(o->mode == CF_INTERVAL || (o->nev >= 1 && o->nev < N), PL_ERR_INPUT,
             "nev: %d must be >= 1 and < N = %lld", o->nev, (long long)N);
    PL_CHECK(o->degree >= 0 && o->degree <= CF_DEG_MAX, PL_ERR_INPUT, "filter_degree: %d must be in 1..%d (0 = auto)",
             o->degree, CF_DEG_MAX);
    PL_CHECK(o->search_size >= 0 && o->search_size <= N, PL_ERR_INPUT,
             "search_size: %d must be <= N = %lld (0 = auto)", o->search_size, (long long)N);
    const int steps = N < 80 ? (int)N : 80;
    PL_CALL(kpm_bounds(op, o->seed, steps, &p->emin, &p->emax));
    p->kpm_products += steps + 1;
    PL_CALL(check_window(o, p));
    const double cen = 0.5 * (p->emax + p->emin), h = 0.5 * (p->emax - p->emin);
    double xlo = (p->a - cen) / h, xhi = (p->b - cen) / h;
    cf_mom m = {0, 0, 0, NULL, 0};
    double *c = NULL;
    int rc = PL_OK, M = CF_MOMENTS_FIRST;
    if (o->mode == CF_INTERVAL) M = CF_EST_FACTOR * (o->degree ? o->degree : cf_degree_rule(xlo, xhi, p->kernel));
    if (M > CF_MOMENTS_MAX) M = CF_MOMENTS_MAX;
    /* at most two passes: the degree of the first moments, the estimate
     * again with 4 x that many moments if they were fewer than 3 x (not
     * the degree again: finer moments shrink the uncertainty, hence the
     * block and the room, and would raise the degree without end) */
    for (int pass = 0; pass < 2; pass++) {
        M = M < 32 ? 32 : M + (M & 1);
        free(c);
        c = malloc(((size_t)M + 1) * sizeof *c);
        PL_CHECK_GOTO(c, PL_ERR_MEM, out, rc, "out of host memory for the filter coefficients");
        PL_CALL_GOTO(moments(op, o, cen, h, M, &m), out, rc);
        if (o->mode != CF_INTERVAL) choose_window(o, &m, N, cen, h, 1.2 * o->nev + 4.0, c, &xlo, &xhi);
        estimate(&m, N, xlo, xhi, c, &p->est, &p->est_err);
        PL_CALL_GOTO(block_size(o, N, p), out, rc);
        p->R = pl_op_block_width(op, p->R); /* the tables on the CPU: one column at a time */
        if (pass == 0) {
            p->degree_auto = o->degree == 0;
            p->degree = o->degree ? o->degree : degree_dos(&m, N, xlo, xhi, p->nb - fmax(p->est, 0.0), p->kernel, c);
        }
        if (CF_EST_ENOUGH * p->degree <= m.M || m.M >= CF_MOMENTS_MAX || (m.unit && m.M >= CF_UNIT_MOMENTS)) break;
        M = CF_EST_FACTOR * p->degree > CF_MOMENTS_MAX ? CF_MOMENTS_MAX : CF_EST_FACTOR * p->degree;
    }
    if (o->mode != CF_INTERVAL) {
        p->a = xlo <= -1.0 ? p->emin : cen + h * xlo;
        p->b = xhi >= 1.0 ? p->emax : cen + h * xhi;
    }
    p->kpm_moments = m.M;
    p->kpm_vectors = m.unit ? 0 : m.G * CF_GROUP_VECTORS;
    p->kpm_products += m.products;
out:
    free(c);
    free(m.mu);
    return rc;
}

double cf_plan_bytes(const pl_op *op, const cf_plan *p)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    const double n = (double)info.n_local + 1.0;
    /* V, four row-major blocks of R, the gather tables */
    return 8.0 * n * ((double)p->nb + 4.0 * p->R) + 4.0 * (n + (double)CF_SLAB * p->R);
}
