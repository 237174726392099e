/* kron_timing.c — the CUDA matrix-free operator's kernel variants
 * (PJDS_KRON_KERNEL, spmv/cuda/kron_variant.h) on a Holstein-Hubbard model,
 * each against the CPU backend's kron_apply bit for bit.  Default model:
 * HMEp (configs/hmep.ini: L = 6, 3 up 3 down, M = 15, normal, periodic,
 * t = 1, U = 4, w0 = 1, g = 1; 400 x 15,504 = 6.2 M rows).  Per variant:
 * kron_create with PJDS_KRON_KERNEL set, 5 warm-up products, the median of
 * 50 products timed by CUDA events on the backend's stream, then y compared
 * with the CPU's (memcmp and max |diff|).  Prints one line per variant:
 * requested and effective kernel (after fall-backs) with its parameter,
 * median ms, GB/s at 16 B per row (x read once, y written once), max
 * |diff|, bitwise equal.  For variant 5 also the fused Lanczos product
 * (kron_lz), the KPM step's, and the local Lanczos step two ways: as the
 * solver runs it (kron_lz, then lz_step with its round trip) and as one
 * kernel that updates its input on the fly (pl_cuda_kron_lz_in, the
 * measured next lever), which must give the same bits (else exit 1), and
 * the block products per vector (kron_spmm, kron_spmm_aug; R = 1 to 16,
 * with PJDS_KRON_BLOCK 0, 2, 4 and unset; bit for bit against the CPU's y).  Also
 * the device-to-device copy bandwidth for scale.  Not a test; a measurement tool (built with PJDS_CUDA only).
 * PJDS_KRON_TIMING_VARIANTS (e.g. "5,6"): only these variants, in one run
 * (unset: all; the other PJDS_KRON_* knobs apply as in kron_variant.h).
 * Usage: kron_timing [L n_up n_down t U w0 g M site|normal periodic|open]
 * Exit status 1 if a variant's y (or a fused or block form's) differs from
 * the CPU's, 2 for bad usage, 77 without a CUDA device.  The GPU test
 * gpu_kron_timing_small runs it on a small model for those checks. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_args.h"
#include "hh_mf.h"
#include "lz_coef.h"
#include "pl_error.h"
#include "spmv.h"
#include "cuda/kron_variant.h"
#include "cuda/pl_cuda_bench.h"

#define REPS 50
#define WARM 5

/* The next lever of the Lanczos step, measured (docs/performance.md): the
 * local step as the solver runs it, kron_lz then lz_step (its one host round
 * trip), against one kernel that makes its input v = (w - alpha u) / b on
 * the fly from the last product's output w (pl_cuda_kron_lz_in) and the
 * download of its 5 sums.  Checks that both give the same v, y and sums bit
 * for bit.  Unit u and z from x (host); 0 where variant 5 does not run. */
