/* fuzz_config.c — a mutation fuzzer of the configuration path
 * (docs/operations.md, "Reliability"): the INI reader, --set overrides, the checks and the
 * resolved dump, all in one process so that thousands of cases run in
 * seconds (and under the sanitizer build, where a report fails the test).
 *
 * Each case starts from one of the seed configs (the files given on the
 * command line, e.g. every configs/NAME.ini), applies 1-8 random mutations (delete,
 * insert or replace bytes with INI-significant and binary ones, duplicate,
 * drop or swap lines, replace a value with an extreme one: huge numbers,
 * nan, inf, negative, empty, very long words), then 0-3 random --set strings
 * built from the key table with mutated values.  Every call must return
 * PL_OK or PL_ERR_INPUT (what `pjds-lanczos` turns into exit 0 or 2); any
 * other code, a crash or a case running longer than 5 s (alarm) fails.
 * Files in the regression directory (argument --regress DIR) run first,
 * each as it is.
 * usage: fuzz_config CASES SEED [--regress DIR] SEED_CONFIG...
 * A failing case is written to fuzz_failed_<n>.ini in the working
 * directory, to be kept as a regression file. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_config.h"
#include "pl_error.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}
static size_t rndn(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static const char *const extremes[] = {"1e999", "-1e999", "nan", "inf", "-inf", "0", "-1", "-0",
                                       "99999999999999999999999", "-9223372036854775809", "2147483648", "1e-320",
                                       "", " ", "auto", "true", "false", "yes", "0x10", "1,2", "1:2:0", "0:1:-1",
                                       "\"quoted\"", "site|normal", "=", "[", "]", ";", "#", "\t", "3.5e", ".",
                                       "normal", "cuda", "krylov-schur", "largest_imaginary", "1024", "65536"};
static const char *const sections[] = {"model", "matrix", "solver", "spmv", "output", "sweep", "spectral", "kpm", "x"};
static const char *const keys[] = {"type", "sites", "n_up", "n_down", "hopping", "hubbard_u", "phonon_frequency",
                                   "coupling", "max_phonons", "phonon_basis", "boundary", "nx", "ny", "nz",
                                   "block_size", "stencil", "convection", "file", "group", "check_symmetry", "nev",
                                   "which", "method", "tolerance", "ncv", "max_restarts", "seed", "verify",
                                   "reorthogonalization", "backend", "chunk_height", "sort_window", "exchange",
                                   "transport", "precision", "repeats", "eigenvectors", "checkpoint_interval",
                                   "observables", "combine", "warm_start", "operator", "momentum", "steps",
                                   "broadening", "omega_min", "omega_max", "points", "moments", "random_vectors",
                                   "kernel", "lorentz_lambda", "block", "vectors", "nope"};
#define NEXT (sizeof extremes / sizeof *extremes)
#define NSEC (sizeof sections / sizeof *sections)
#define NKEY (sizeof keys / sizeof *keys)

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void reserve(buf *b, size_t n)
{
    if (n + 1 <= b->cap) return;
    b->cap = 2 * (n + 1);
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
}

static void splice(buf *b, size_t at, size_t del, const char *ins, size_t nins)
{
    if (at > b->n) at = b->n;
    if (at + del > b->n) del = b->n - at;
    reserve(b, b->n - del + nins);
    memmove(b->p + at + nins, b->p + at + del, b->n - at - del);
    memcpy(b->p + at, ins, nins);
    b->n = b->n - del + nins;
    b->p[b->n] = 0;
}

/* start and end of the line holding byte i */
static void line_of(const buf *b, size_t i, size_t *s, size_t *e)
{
    size_t a = i, z = i;
    while (a > 0 && b->p[a - 1] != '\n') a--;
    while (z < b->n && b->p[z] != '\n') z++;
    *s = a;
    *e = z < b->n ? z + 1 : z;
}

static void mutate(buf *b)
{
    static const char sig[] = "=[]#;\n\r\t .-+e0123456789:,\"'\\";
    const size_t i = rndn(b->n + 1);
    switch (rndn(9)) {
    case 0: splice(b, i, 1 + rndn(4), "", 0); break; /* delete */
    case 1: { char c = sig[rndn(sizeof sig - 1)]; splice(b, i, 0, &c, 1); } break;
    case 2: { char c = (char)(rnd() & 0xff); if (c == 0) c = 1; splice(b, i, rndn(2), &c, 1); } break;
    case 3: { /* duplicate a line */
        size_t s, e;
        line_of(b, i, &s, &e);
        char *t = malloc(e - s + 1);
        memcpy(t, b->p + s, e - s);
        splice(b, e, 0, t, e - s);
        free(t);
    } break;
    case 4: { size_t s, e; line_of(b, i, &s, &e); splice(b, s, e - s, "", 0); } break; /* drop a line */
    case 5: { /* a value replaced by an extreme one */
        char *eq = memchr(b->p + i, '=', b->n - i);
        if (!eq) eq = memchr(b->p, '=', b->n);
        if (!eq) break;
        size_t s = (size_t)(eq - b->p) + 1, e = s;
        while (e < b->n && b->p[e] != '\n') e++;
        const char *x = extremes[rndn(NEXT)];
        splice(b, s, e - s, x, strlen(x));
    } break;
    case 6: { /* a new key line with a random value */
        char line[256];
        int n = snprintf(line, sizeof line, "%s = %s\n", keys[rndn(NKEY)], extremes[rndn(NEXT)]);
        size_t s, e;
        line_of(b, i, &s, &e);
        splice(b, s, 0, line, (size_t)n);
    } break;
    case 7: { /* a section header */
        char line[64];
        int n = snprintf(line, sizeof line, "[%s]\n", sections[rndn(NSEC)]);
        size_t s, e;
        line_of(b, i, &s, &e);
        splice(b, s, 0, line, (size_t)n);
    } break;
    default: { /* a very long word */
        size_t n = 100 + rndn(5000);
        char *t = malloc(n);
        memset(t, 'a' + (int)rndn(26), n);
        splice(b, i, 0, t, n);
        free(t);
    } break;
    }
}

