/* test_rand_block.c — the random start vectors drawn by a backend
 * (spmv.h rand_block, rand_fill) and by lanczos/lz_random.c's helper,
 * against lz_random_element evaluated on the host, bit for bit:
 *   - the hash itself against splitmix64's published first outputs
 *     (seed 0: 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4), so that the shared
 *     header (pl_random.h) is checked against an outside reference;
 *   - rand_block's row-major layout for R = 1, 2, 3, 16, 64, rows n = 0,
 *     1, 255, 257, 100003, with consecutive indices from 0 and from 2^40,
 *     and with a permuted index array (idx_create);
 *   - lz_rand_block on consecutive, permuted and > 2^31 global indices
 *     (the host fallback), and with the backend's rand_block removed.
 * Backends: cpu always; cuda as well when PJDS_TEST_BACKEND=cuda (exit 77
 * without a device). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_each.h"
#include "lanczos.h"
#include "lz_random.h"
#include "pl_random.h"
#include "spmv.h"
#include "testutil.h"

/* bits of V (backend, n R values) against the host's values; returns the
 * differing count */
static size_t compare(pl_backend *be, const double *V, size_t n, int R, const uint64_t *seeds, const int64_t *g)
{
    double *h = malloc((n * R + 1) * sizeof *h);
    TU_CHECK(h != NULL);
    if (!h) return 1;
    if (n) TU_OK(be->download(be, h, V, n * R));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < R; c++) {
            const double r = lz_random_element(seeds[c], g[i]);
            bad += memcmp(&r, &h[i * R + c], sizeof r) != 0;
        }
    free(h);
    return bad;
}

static void check_slots(pl_backend *be)
{
    TU_CHECK(be->rand_block != NULL);
    if (!be->rand_block) return;
    const size_t ns[] = {0, 1, 255, 257, 100003};
    const int Rs[] = {1, 2, 3, 16, 64};
    uint64_t seeds[PL_SPMM_RMAX];
    for (int c = 0; c < PL_SPMM_RMAX; c++) seeds[c] = 1000 + 7 * (uint64_t)c;
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof Rs / sizeof *Rs; b++) {
            const size_t n = ns[a];
            const int R = Rs[b];
            if (n * R > 2000000) continue;
            double *V = NULL;
            int64_t *g = malloc((n + 1) * sizeof *g);
            int32_t *hi = malloc((n + 1) * sizeof *hi), *di = NULL;
            TU_OK(be->vec_alloc(be, n * R + 1, &V));
            if (!V || !g || !hi) {
                free(g);
                free(hi);
                return;
            }
            /* consecutive from 0 and from 2^40 */
            for (int o = 0; o < 2; o++) {
                const int64_t g0 = o ? (int64_t)1 << 40 : 0;
                for (size_t i = 0; i < n; i++) g[i] = g0 + (int64_t)i;
                TU_OK(be->rand_block(be, n, R, seeds, g0, NULL, V));
                const size_t bad = compare(be, V, n, R, seeds, g);
                TU_CHECK(bad == 0);
                if (bad) fprintf(stderr, "rand_block: n %zu R %d g0 %lld: %zu differ\n", n, R, (long long)g0, bad);
            }
            /* a permutation: i -> (i * 7919 + 13) mod n, shifted by 5 */
            for (size_t i = 0; i < n; i++) {
                g[i] = (int64_t)((i * 7919 + 13) % n) + 5;
                hi[i] = (int32_t)g[i];
            }
            TU_OK(be->idx_create(be, hi, n, &di));
            TU_OK(be->rand_block(be, n, R, seeds, 0, di, V));
            const size_t bad = compare(be, V, n, R, seeds, g);
            TU_CHECK(bad == 0);
            if (bad) fprintf(stderr, "rand_block: n %zu R %d permuted: %zu differ\n", n, R, bad);
            if (di) be->idx_destroy(be, di);
            be->vec_free(be, V);
            free(g);
            free(hi);
        }
    /* bad R */
    double *V = NULL;
    TU_OK(be->vec_alloc(be, 8, &V));
    TU_CHECK(be->rand_block(be, 1, 0, seeds, 0, NULL, V) == PL_ERR_ARG);
    TU_CHECK(be->rand_block(be, 1, PL_SPMM_RMAX + 1, seeds, 0, NULL, V) == PL_ERR_ARG);
    pl_error_clear();
    be->vec_free(be, V);
}

/* lz_rand_block through its three paths on rows g (n), R columns */
static void check_helper_rows(pl_backend *be, const int64_t *g, size_t n, int R, const char *what)
{
    uint64_t seeds[PL_SPMM_RMAX];
    for (int c = 0; c < R; c++) seeds[c] = UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)(c + 3);
    double *V = NULL;
    TU_OK(be->vec_alloc(be, n * R + 1, &V));
    if (!V) return;
    for (int strip = 0; strip < 2; strip++) {
        pl_backend b = *be; /* strip = 1: a backend without rand_block (the host draws) */
        if (strip) b.rand_block = NULL;
        lz_rand_rows rr;
        TU_OK(lz_rand_rows_init(&rr, &b, (int64_t)n, g));
        TU_OK(lz_rand_block(&rr, R, seeds, V));
        TU_OK(be->sync(be));
        const size_t bad = compare(be, V, n, R, seeds, g);
        TU_CHECK(bad == 0);
        if (bad) fprintf(stderr, "lz_rand_block %s R %d strip %d: %zu differ\n", what, R, strip, bad);
        lz_rand_rows_free(&rr);
    }
    be->vec_free(be, V);
}

static void check_helper(pl_backend *be)
{
    const size_t n = 30011;
    int64_t *g = malloc(n * sizeof *g);
    TU_CHECK(g != NULL);
    if (!g) return;
    for (int R = 1; R <= 4; R += 3) {
        for (size_t i = 0; i < n; i++) g[i] = 1000 + (int64_t)i; /* one rank's block of a matrix-free operator */
        check_helper_rows(be, g, n, R, "consecutive");
        for (size_t i = 0; i < n; i++) g[i] = (int64_t)(n - 1 - i) * 3; /* a permuted operator's */
        check_helper_rows(be, g, n, R, "permuted");
        for (size_t i = 0; i < n; i++) g[i] = ((int64_t)1 << 33) + 2 * (int64_t)i; /* past 32-bit indices */
        check_helper_rows(be, g, n, R, "wide");
    }
    free(g);
}

static void check_backend(pl_backend *be)
{
    check_slots(be);
    check_helper(be);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* the hash against splitmix64's reference outputs for state 0 (the
     * generator's first two: splitmix64(0), splitmix64(golden ratio)) */
    TU_CHECK(pl_splitmix64(0) == UINT64_C(0xE220A8397B1DCDAF));
    TU_CHECK(pl_splitmix64(UINT64_C(0x9E3779B97F4A7C15)) == UINT64_C(0x6E789E6AA1B965F4));
    const int rc = tb_each_backend("test_rand_block", check_backend);
    MPI_Finalize();
    if (rc == 77) return 77;
    return tu_result("test_rand_block");
}