static int lz_in_experiment(pl_backend *be, const void *op, int64_t N, const double *x, double *hy, int *equal)
{
    double *d[8] = {NULL}, sums[PL_LZ_OUT + 1], s2[PL_KRON_LZ_DOTS], s3[PL_KRON_LZ_DOTS], ta[REPS], tb[REPS],
                   tk[REPS];
    double *hz = malloc((size_t)N * sizeof *hz), *hv = malloc((size_t)N * sizeof *hv),
           *hy2 = malloc((size_t)N * sizeof *hy2);
    int r = PL_OK;
    PL_CHECK_GOTO(hz && hv && hy2, PL_ERR_MEM, done, r, "out of host memory");
    for (int i = 0; i < 8; i++) PL_CALL_GOTO(be->vec_alloc(be, i < 3 ? PL_KRON_LZ_DOTS : (size_t)N, &d[i]), done, r);
    double *ds1 = d[0], *ds2 = d[1], *ds3 = d[2], *du = d[3], *dz = d[4], *dw = d[5], *dv = d[6], *dy = d[7];
    double nu = 0.0, nz = 0.0;
    for (int64_t i = 0; i < N; i++) {
        hz[i] = cos(0.07 * (double)i + 1.1);
        nu += x[i] * x[i];
        nz += hz[i] * hz[i];
    }
    for (int64_t i = 0; i < N; i++) {
        hy[i] = x[i] / sqrt(nu);
        hz[i] /= sqrt(nz);
    }
    PL_CALL_GOTO(be->upload(be, du, hy, (size_t)N), done, r);
    PL_CALL_GOTO(be->upload(be, dz, hz, (size_t)N), done, r);
    const double b0 = 0.5;
    /* the composed local step, timed as the solver runs it */
    int e = PL_OK;
    for (int i = -WARM; i < REPS && e == PL_OK; i++) {
        PL_CALL_GOTO(pl_cuda_timer_start(be), done, r);
        e = be->kron_lz(be, op, du, dz, b0, dw, ds1);
        if (e == PL_OK) e = be->lz_step(be, (size_t)N, 0, NULL, du, (size_t)N, b0, ds1, dw, sums);
        double ms = 0.0;
        PL_CALL_GOTO(pl_cuda_timer_stop(be, &ms), done, r);
        if (i >= 0) ta[i] = ms;
    }
    if (e == PL_ERR_NOTSUP) goto done;
    PL_CALL_GOTO(e, done, r);
    PL_CHECK_GOTO(sums[PL_LZ_OUT_DECLINED] == 0.0, PL_ERR_INTERNAL, done, r, "lz_in: the test step was declined");
    /* reference: w again (unnormalised), v = lz_step(w), y = kron_lz(v, u, b) */
    PL_CALL_GOTO(be->kron_lz(be, op, du, dz, b0, dw, ds1), done, r);
    PL_CALL_GOTO(be->copy(be, (size_t)N, dw, dv), done, r);
    PL_CALL_GOTO(be->lz_step(be, (size_t)N, 0, NULL, du, (size_t)N, b0, ds1, dv, sums), done, r);
    PL_CALL_GOTO(be->kron_lz(be, op, dv, du, sums[PL_LZ_OUT_NORM], dy, ds2), done, r);
    PL_CALL_GOTO(be->download(be, s2, ds2, PL_KRON_LZ_DOTS), done, r);
    PL_CALL_GOTO(be->download(be, hv, dv, (size_t)N), done, r);
    PL_CALL_GOTO(be->download(be, hy2, dy, (size_t)N), done, r);
    /* the fused kernel: v into dv, y into dy (overwritten), from w = dw */
    PL_CALL_GOTO(be->set(be, (size_t)N, NAN, dv), done, r);
    PL_CALL_GOTO(be->set(be, (size_t)N, NAN, dy), done, r);
    PL_CALL_GOTO(pl_cuda_kron_lz_in(be, op, dw, du, ds1, b0, dv, dy, ds3), done, r);
    PL_CALL_GOTO(be->download(be, s3, ds3, PL_KRON_LZ_DOTS), done, r);
    PL_CALL_GOTO(be->download(be, hy, dv, (size_t)N), done, r);
    *equal = memcmp(hy, hv, (size_t)N * sizeof *hy) == 0;
    PL_CALL_GOTO(be->download(be, hy, dy, (size_t)N), done, r);
    *equal &= memcmp(hy, hy2, (size_t)N * sizeof *hy) == 0 && memcmp(s2, s3, sizeof s2) == 0;
    for (int i = -WARM; i < REPS; i++) {
        PL_CALL_GOTO(pl_cuda_timer_start(be), done, r);
        PL_CALL_GOTO(pl_cuda_kron_lz_in(be, op, dw, du, ds1, b0, dv, dy, ds3), done, r);
        double ms = 0.0;
        PL_CALL_GOTO(pl_cuda_timer_stop(be, &ms), done, r);
        if (i >= 0) tk[i] = ms;
        PL_CALL_GOTO(pl_cuda_timer_start(be), done, r);
        PL_CALL_GOTO(pl_cuda_kron_lz_in(be, op, dw, du, ds1, b0, dv, dy, ds3), done, r);
        PL_CALL_GOTO(be->download(be, s3, ds3, PL_KRON_LZ_DOTS), done, r);
        PL_CALL_GOTO(pl_cuda_timer_stop(be, &ms), done, r);
        if (i >= 0) tb[i] = ms;
    }
    printf("  local step, composed (kron_lz + lz_step, its round trip) %8.4f ms (events)\n", pl_median(ta, REPS));
    printf("  local step, input update fused (kron_lz_in)   %8.4f ms kernels, %8.4f ms with the sums' download; "
           "same bits: %s\n",
           pl_median(tk, REPS), pl_median(tb, REPS), *equal ? "yes" : "NO");
done:
    for (int i = 0; i < 8; i++)
        if (d[i]) be->vec_free(be, d[i]);
    free(hz);
    free(hv);
    free(hy2);
    return r;
}

/* The block products kron_spmm (Y = H X) and kron_spmm_aug (the KPM step)
 * of R row-major vectors (the R values of row i at X + i R), per vector,
 * for PJDS_KRON_BLOCK = 0 (kron_block.cu's kernels), 2, 4 and unset (the
 * width by R; kron_hop_block.cu), R = 1, 2, 4, 8, 16, each on an operator
 * made with that setting.  X's column v is 2^v x, so column v of Y must be
 * 2^v yc bit for bit (*equal = 0 otherwise). */