static int ok_code(int rc) { return rc == PL_OK || rc == PL_ERR_INPUT; }
static long n_accepted; /* cases whose config passed every check */

static int run_case(const char *path, const char *text, size_t len, char sets[][512], int nsets, int idx)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "fuzz_config: cannot write %s\n", path);
        return 1;
    }
    alarm(5);
    pl_config cfg;
    pl_config_defaults(&cfg);
    int bad = 0, rc = pl_config_read(&cfg, path);
    bad |= !ok_code(rc);
    for (int k = 0; k < nsets && rc == PL_OK; k++) {
        rc = pl_config_set(&cfg, sets[k]);
        bad |= !ok_code(rc);
    }
    if (rc == PL_OK) {
        rc = pl_config_check(&cfg);
        bad |= !ok_code(rc);
    }
    if (rc == PL_OK) {
        n_accepted++;
        char *d = pl_config_dump_string(&cfg);
        bad |= d == NULL;
        free(d);
    }
    pl_error_clear();
    pl_config_destroy(&cfg);
    alarm(0);
    if (bad) {
        char out[64];
        snprintf(out, sizeof out, "fuzz_failed_%d.ini", idx);
        FILE *g = fopen(out, "wb");
        if (g) {
            fwrite(text, 1, len, g);
            for (int k = 0; k < nsets; k++) fprintf(g, "\n# --set %s", sets[k]);
            fclose(g);
        }
        fprintf(stderr, "fuzz_config: case %d returned %d (not 0 or input error); kept as %s\n", idx, rc, out);
    }
    return bad;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *p = NULL;
    size_t cap = 0, len = 0, r;
    char tmp[4096];
    while ((r = fread(tmp, 1, sizeof tmp, f)) > 0) {
        if (len + r + 1 > cap) {
            cap = 2 * (len + r + 1);
            p = realloc(p, cap);
            if (!p) abort();
        }
        memcpy(p + len, tmp, r);
        len += r;
    }
    fclose(f);
    if (!p) p = calloc(1, 1);
    p[len] = 0;
    *n = len;
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fuzz_config CASES SEED [--regress DIR] SEED_CONFIG...\n");
        return 2;
    }
    pl_log_init(0, PL_LOG_QUIET);
    const long cases = strtol(argv[1], NULL, 10);
    rng_state = strtoull(argv[2], NULL, 10);
    int a = 3;
    const char *regress = NULL;
    if (!strcmp(argv[a], "--regress") && a + 1 < argc) regress = argv[a + 1], a += 2;
    char path[256];
    snprintf(path, sizeof path, "/tmp/pjds_fuzz_config_%d.ini", (int)getpid());
    int fails = 0, nreg = 0;
    if (regress) { /* the kept cases first */
        DIR *d = opendir(regress);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strstr(e->d_name, ".ini")) continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", regress, e->d_name);
            size_t n = 0;
            char *t = slurp(p, &n);
            if (t) fails += run_case(path, t, n, NULL, 0, -1 - nreg++);
            free(t);
        }
        if (d) closedir(d);
    }
    const int nseed = argc - a;
    char **seed = calloc((size_t)nseed, sizeof *seed);
    size_t *seedn = calloc((size_t)nseed, sizeof *seedn);
    for (int i = 0; i < nseed; i++) {
        seed[i] = slurp(argv[a + i], &seedn[i]);
        if (!seed[i]) {
            fprintf(stderr, "fuzz_config: cannot read %s\n", argv[a + i]);
            return 2;
        }
    }
    buf b = {0};
    for (long c = 0; c < cases; c++) {
        const int s = (int)rndn((size_t)nseed);
        b.n = 0;
        reserve(&b, seedn[s]);
        memcpy(b.p, seed[s], seedn[s]);
        b.n = seedn[s];
        b.p[b.n] = 0;
        const int nm = 1 + (int)rndn(8);
        for (int m = 0; m < nm; m++) mutate(&b);
        char sets[3][512];
        const int nsets = (int)rndn(4);
        for (int k = 0; k < nsets; k++)
            snprintf(sets[k], sizeof sets[k], "%s%s%s=%s", sections[rndn(NSEC)], rndn(8) ? "." : "", keys[rndn(NKEY)],
                     extremes[rndn(NEXT)]);
        fails += run_case(path, b.p, b.n, sets, nsets, (int)c);
    }
    unlink(path);
    printf("fuzz_config: %ld mutated cases and %d regression files from %d seed configs: %ld accepted, the others "
           "refused as input errors; %d failure(s)\n",
           cases, nreg, nseed, n_accepted, fails);
    for (int i = 0; i < nseed; i++) free(seed[i]);
    free(seed);
    free(seedn);
    free(b.p);
    return fails ? 1 : 0;
}
