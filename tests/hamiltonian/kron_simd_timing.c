/* kron_simd_timing.c — the CPU backend's matrix-free product (kron_apply)
 * at each SIMD level this CPU has (PJDS_CPU_SIMD = sse2, avx2, avx512;
 * spmv/cpu/cpu_kron.c), one operator per level made in this process and
 * applied in interleaved rounds (the levels' order rotating each round),
 * after 3 warm-up rounds.  Prints the median milliseconds per level and
 * checks that every level's y is the SSE2 level's bit for bit (exit 1
 * where not).  Not a test; a measurement tool, OMP_NUM_THREADS threads.
 * Default model: HMEp (configs/hmep.ini: L = 6, 3 + 3, t = 1, U = 4,
 * w0 = 1, g = 1, M = 15, normal, periodic).
 * Usage: kron_simd_timing [rounds [L n_up n_down t U w0 g M site|normal periodic|open]] */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_args.h"
#include "hh_mf.h"
#include "pl_error.h"
#include "spmv.h"

#define NLEV 3
#define RMAX 1000

static const char *const names[NLEV] = {"sse2", "avx2", "avx512"};

static int run(const hh_params *p, int rounds)
{
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    pl_backend *be = NULL;
    void *op[NLEV] = {NULL};
    double *x = NULL, *y[NLEV] = {NULL}, *t = malloc((size_t)NLEV * RMAX * sizeof *t);
    int r = PL_OK, bad = 0;
    PL_CHECK_GOTO(t, PL_ERR_MEM, done, r, "out of host memory");
    PL_CALL_GOTO(hh_model_create(p, &m), done, r);
    const int64_t N = hh_model_rows(m);
    PL_CALL_GOTO(hh_mf_create(m, &mf), done, r);
    PL_CALL_GOTO(pl_backend_cpu_create(&be), done, r);
    pl_kron k;
    hh_mf_kron(mf, &k);
    for (int l = 0; l < NLEV; l++) {
        setenv("PJDS_CPU_SIMD", names[l], 1);
        if (be->kron_create(be, &k, &op[l]) != PL_OK) {
            printf("%-8s not on this CPU or build\n", names[l]);
            pl_error_clear();
        }
        unsetenv("PJDS_CPU_SIMD");
        y[l] = malloc((size_t)N * sizeof *y[l]);
        PL_CHECK_GOTO(y[l], PL_ERR_MEM, done, r, "out of host memory for y");
    }
    PL_CHECK_GOTO(op[0], PL_ERR_INPUT, done, r, "no sse2 operator");
    x = malloc((size_t)N * sizeof *x);
    PL_CHECK_GOTO(x, PL_ERR_MEM, done, r, "out of host memory for x");
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; i++) {
        x[i] = sin(0.1 * (double)i + 0.3);
        for (int l = 0; l < NLEV; l++) y[l][i] = 0.0; /* first touch as the kernel's */
    }
    for (int it = -3; it < rounds; it++)
        for (int j = 0; j < NLEV; j++) {
            const int l = (j + (it > 0 ? it : 0)) % NLEV;
            if (!op[l]) continue;
            const double t0 = pl_wtime();
            PL_CALL_GOTO(be->kron_apply(be, op[l], x, y[l]), done, r);
            if (it >= 0) t[l * RMAX + it] = pl_wtime() - t0;
        }
    printf("threads %d, rows %lld (%lld x %lld), rounds %d\n", omp_get_max_threads(), (long long)N,
           (long long)mf->n_el, (long long)mf->n_ph, rounds);
    for (int l = 0; l < NLEV; l++) {
        if (!op[l]) continue;
        const int same = memcmp(y[l], y[0], (size_t)N * sizeof *x) == 0;
        bad |= !same;
        const double med = pl_median(t + l * RMAX, rounds);
        printf("%-8s %9.4f ms median  %.2fx sse2  %s\n", names[l], 1e3 * med, 1e3 * pl_median(t, rounds) / (1e3 * med),
               same ? "y = sse2's bit for bit" : "y DIFFERS from sse2's");
    }
done:
    for (int l = 0; l < NLEV; l++) {
        if (be && op[l]) be->kron_destroy(be, op[l]);
        free(y[l]);
    }
    free(x);
    free(t);
    pl_backend_destroy(&be);
    hh_mf_destroy(&mf);
    hh_model_destroy(&m);
    return r != PL_OK ? r : bad ? PL_ERR_INTERNAL : PL_OK;
}

int main(int argc, char **argv)
{
    hh_params p = {.sites = 6, .n_up = 3, .n_down = 3, .hopping = 1.0, .hubbard_u = 4.0, .phonon_frequency = 1.0,
                   .coupling = 1.0, .max_phonons = 15, .phonon_basis = PL_PHONON_NORMAL,
                   .boundary = PL_BOUNDARY_PERIODIC};
    const int rounds = argc > 1 ? atoi(argv[1]) : 30;
    if (rounds < 1 || rounds > RMAX || (argc > 2 && hh_args_parse(argc - 1, argv + 1, &p))) {
        fprintf(stderr, "usage: %s [rounds (1-%d) [L n_up n_down t U w0 g M site|normal periodic|open]]\n", argv[0],
                RMAX);
        return 2;
    }
    const int rc = run(&p, rounds);
    if (rc != PL_OK) {
        if (rc != PL_ERR_INTERNAL) pl_error_report();
        return 1;
    }
    return 0;
}
