/* kron_halo.c — the halo per rank of the matrix-free Holstein-Hubbard
 * operator on P ranks, from its tables alone (pl_kron_halo, spmv.h): no
 * rows, no MPI, no operator, so any P for any model that the tables fit
 * (hh9 at 8 ranks in a second).  For each P: the split by electron
 * configurations (whole phonon rows of the remote configurations,
 * spmv/op_kron_dist.c) rank by rank, rows, halo rows, bytes received and
 * sent per product, neighbours; then the largest rank of both splits (the
 * split by phonon configurations, whole electron columns,
 * spmv/op_kron_right.c) and the one [spmv] kron_split = auto takes
 * (pl_kron_split_choose).
 * Checks that what the ranks send is what they receive (exit 1 if not).
 * Usage: kron_halo P[,P...] [L n_up n_down t U w0 g M site|normal periodic|open]
 * (default model: configs/hh7.ini).  Not a test of the operator
 * (test_kron_op checks pl_kron_halo against the stored operator's halo);
 * the README's table of 2026-11-25 comes from it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_args.h"
#include "hh_mf.h"
#include "pl_error.h"
#include "spmv.h"

#define MAXP 4096

static double mb(int64_t values) { return 8e-6 * (double)values; }

/* One rank count: the table, the totals check; 0 or 1. */
static int report(const pl_kron *k, int P)
{
    pl_kron_halo_info *h = calloc((size_t)P, sizeof *h), *r = calloc((size_t)P, sizeof *r);
    if (!h || !r || pl_kron_halo(k, P, PL_KRON_SPLIT_LEFT, h) || pl_kron_halo(k, P, PL_KRON_SPLIT_RIGHT, r)) {
        fprintf(stderr, "kron_halo: P = %d: %s\n", P, pl_error_message());
        free(h);
        free(r);
        return 1;
    }
    int64_t hs = 0, ss = 0, rs = 0, rss = 0, hmax = 0, rmax = 0, lmax = 0, nmax = 1;
    printf("P = %d, split by electron configurations:\n", P);
    printf("  rank        rows  halo_rows  halo_MB  send_MB  neighbours\n");
    for (int q = 0; q < P; q++) {
        printf("  %4d %11lld %10lld %8.1f %8.1f %11d\n", q, (long long)h[q].rows, (long long)h[q].halo_lines,
               mb(h[q].halo_values), mb(h[q].send_values), h[q].neighbors);
        hs += h[q].halo_values;
        ss += h[q].send_values;
        rs += r[q].halo_values;
        rss += r[q].send_values;
        if (h[q].halo_values > hmax) hmax = h[q].halo_values, lmax = h[q].halo_lines, nmax = h[q].rows;
        if (r[q].halo_values > rmax) rmax = r[q].halo_values;
    }
    printf("  max halo: %lld rows, %.1f MB (%.0f %% of the rank's x); total %.1f MB per product\n", (long long)lmax,
           mb(hmax), 100.0 * (double)hmax / (double)nmax, mb(hs));
    int split = PL_KRON_SPLIT_LEFT;
    if (pl_kron_split_choose(k, P, &split, NULL, NULL)) split = -1;
    printf("  split by phonon configurations: max halo %.1f MB, total %.1f MB per product\n", mb(rmax), mb(rs));
    printf("  kron_split = auto takes: %s configurations\n",
           split == PL_KRON_SPLIT_RIGHT ? "phonon" : split == PL_KRON_SPLIT_LEFT ? "electron" : "(failed)");
    free(h);
    free(r);
    if (hs != ss || rs != rss) {
        fprintf(stderr, "kron_halo: P = %d: sent %lld / %lld values, received %lld / %lld\n", P, (long long)ss,
                (long long)rss, (long long)hs, (long long)rs);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    hh_params p = hh_args_model(7, 4, 3, 1.0, 4.0, 1.0, 1.0, 12, PL_PHONON_NORMAL, PL_BOUNDARY_PERIODIC);
    if (argc < 2 || hh_args_parse(argc - 1, argv + 1, &p)) {
        fprintf(stderr, "usage: kron_halo P[,P...] [L n_up n_down t U w0 g M site|normal periodic|open]\n");
        return 2;
    }
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    if (hh_model_create(&p, &m) || hh_mf_create(m, &mf)) {
        fprintf(stderr, "kron_halo: %s\n", pl_error_message());
        return 1;
    }
    pl_kron k;
    hh_mf_kron(mf, &k);
    printf("model: %s\nrows: %lld = %lld electron x %lld phonon configurations\n", hh_args_describe(&p),
           (long long)(k.n_left * k.n_right), (long long)k.n_left, (long long)k.n_right);
    int rc = 0;
    for (char *s = argv[1], *e; *s; s = *e ? e + 1 : e) {
        const long P = strtol(s, &e, 10);
        if (e == s || P < 1 || P > MAXP || (*e && *e != ',')) {
            fprintf(stderr, "kron_halo: bad rank count in '%s'\n", argv[1]);
            rc = 2;
            break;
        }
        rc |= report(&k, (int)P);
    }
    hh_mf_destroy(&mf);
    hh_model_destroy(&m);
    return rc;
}
