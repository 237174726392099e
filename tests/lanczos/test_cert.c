/* test_cert.c — verify's certificate (lanczos/lz_cert.c) against the
 * overlaps it stands for.
 *
 * A thick-restart Lanczos written here (dense vectors, two Gram-Schmidt
 * passes, the projected matrix kept as the solver keeps it: the diagonal,
 * the couplings and the first step's arrow after a restart) runs on a
 * diagonal matrix, whose eigenvectors are the unit vectors, with a planted
 * wanted eigenvalue d_p whose start component c = r_p is tiny: the missed
 * eigenvector the certificate is about.  Until the search shows it (a Ritz
 * value near d_p), the certificate's value of every basis column at
 * mu = d_p must be the column's entry p over r_p (u^T v_i = c q_i(mu), u =
 * e_p), after every cycle (lz_cert_extend) and restart (lz_cert_restart);
 * Bessel's inequality c^2 S <= 1 holds, so the bound sqrt(2 N / (pi S))
 * never claims a start component smaller than the planted one; and while
 * every Ritz value lies above the point, S grows beyond it (the premise of
 * the certificate), checked at a second point further out.
 * largest_magnitude tracks +|edge| and -|edge| (two planted eigenvalues).
 * (At an eigenvalue the search has already resolved, the forward
 * recurrence is unstable, as for any minimal solution; the solver only
 * reads S while every Ritz value lies short of the edge.)  Host only. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lz_impl.h"
#include "testutil.h"

#define N 160
#define M 12
#define KK 6
#define CYCLES 12
#define PLANT 1e-9 /* the planted eigenvectors' start components (before normalising) */

static double g_d[N];

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

/* x = A v (A = diag(g_d)) */
static void apply(const double *v, double *x)
{
    for (int i = 0; i < N; i++) x[i] = g_d[i] * v[i];
}

/* Column j + 1 = A v_j orthogonalised against columns 0..j (two passes);
 * T[j][j] and, at j = k, the arrow T[i][k]; returns beta. */
static double expand(double *V, double *T, int j, int k)
{
    double *w = V + (size_t)(j + 1) * N, h[M + 1] = {0};
    apply(V + (size_t)j * N, w);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i <= j; i++) {
            double c = 0.0;
            for (int r = 0; r < N; r++) c += V[(size_t)i * N + r] * w[r];
            for (int r = 0; r < N; r++) w[r] -= c * V[(size_t)i * N + r];
            h[i] += c;
        }
    T[(size_t)j * M + j] = h[j];
    if (j == k)
        for (int i = 0; i < k; i++) T[(size_t)k * M + i] = T[(size_t)i * M + k] = h[i];
    double b = 0.0;
    for (int r = 0; r < N; r++) b += w[r] * w[r];
    b = sqrt(b);
    for (int r = 0; r < N; r++) w[r] /= b;
    if (j + 1 < M) T[(size_t)j * M + j + 1] = T[(size_t)(j + 1) * M + j] = b;
    return b;
}

/* The certificate's values against column entries p / r_p, columns 0..top. */
static double worst_mismatch(const lz_cert *ct, int pt, const double *V, int p, double rp, int top)
{
    double worst = 0.0;
    for (int i = 0; i <= top; i++) {
        const double q = ct->q[pt][i] * exp(ct->lsc[pt]), want = V[(size_t)i * N + p] / rp;
        worst = fmax(worst, fabs(q - want) / fmax(1.0, fabs(want)));
    }
    return worst;
}

static double logS(const lz_cert *ct, int pt, int top)
{
    double s = 0.0;
    for (int i = 0; i <= top; i++) s += ct->q[pt][i] * ct->q[pt][i];
    return log(s) + 2.0 * ct->lsc[pt];
}

/* One run: which (smallest or largest_magnitude), the tracked eigenvalue
 * index p (and, for largest magnitude, its mirror pm at -d_p); a second
 * point `out` further beyond for the growth check (smallest only). */