static int spmm_per_vector(pl_backend *be, const pl_kron *k, int64_t N, const double *x, const double *yc, int *equal)
{
    if (!be->kron_spmm || !be->kron_spmm_aug) return PL_OK;
    enum { RMAXT = 16 };
    static const char *const modes[] = {"0", "2", "4", ""};
    double *dX = NULL, *dY = NULL, t[REPS], ta[REPS], dots[2 * RMAXT];
    double *hX = malloc((size_t)N * RMAXT * sizeof *hX);
    void *op = NULL;
    int r = PL_OK;
    PL_CHECK_GOTO(hX, PL_ERR_MEM, done, r, "out of host memory");
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)N * RMAXT, &dX), done, r);
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)N * RMAXT, &dY), done, r);
    for (int md = 0; md < (int)(sizeof modes / sizeof modes[0]); md++) {
        PL_CHECK_GOTO(setenv("PJDS_KRON_BLOCK", modes[md], 1) == 0, PL_ERR_ARG, done, r, "setenv failed");
        PL_CALL_GOTO(be->kron_create(be, k, &op), done, r);
        printf("  block product per vector, PJDS_KRON_BLOCK=%s:", *modes[md] ? modes[md] : "(unset)");
        for (int R = 1; R <= RMAXT; R *= 2) {
            for (int64_t i = 0; i < N; i++)
                for (int v = 0; v < R; v++) hX[i * R + v] = ldexp(x[i], v);
            PL_CALL_GOTO(be->upload(be, dX, hX, (size_t)N * R), done, r);
            PL_CALL_GOTO(be->set(be, (size_t)N * R, NAN, dY), done, r);
            PL_CALL_GOTO(be->kron_spmm(be, op, R, dX, dY), done, r);
            PL_CALL_GOTO(be->download(be, hX, dY, (size_t)N * R), done, r);
            int same = 1;
            for (int64_t i = 0; i < N && same; i++)
                for (int v = 0; v < R; v++) same &= hX[i * R + v] == ldexp(yc[i], v);
            *equal &= same;
            for (int i = -WARM; i < REPS; i++) {
                double ms = 0.0;
                PL_CALL_GOTO(pl_cuda_timer_start(be), done, r);
                PL_CALL_GOTO(be->kron_spmm(be, op, R, dX, dY), done, r);
                PL_CALL_GOTO(pl_cuda_timer_stop(be, &ms), done, r);
                if (i >= 0) t[i] = ms / R;
                PL_CALL_GOTO(pl_cuda_timer_start(be), done, r);
                PL_CALL_GOTO(be->kron_spmm_aug(be, op, R, 1.0, 0.0, -0.5, dX, dY, dots), done, r);
                PL_CALL_GOTO(pl_cuda_timer_stop(be, &ms), done, r);
                if (i >= 0) ta[i] = ms / R;
            }
            printf("  R=%d %.4f / %.4f ms%s", R, pl_median(t, REPS), pl_median(ta, REPS), same ? "" : " (NOT bitwise)");
        }
        printf(" (spmm / aug, events)\n");
        be->kron_destroy(be, op);
        op = NULL;
    }
done:
    unsetenv("PJDS_KRON_BLOCK");
    if (op) be->kron_destroy(be, op);
    if (dX) be->vec_free(be, dX);
    if (dY) be->vec_free(be, dY);
    free(hX);
    return r;
}

