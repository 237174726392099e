/* exsum_sum.c — the exact accumulator (core/pl_exsum.h) as a command for
 * exsum_ref.py: `exsum_sum sum FILE` reads n doubles (raw, native order)
 * and sums them, `exsum_sum dot FILE` reads 2n (x, then y) and sums the
 * rounded products x_i y_i.  One line per way of summing, the result's
 * 64 bits in hex: the given order, reversed, a stride permutation, and the
 * terms cut into K = 2..7 parts accumulated apart and combined as ranks
 * combine them (pl_exsum_pack, the words added limb by limb, as an
 * MPI_SUM would, pl_exsum_unpack) or as threads do (pl_exsum_merge).  The
 * reference (the exact sum rounded once) is the script's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_exsum.h"

static void put(const char *how, double r)
{
    uint64_t b;
    memcpy(&b, &r, sizeof b);
    printf("%s %016" PRIx64 "\n", how, b);
}

static double term(const double *v, size_t n, int dot, size_t i) { return dot ? v[i] * v[n + i] : v[i]; }

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "sum") && strcmp(argv[1], "dot"))) {
        fprintf(stderr, "usage: exsum_sum sum|dot FILE\n");
        return 2;
    }
    const int dot = !strcmp(argv[1], "dot");
    FILE *f = fopen(argv[2], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END);
    const size_t bytes = (size_t)ftell(f), m = bytes / sizeof(double), n = dot ? m / 2 : m;
    fseek(f, 0, SEEK_SET);
    double *v = malloc((m ? m : 1) * sizeof *v);
    if (!v || fread(v, sizeof *v, m, f) != m) return 2;
    fclose(f);
    pl_exsum a, b;
    pl_exsum_zero(&a);
    for (size_t i = 0; i < n; i++) pl_exsum_add(&a, term(v, n, dot, i));
    put("forward", pl_exsum_round(&a));
    pl_exsum_zero(&a);
    for (size_t i = n; i-- > 0;) pl_exsum_add(&a, term(v, n, dot, i));
    put("reverse", pl_exsum_round(&a));
    pl_exsum_zero(&a);
    const size_t s = 7919; /* a prime: i s mod n visits every index when n is not a multiple of it */
    if (n % s)
        for (size_t i = 0; i < n; i++) pl_exsum_add(&a, term(v, n, dot, (i * s) % n));
    else
        for (size_t i = 0; i < n; i++) pl_exsum_add(&a, term(v, n, dot, i));
    put("stride", pl_exsum_round(&a));
    for (int K = 2; K <= 7; K++) {
        int64_t w[PL_EXSUM_WORDS], t[PL_EXSUM_WORDS];
        memset(w, 0, sizeof w);
        pl_exsum_zero(&b);
        for (int k = K - 1; k >= 0; k--) { /* parts in reverse order */
            pl_exsum_zero(&a);
            for (size_t i = n * (size_t)k / (size_t)K; i < n * (size_t)(k + 1) / (size_t)K; i++)
                pl_exsum_add(&a, term(v, n, dot, i));
            pl_exsum_merge(&b, &a);
            pl_exsum_pack(&a, t);
            for (int j = 0; j < PL_EXSUM_WORDS; j++) w[j] += t[j];
        }
        pl_exsum_unpack(&a, w, K);
        char how[32];
        snprintf(how, sizeof how, "ranks%d", K);
        put(how, pl_exsum_round(&a));
        snprintf(how, sizeof how, "threads%d", K);
        put(how, pl_exsum_round(&b));
    }
    free(v);
    return 0;
}