static void run(const char *name, int which, int p, int pm, double margin)
{
    double *V = calloc((size_t)(M + 1) * N, sizeof *V), T[M * M], Y[M * M], th[M], Ysel[M * KK], tmp[M + 1];
    double q0[M + 1], q1[M + 1], o0[M + 1], o1[M + 1];
    uint64_t s = 7;
    double nr = 0.0;
    for (int r = 0; r < N; r++) {
        V[r] = r == p || r == pm ? PLANT : (double)(lcg(&s) % 20001) / 10000.0 - 1.0;
        nr += V[r] * V[r];
    }
    for (int r = 0; r < N; r++) V[r] /= sqrt(nr);
    const double rp = V[p], rpm = pm >= 0 ? V[pm] : 1.0;
    lz_cert ct = {.q = {q0, q1}, .tmp = tmp}, co = {.q = {o0, o1}, .tmp = tmp};
    lz_cert_begin(&ct, which, g_d[p], 0, M);
    const double out = g_d[p] - 0.05; /* a point further beyond (smallest) */
    lz_cert_begin(&co, PL_WHICH_SMALLEST, out, 0, M);
    memset(T, 0, sizeof T);
    int k = 0;
    double worst = 0.0, growth_bad = 0.0, bessel = 0.0;
    int cycles = 0;
    for (int cyc = 0; cyc < CYCLES; cyc++) {
        double beta_m = 0.0;
        for (int j = k; j < M; j++) beta_m = expand(V, T, j, k);
        lz_cert_extend(&ct, T, M, 0, k, M, beta_m);
        lz_cert_extend(&co, T, M, 0, k, M, beta_m);
        TU_CHECK_MSG(ct.on && co.on, "%s: certificate switched off in cycle %d", name, cyc);
        /* the projected matrix's values: all short of the points (by the
         * margin: the planted vectors not yet shown)? */
        memcpy(Y, T, sizeof T);
        TU_CHECK(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', M, Y, M, th) == 0);
        const int hull = which == PL_WHICH_SMALLEST ? th[0] > g_d[p] + margin
                                                    : fmax(fabs(th[0]), fabs(th[M - 1])) < fabs(g_d[p]) - margin;
        if (!hull) break; /* shown: the search would now see it as missed */
        cycles++;
        worst = fmax(worst, worst_mismatch(&ct, 0, V, p, rp, M));
        if (pm >= 0) worst = fmax(worst, worst_mismatch(&ct, 1, V, pm, rpm, M));
        bessel = fmax(bessel, rp * rp * exp(logS(&ct, 0, M)));
        if (pm >= 0) bessel = fmax(bessel, rpm * rpm * exp(logS(&ct, 1, M)));
        lz_cert_note(&ct, 0, M, hull);
        if (which == PL_WHICH_SMALLEST && hull && logS(&co, 0, M) < logS(&ct, 0, M) - 1e-9)
            growth_bad = fmax(growth_bad, logS(&ct, 0, M) - logS(&co, 0, M));
        if (hull) {
            double want = fmin(1.0, sqrt(0.63661977236758134308 * N / exp(fmin(logS(&ct, 0, M), pm >= 0 ? logS(&ct, 1, M) : INFINITY))));
            TU_CHECK_MSG(fabs(lz_cert_bound(&ct, N) - want) <= 1e-9 * want || lz_cert_bound(&ct, N) < want,
                         "%s: bound %.6e, want at most %.6e", name, lz_cert_bound(&ct, N), want);
        }
        /* restart: keep the KK most wanted Ritz vectors */
        int ord[M];
        for (int i = 0; i < M; i++) ord[i] = i;
        if (which == PL_WHICH_LARGEST_MAGNITUDE)
            for (int i = 0, lo = 0, hi = M - 1; i < M; i++) ord[i] = fabs(th[hi]) >= fabs(th[lo]) ? hi-- : lo++;
        for (int c = 0; c < KK; c++) memcpy(Ysel + (size_t)c * M, Y + (size_t)ord[c] * M, M * sizeof(double));
        double *W = calloc((size_t)KK * N, sizeof *W);
        for (int c = 0; c < KK; c++)
            for (int i = 0; i < M; i++)
                for (int r = 0; r < N; r++) W[(size_t)c * N + r] += V[(size_t)i * N + r] * Ysel[(size_t)c * M + i];
        memcpy(V, W, (size_t)KK * N * sizeof *V);
        memcpy(V + (size_t)KK * N, V + (size_t)M * N, N * sizeof *V); /* the restart vector */
        free(W);
        lz_cert_restart(&ct, Ysel, 0, M, KK, M, 1, tmp);
        lz_cert_restart(&co, Ysel, 0, M, KK, M, 1, tmp);
        memset(T, 0, sizeof T);
        for (int c = 0; c < KK; c++) T[(size_t)c * M + c] = th[ord[c]];
        k = KK;
        worst = fmax(worst, worst_mismatch(&ct, 0, V, p, rp, KK));
        if (pm >= 0) worst = fmax(worst, worst_mismatch(&ct, 1, V, pm, rpm, KK));
    }
    fprintf(stderr, "%s: %d cycles before the planted value shows, values vs overlaps %.1e, c^2 S <= %.3e, bound %.2e "
            "(planted c %.1e), growth shortfall %.1e\n", name, cycles, worst, bessel, lz_cert_bound(&ct, N), rp, growth_bad);
    TU_CHECK_MSG(cycles >= 3, "%s: only %d cycles compared", name, cycles);
    TU_CHECK_MSG(worst <= 1e-8, "%s: certificate values off the overlaps by %.3e", name, worst);
    TU_CHECK_MSG(bessel <= 1.0 + 1e-10, "%s: c^2 S = %.12f > 1", name, bessel);
    TU_CHECK_MSG(growth_bad == 0.0, "%s: S further out below S at the edge by %.3e (log)", name, growth_bad);
    TU_CHECK_MSG(lz_cert_bound(&ct, N) < 0.1, "%s: nothing certified in %d cycles", name, cycles);
    /* a breakdown (a zero coupling) switches the certificate off */
    T[(size_t)k * M + k + 1] = 0.0;
    lz_cert_extend(&ct, T, M, 0, k, k + 2, 0.0);
    TU_CHECK_MSG(!ct.on, "%s: certificate on after a zero coupling", name);
    free(V);
}

int main(void)
{
    /* smallest: distinct values in [1, 3], the lowest at 0.5 */
    uint64_t s = 99;
    for (int i = 0; i < N; i++) g_d[i] = 1.0 + 2.0 * (double)(lcg(&s) % 100000) / 100000.0;
    g_d[17] = 0.8;
    run("smallest, planted 0.8", PL_WHICH_SMALLEST, 17, -1, 0.02);
    /* largest magnitude: +-2.5 at both ends, the rest in [-2, 2] */
    for (int i = 0; i < N; i++) g_d[i] = -2.0 + 4.0 * (double)(lcg(&s) % 100000) / 100000.0;
    g_d[5] = 2.5;
    g_d[40] = -2.5;
    run("largest magnitude, planted +-2.5", PL_WHICH_LARGEST_MAGNITUDE, 5, 40, 0.02);
    return tu_result("lanczos.cert");
}