/* One variant v: time it and compare its y (device dy, host hy) with yc. */
static int one_variant(pl_backend *be, const pl_kron *k, int v, const double *x, const double *dx, double *dy,
                       double *hy, const double *yc, int *equal)
{
    const int64_t N = k->n_left * k->n_right;
    char s[16];
    snprintf(s, sizeof s, "%d", v);
    PL_CHECK(setenv("PJDS_KRON_KERNEL", s, 1) == 0, PL_ERR_ARG, "setenv failed");
    void *op = NULL;
    double t[REPS];
    int r = PL_OK;
    PL_CALL_GOTO(be->kron_create(be, k, &op), done, r);
    int param = 0;
    const int eff = pl_cuda_kron_variant_of(op, &param);
    for (int i = -WARM; i < REPS; i++) {
        PL_CALL_GOTO(pl_cuda_timer_start(be), done, r);
        PL_CALL_GOTO(be->kron_apply(be, op, dx, dy), done, r);
        double ms = 0.0;
        PL_CALL_GOTO(pl_cuda_timer_stop(be, &ms), done, r);
        if (i >= 0) t[i] = ms;
    }
    PL_CALL_GOTO(be->set(be, (size_t)N, NAN, dy), done, r); /* every entry must be written */
    PL_CALL_GOTO(be->kron_apply(be, op, dx, dy), done, r);
    PL_CALL_GOTO(be->download(be, hy, dy, (size_t)N), done, r);
    const double med = pl_median(t, REPS);
    double d = 0.0;
    for (int64_t i = 0; i < N; i++) d = isfinite(hy[i]) ? fmax(d, fabs(hy[i] - yc[i])) : INFINITY;
    *equal = memcmp(hy, yc, (size_t)N * sizeof *hy) == 0;
    printf("variant %d %-16s -> %d (param %2d)  %8.4f ms  %7.1f GB/s  max|diff| %.3g  bitwise %s\n", v,
           pl_cuda_kron_variant_name(v), eff, param, med, 16.0 * (double)N / (med * 1e-3) * 1e-9, d,
           *equal ? "yes" : "NO");
    if (be->kron_lz) { /* the Lanczos step's product (y = H x - beta z and 5 sums in device memory) */
        double *dz = NULL, *dsum = NULL, sums[PL_KRON_LZ_DOTS], tw[REPS];
        PL_CALL_GOTO(be->vec_alloc(be, PL_KRON_LZ_DOTS, &dsum), done, r);
        PL_CALL_GOTO(be->vec_alloc(be, (size_t)N, &dz), done, r);
        PL_CALL_GOTO(be->copy(be, (size_t)N, dx, dz), done, r);
        int e = PL_OK;
        for (int i = -WARM; i < REPS && e == PL_OK; i++) {
            PL_CALL_GOTO(be->sync(be), done, r);
            const double w0 = pl_wtime();
            PL_CALL_GOTO(pl_cuda_timer_start(be), done, r);
            e = be->kron_lz(be, op, dx, dz, 0.5, dy, dsum);
            if (e == PL_OK) e = be->download(be, sums, dsum, PL_KRON_LZ_DOTS);
            double ms = 0.0;
            PL_CALL_GOTO(pl_cuda_timer_stop(be, &ms), done, r);
            if (i >= 0) {
                t[i] = ms;
                tw[i] = 1e3 * (pl_wtime() - w0);
            }
        }
        /* the KPM step's fused product (kron_spmm_aug, one vector: 2 sums, y read), for scale */
        double ta[REPS];
        for (int i = -WARM; i < REPS && e == PL_OK && be->kron_spmm_aug; i++) {
            PL_CALL_GOTO(pl_cuda_timer_start(be), done, r);
            PL_CALL_GOTO(be->kron_spmm_aug(be, op, 1, 1.0, 0.0, -0.5, dx, dy, sums), done, r);
            double ms = 0.0;
            PL_CALL_GOTO(pl_cuda_timer_stop(be, &ms), done, r);
            if (i >= 0) ta[i] = ms;
        }
        if (e == PL_OK && be->kron_spmm_aug) printf("  kron_spmm_aug R=1 %7.4f ms (events)\n", pl_median(ta, REPS));
        be->vec_free(be, dz);
        be->vec_free(be, dsum);
        if (e == PL_OK)
            printf("  kron_lz          %8.4f ms (events), %8.4f ms (host wall, with the sums' download)\n",
                   pl_median(t, REPS), pl_median(tw, REPS));
        else if (e != PL_ERR_NOTSUP) PL_CALL_GOTO(e, done, r);
        if (e == PL_OK && eff == 5 && be->lz_step) {
            int same = 1;
            PL_CALL_GOTO(lz_in_experiment(be, op, N, x, hy, &same), done, r);
            *equal &= same;
            PL_CALL_GOTO(spmm_per_vector(be, k, N, x, yc, equal), done, r);
        }
    }
done:
    if (op) be->kron_destroy(be, op);
    return r;
}

/* want[v] = 1 for the variants PJDS_KRON_TIMING_VARIANTS names (all where
 * unset or empty); 0 for a malformed list. */
static int variants_wanted(int *want, int nv)
{
    const char *s = getenv("PJDS_KRON_TIMING_VARIANTS");
    for (int v = 1; v <= nv; v++) want[v] = !s || !*s;
    while (s && *s) {
        char *end = NULL;
        const long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > nv || (*end && *end != ',')) return 0;
        want[v] = 1;
        s = *end ? end + 1 : end;
    }
    return 1;
}

/* The CPU backend's y = H x (the reference). */
static int cpu_reference(const pl_kron *k, const double *x, double *y)
{
    pl_backend *cb = NULL;
    void *op = NULL;
    int r = PL_OK;
    PL_CALL_GOTO(pl_backend_cpu_create(&cb), done, r);
    PL_CALL_GOTO(cb->kron_create(cb, k, &op), done, r);
    const double t0 = pl_wtime();
    PL_CALL_GOTO(cb->kron_apply(cb, op, x, y), done, r);
    printf("cpu kron_apply   %.2f ms (one product, the reference)\n", 1e3 * (pl_wtime() - t0));
done:
    if (op) cb->kron_destroy(cb, op);
    pl_backend_destroy(&cb);
    return r;
}

static int run(const hh_params *p, const int *want, int *all_equal)
{
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    pl_backend *be = NULL;
    double *x = NULL, *yc = NULL, *hy = NULL, *dx = NULL, *dy = NULL;
    int r = PL_OK;
    PL_CALL_GOTO(hh_model_create(p, &m), done, r);
    PL_CALL_GOTO(hh_mf_create(m, &mf), done, r);
    pl_kron k;
    hh_mf_kron(mf, &k);
    const int64_t N = k.n_left * k.n_right;
    x = malloc((size_t)N * sizeof *x);
    yc = malloc((size_t)N * sizeof *yc);
    hy = malloc((size_t)N * sizeof *hy);
    PL_CHECK_GOTO(x && yc && hy, PL_ERR_MEM, done, r, "out of host memory for 3 vectors of %lld", (long long)N);
    for (int64_t i = 0; i < N; i++) x[i] = sin(0.1 * (double)i + 0.3);
    printf("rows             %lld (%lld left x %lld right), nterms %d, nnz(A) %lld, tables %zu bytes\n",
           (long long)N, (long long)k.n_left, (long long)k.n_right, k.nterms, (long long)k.a_ptr[k.n_left],
           pl_kron_bytes(&k));
    PL_CALL_GOTO(cpu_reference(&k, x, yc), done, r);
    PL_CALL_GOTO(pl_backend_create(PL_BACKEND_CUDA, 0, &be), done, r);
    char name[128] = "";
    int dev = 0;
    double gbs = 0.0;
    PL_CALL_GOTO(pl_cuda_device_name(be, name, sizeof name, &dev), done, r);
    PL_CALL_GOTO(pl_cuda_copy_bandwidth(be, (size_t)N * sizeof(double), 20, &gbs), done, r);
    printf("device           %s (%d); copy of x: %.1f GB/s (read + write)\n", name, dev, gbs);
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)N, &dx), done, r);
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)N, &dy), done, r);
    PL_CALL_GOTO(be->upload(be, dx, x, (size_t)N), done, r);
    *all_equal = 1;
    for (int v = 1; v <= pl_cuda_kron_nvariants(); v++) {
        int eq = 0;
        if (!want[v]) continue;
        PL_CALL_GOTO(one_variant(be, &k, v, x, dx, dy, hy, yc, &eq), done, r);
        *all_equal &= eq;
    }
done:
    if (dx) be->vec_free(be, dx);
    if (dy) be->vec_free(be, dy);
    pl_backend_destroy(&be);
    free(x);
    free(yc);
    free(hy);
    hh_mf_destroy(&mf);
    hh_model_destroy(&m);
    return r;
}

int main(int argc, char **argv)
{
    hh_params p = {.sites = 6, .n_up = 3, .n_down = 3, .hopping = 1.0, .hubbard_u = 4.0, .phonon_frequency = 1.0,
                   .coupling = 1.0, .max_phonons = 15, .phonon_basis = PL_PHONON_NORMAL,
                   .boundary = PL_BOUNDARY_PERIODIC};
    if (hh_args_parse(argc, argv, &p)) {
        fprintf(stderr, "usage: %s [L n_up n_down t U w0 g M site|normal periodic|open]\n", argv[0]);
        return 2;
    }
    if (pl_cuda_device_count() < 1) {
        fprintf(stderr, "no CUDA device: skipped\n");
        return 77;
    }
    int want[PL_CUDA_KRON_NVARIANTS + 1];
    if (!variants_wanted(want, PL_CUDA_KRON_NVARIANTS)) {
        fprintf(stderr, "PJDS_KRON_TIMING_VARIANTS = '%s': not a list like 5,6 of variants 1..%d\n",
                getenv("PJDS_KRON_TIMING_VARIANTS"), PL_CUDA_KRON_NVARIANTS);
        return 2;
    }
    int eq = 0;
    if (run(&p, want, &eq) != PL_OK) {
        pl_error_report();
        return 1;
    }
    return eq ? 0 : 1;
}
