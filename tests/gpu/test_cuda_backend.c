/* test_cuda_backend.c — the CUDA backend against independent references.
 *
 * - every pJDS kernel variant equals a plain serial CSR SpMV (computed here
 *   from the CSR, not from the pJDS) and the CPU backend's SpMV to 1e-14,
 *   on random matrices varying the chunk height C (1, 4, 7, 32, 64), the
 *   sort window (1, 16, all), including 0 and 1 rows, empty rows, a row far
 *   longer than the others, and the row_map accumulate mode with halo
 *   columns (ncols > nrows);
 * - cuSPARSE CSR and sliced ELLPACK (bench's reference formats) equal the
 *   same reference;
 * - mat_create_fill (chunk ranges through small staging buffers) gives
 *   bit-identical products to mat_create;
 * - every vector operation of the table equals the CPU backend's;
 * - memory check, copy bandwidth, device selection modulo the count.
 * Exit 77 (skipped) without a CUDA device or in a build without CUDA.
 * `test_cuda_backend --device-count` prints the number of devices (for the
 * shell tests).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_build.h"
#include "lanczos.h"
#include "pl_error.h"
#include "spmv.h"
#include "testutil.h"
#if PJDS_HAVE_CUDA
#include "cuda/pl_cuda_bench.h"
#include "cusparse_ref.h"
#endif

#if PJDS_HAVE_CUDA
static uint64_t rng_state = 12345;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unif(void) { return (double)(rnd() >> 11) * 0x1.0p-53; }

typedef struct csr {
    int32_t n, ncols;
    int64_t *ptr;
    int32_t *col;
    double *val;
} csr;

/* Random rows: lengths 0..maxlen (some empty), one long row, columns unique
 * and sorted in [0, ncols). */
static void make_csr(int32_t n, int32_t ncols, int maxlen, csr *a)
{
    a->n = n;
    a->ncols = ncols;
    a->ptr = calloc((size_t)n + 1, sizeof *a->ptr);
    int32_t *len = calloc((size_t)n + 1, sizeof *len);
    for (int32_t i = 0; i < n; i++) {
        int l = (int)(rnd() % (uint64_t)(maxlen + 1));
        if (rnd() % 7 == 0) l = 0;
        if (i == n / 3 && n > 2) l = 4 * maxlen;
        if (l > ncols) l = ncols;
        len[i] = l;
        a->ptr[i + 1] = a->ptr[i] + l;
    }
    int64_t nnz = a->ptr[n];
    a->col = malloc((size_t)(nnz ? nnz : 1) * sizeof *a->col);
    a->val = malloc((size_t)(nnz ? nnz : 1) * sizeof *a->val);
    char *used = calloc((size_t)ncols + 1, 1);
    for (int32_t i = 0; i < n; i++) {
        int64_t k0 = a->ptr[i];
        int l = len[i];
        int got = 0;
        /* near-diagonal band plus random far columns */
        while (got < l) {
            /* band offset in [-4, 4], wrapped into [0, ncols): C's % keeps the sign of a negative
             * operand, so wrap with a non-negative modulo (with ncols = 2 or 3, i - 4 + ncols < 0
             * gave column -1: the bug behind the n = 2 failures and the cuSPARSE out-of-bounds read) */
            int64_t band = ((int64_t)i + (int64_t)(rnd() % 9) - 4) % ncols;
            if (band < 0) band += ncols;
            int32_t c = (rnd() % 2) ? (int32_t)band : (int32_t)(rnd() % (uint64_t)ncols);
            if (used[c]) continue;
            used[c] = 1;
            a->col[k0 + got++] = c;
        }
        for (int g = 0; g < l; g++) used[a->col[k0 + g]] = 0;
        /* insertion sort */
        for (int g = 1; g < l; g++) {
            int32_t c = a->col[k0 + g];
            int h = g - 1;
            while (h >= 0 && a->col[k0 + h] > c) {
                a->col[k0 + h + 1] = a->col[k0 + h];
                h--;
            }
            a->col[k0 + h + 1] = c;
        }
        for (int g = 0; g < l; g++) a->val[k0 + g] = 2.0 * unif() - 1.0;
    }
    free(used);
    free(len);
    /* host-side check of the generator itself: every column in [0, ncols), rows strictly ascending */
    int64_t badcol = 0;
    for (int32_t i = 0; i < n; i++)
        for (int64_t k = a->ptr[i]; k < a->ptr[i + 1]; k++)
            if (a->col[k] < 0 || a->col[k] >= ncols || (k > a->ptr[i] && a->col[k] <= a->col[k - 1])) badcol++;
    TU_CHECK_MSG(badcol == 0, "make_csr(n=%d, ncols=%d): %lld bad column indices", n, ncols, (long long)badcol);
}

static void free_csr(csr *a)
{
    free(a->ptr);
    free(a->col);
    free(a->val);
}

/* Reference y[i] = sum_k val * x[col], and the scale sum |val x| per row. */
static void csr_ref(const csr *a, const double *x, double *y, double *scale)
{
    for (int32_t i = 0; i < a->n; i++) {
        double s = 0.0, t = 0.0;
        for (int64_t k = a->ptr[i]; k < a->ptr[i + 1]; k++) {
            s += a->val[k] * x[a->col[k]];
            t += fabs(a->val[k] * x[a->col[k]]);
        }
        y[i] = s;
        scale[i] = t;
    }
}

/* Check y_perm (row i is original row perm[i], or row_map'd) against ref. */
static int compare(const char *what, int32_t n, const double *y, const double *ref, const double *scale, double tol)
{
    int bad = 0;
    for (int32_t i = 0; i < n; i++) {
        double d = fabs(y[i] - ref[i]);
        if (!(d <= tol * scale[i] + 1e-300)) {
            if (bad < 3) fprintf(stderr, "%s: row %d: %.17g vs %.17g (scale %g)\n", what, i, y[i], ref[i], scale[i]);
            bad++;
        }
    }
    TU_CHECK_MSG(bad == 0, "%s: %d rows differ", what, bad);
    return bad;
}

/* One matrix, one (C, sigma): every kernel variant, CPU backend, cuSPARSE. */
/* mat_create_fill callback: the entries of chunks [c0, c1) from a host pJDS */
static int fill_from(void *arg, int64_t c0, int64_t c1, int32_t *col, double *val)
{
    const pjds *p = arg;
    TU_CHECK(c0 >= 0 && c0 < c1 && c1 <= p->nchunks);
    int64_t off = p->chunk_start[c0], cnt = p->chunk_start[c1] - off;
    memcpy(col, p->col + off, (size_t)cnt * sizeof *col);
    memcpy(val, p->val + off, (size_t)cnt * sizeof *val);
    return PL_OK;
}

static void test_spmv_case(pl_backend *be, pl_backend *cpu, int32_t n, int maxlen, int C, int64_t sigma, int mapped)
{
    char tag[160];
    snprintf(tag, sizeof tag, "n=%d maxlen=%d C=%d sigma=%lld%s", n, maxlen, C, (long long)sigma,
             mapped ? " row_map" : "");
    int32_t ncols = mapped ? n + 17 : n; /* halo columns beyond the rows */
    if (ncols == 0) ncols = 1;
    csr a;
    make_csr(n, ncols, maxlen, &a);
    int32_t *len = malloc(((size_t)n + 1) * sizeof *len), *perm = malloc(((size_t)n + 1) * sizeof *perm);
    int32_t *iperm = malloc(((size_t)ncols + 1) * sizeof *iperm);
    int64_t nnz = a.ptr[n];
    int32_t *lcolp = malloc((size_t)(nnz ? nnz : 1) * sizeof *lcolp);
    for (int32_t i = 0; i < n; i++) len[i] = (int32_t)(a.ptr[i + 1] - a.ptr[i]);
    pjds_sort_perm(n, len, sigma, perm);
    /* the permutation applies to the first n columns; halo columns stay */
    for (int32_t c = 0; c < ncols; c++) iperm[c] = c;
    for (int32_t i = 0; i < n; i++) iperm[perm[i]] = i;
    for (int64_t k = 0; k < nnz; k++) lcolp[k] = iperm[a.col[k]];
    pjds p;
    TU_OK(pjds_create(n, ncols, a.ptr, lcolp, a.val, perm, C, sigma, &p));
    /* row_map: remote-part style, row i adds into y[map[i]], injective */
    int32_t *map = NULL;
    if (mapped) {
        map = malloc(((size_t)n + 1) * sizeof *map);
        for (int32_t i = 0; i < n; i++) map[i] = n - 1 - i;
        p.row_map = map; /* pjds_destroy frees it */
    }
    /* x in the permuted basis (halo entries at the end), original x for the ref */
    double *xo = malloc((size_t)ncols * sizeof *xo), *xp = malloc((size_t)ncols * sizeof *xp);
    for (int32_t c = 0; c < ncols; c++) xo[c] = 2.0 * unif() - 1.0;
    for (int32_t c = 0; c < ncols; c++) xp[iperm[c]] = xo[c];
    double *ref = malloc(((size_t)n + 1) * sizeof *ref), *scale = malloc(((size_t)n + 1) * sizeof *scale);
    csr_ref(&a, xo, ref, scale);
    /* expected output in the permuted basis: yexp[i] for permuted row i */
    double *y0 = malloc(((size_t)n + 1) * sizeof *y0), *yexp = malloc(((size_t)n + 1) * sizeof *yexp);
    double *sexp = malloc(((size_t)n + 1) * sizeof *sexp), *yh = malloc(((size_t)n + 1) * sizeof *yh);
    for (int32_t i = 0; i < n; i++) y0[i] = mapped ? 2.0 * unif() - 1.0 : 0.0;
    for (int32_t i = 0; i < n; i++) {
        int32_t dst = mapped ? map[i] : i;
        yexp[dst] = y0[dst] + ref[perm[i]];
        sexp[dst] = scale[perm[i]] + fabs(y0[dst]);
    }
    double *dx = NULL, *dy = NULL;
    void *mat = NULL;
    TU_OK(be->vec_alloc(be, (size_t)ncols, &dx));
    TU_OK(be->vec_alloc(be, (size_t)n, &dy));
    TU_OK(be->upload(be, dx, xp, (size_t)ncols));
    TU_OK(be->mat_create(be, &p, &mat));
    int nv = pl_cuda_spmv_nvariants();
    for (int v = 0; v < nv && mat; v++) {
        char w[240];
        snprintf(w, sizeof w, "%s kernel %s", tag, pl_cuda_spmv_variant_name(v));
        TU_OK(pl_cuda_set_variant(be, v));
        TU_OK(be->upload(be, dy, y0, (size_t)n));
        TU_OK(be->spmv(be, mat, dx, dy));
        TU_OK(be->sync(be));
        TU_OK(be->download(be, yh, dy, (size_t)n));
        compare(w, n, yh, yexp, sexp, 1e-14);
    }
    TU_OK(pl_cuda_set_variant(be, pl_cuda_spmv_variant_default()));
    /* the streamed creation (staging of PJDS_FILL_STAGE_ENTRIES, set in
     * main: many chunk ranges) gives the same matrix: equal results */
    if (be->mat_create_fill && mat) {
        pjds lay = p;
        lay.col = NULL;
        lay.val = NULL;
        void *mf = NULL;
        double *y1 = malloc(((size_t)n + 1) * sizeof *y1);
        TU_OK(be->mat_create_fill(be, &lay, fill_from, &p, &mf));
        if (mf) {
            TU_OK(be->upload(be, dy, y0, (size_t)n));
            TU_OK(be->spmv(be, mat, dx, dy));
            TU_OK(be->download(be, yh, dy, (size_t)n));
            TU_OK(be->upload(be, dy, y0, (size_t)n));
            TU_OK(be->spmv(be, mf, dx, dy));
            TU_OK(be->download(be, y1, dy, (size_t)n));
            TU_CHECK_MSG(n == 0 || !memcmp(y1, yh, (size_t)n * sizeof *y1), "%s: mat_create_fill differs", tag);
            be->mat_destroy(be, mf);
        }
        free(y1);
    }
    /* CPU backend on the same pJDS */
    {
        void *cm = NULL;
        double *cy = NULL;
        TU_OK(cpu->mat_create(cpu, &p, &cm));
        TU_OK(cpu->vec_alloc(cpu, (size_t)n, &cy));
        memcpy(cy, y0, (size_t)n * sizeof *cy);
        TU_OK(cpu->spmv(cpu, cm, xp, cy));
        char w[200];
        snprintf(w, sizeof w, "%s CPU backend", tag);
        compare(w, n, cy, yexp, sexp, 1e-14);
        /* GPU default kernel vs CPU backend directly */
        TU_OK(be->upload(be, dy, y0, (size_t)n));
        TU_OK(be->spmv(be, mat, dx, dy));
        TU_OK(be->download(be, yh, dy, (size_t)n));
        snprintf(w, sizeof w, "%s GPU vs CPU backend", tag);
        compare(w, n, yh, cy, sexp, 1e-14);
        cpu->vec_free(cpu, cy);
        cpu->mat_destroy(cpu, cm);
    }
    /* cuSPARSE reference formats (not for row_map) */
    if (!mapped && n > 0) {
        pl_cusparse_mat *m = NULL;
        char w[200];
        int e = pl_cusparse_sell_create(be, &p, &m);
        if (e != PL_OK) {
            /* cuSPARSE may refuse some slice sizes; the bench's C = 32 must work */
            fprintf(stderr, "%s: cuSPARSE SELL refused: %s\n", tag, pl_error_message());
            TU_CHECK_MSG(C != 32, "cuSPARSE sliced ELLPACK with slice 32 failed (%s)", tag);
            pl_error_clear();
        }
        if (m) {
            TU_OK(pl_cusparse_spmv(be, m, dx, dy));
            TU_OK(be->download(be, yh, dy, (size_t)n));
            snprintf(w, sizeof w, "%s cuSPARSE SELL", tag);
            compare(w, n, yh, yexp, sexp, 1e-14);
            pl_cusparse_destroy(be, &m);
        }
        /* CSR in the original order */
        TU_OK(pl_cusparse_csr_create(be, n, ncols, a.ptr, a.col, a.val, &m));
        if (m) {
            TU_OK(be->upload(be, dx, xo, (size_t)ncols));
            TU_OK(pl_cusparse_spmv(be, m, dx, dy));
            TU_OK(be->download(be, yh, dy, (size_t)n));
            snprintf(w, sizeof w, "%s cuSPARSE CSR", tag);
            compare(w, n, yh, ref, scale, 1e-14);
            pl_cusparse_destroy(be, &m);
        }
    }
    if (mat) be->mat_destroy(be, mat);
    be->vec_free(be, dx);
    be->vec_free(be, dy);
    pjds_destroy(&p);
    free_csr(&a);
    free(len);
    free(perm);
    free(iperm);
    free(lcolp);
    free(xo);
    free(xp);
    free(ref);
    free(scale);
    free(y0);
    free(yexp);
    free(sexp);
    free(yh);
}

static double maxrel(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]) / fmax(1.0, fabs(b[i]));
        if (d > m || d != d) m = d;
    }
    return m;
}

/* gemm_t with two columns (our one-pass kernel, Lanczos' trigger check):
 * the columns j, j + 1 of V itself and a separate pair, against the CPU's
 * row tiles; 16-byte aligned (even ld) and not, n even and odd, k across
 * the kernel's tiles of 8 and 16. */
static void test_gemm_t2(pl_backend *g, pl_backend *c)
{
    const size_t ns[2] = {200001, 4096};
    const int ks[7] = {1, 5, 8, 9, 16, 17, 32};
    for (int a = 0; a < 2; a++)
        for (int e = 0; e < 2; e++) {
            const size_t n = ns[e], ld = n + (a ? 1 : (n % 2 ? 1 : 2));
            const int kmax = 32;
            double *hv = malloc(ld * (size_t)(kmax + 2) * sizeof *hv);
            for (size_t i = 0; i < ld * (size_t)(kmax + 2); i++) hv[i] = 2.0 * unif() - 1.0;
            double *gV, *cV;
            TU_OK(g->vec_alloc(g, ld * (size_t)(kmax + 2), &gV));
            TU_OK(c->vec_alloc(c, ld * (size_t)(kmax + 2), &cV));
            TU_OK(g->upload(g, gV, hv, ld * (size_t)(kmax + 2)));
            TU_OK(c->upload(c, cV, hv, ld * (size_t)(kmax + 2)));
            for (int q = 0; q < 7; q++) {
                const int k = ks[q];
                double C1[64], C2[64];
                /* W = columns k - 2, k - 1 of V (inside it, as lanczos.c reads them) */
                const size_t w0 = (size_t)(k >= 2 ? k - 2 : 0) * ld;
                TU_OK(g->gemm_t(g, n, k, 2, gV, ld, gV + w0, ld, C1));
                TU_OK(c->gemm_t(c, n, k, 2, cV, ld, cV + w0, ld, C2));
                for (int i = 0; i < 2 * k; i++)
                    TU_CHECK_MSG(fabs(C1[i] - C2[i]) <= 1e-12 * (1.0 + fabs(C2[i])),
                                 "gemm_t2 n %zu ld %zu k %d entry %d: %.17g vs %.17g", n, ld, k, i, C1[i], C2[i]);
                /* W = the two columns after V[:, 0:k] */
                TU_OK(g->gemm_t(g, n, k, 2, gV, ld, gV + (size_t)kmax * ld, ld, C1));
                TU_OK(c->gemm_t(c, n, k, 2, cV, ld, cV + (size_t)kmax * ld, ld, C2));
                for (int i = 0; i < 2 * k; i++)
                    TU_CHECK_MSG(fabs(C1[i] - C2[i]) <= 1e-12 * (1.0 + fabs(C2[i])),
                                 "gemm_t2 (separate W) n %zu k %d entry %d", n, k, i);
            }
            g->vec_free(g, gV);
            c->vec_free(c, cV);
            free(hv);
        }
}

/* Every vector operation: GPU vs CPU backend on the same data. */
static void test_vector_ops(pl_backend *g, pl_backend *c)
{
    const size_t n = 3001, ld = 3007;
    const int k = 6, m = 4, ldy = 7;
    double *hv = malloc(ld * (size_t)k * sizeof *hv), *hw = malloc(n * sizeof *hw), *hx = malloc(n * sizeof *hx);
    double *hY = malloc((size_t)ldy * (size_t)m * sizeof *hY), hh[8], hh2[8], r1 = 0, r2 = 0;
    double *out1 = malloc(ld * (size_t)m * sizeof *out1), *out2 = malloc(ld * (size_t)m * sizeof *out2);
    for (size_t i = 0; i < ld * (size_t)k; i++) hv[i] = 2.0 * unif() - 1.0;
    for (size_t i = 0; i < n; i++) hw[i] = 2.0 * unif() - 1.0, hx[i] = 2.0 * unif() - 1.0;
    for (int i = 0; i < ldy * m; i++) hY[i] = 2.0 * unif() - 1.0;
    for (int i = 0; i < k; i++) hh[i] = 2.0 * unif() - 1.0;
    double *gV, *gw, *gx, *gW, *cV, *cw, *cx, *cW;
    TU_OK(g->vec_alloc(g, ld * (size_t)k, &gV));
    TU_OK(g->vec_alloc(g, n, &gw));
    TU_OK(g->vec_alloc(g, n, &gx));
    TU_OK(g->vec_alloc(g, ld * (size_t)m, &gW));
    TU_OK(c->vec_alloc(c, ld * (size_t)k, &cV));
    TU_OK(c->vec_alloc(c, n, &cw));
    TU_OK(c->vec_alloc(c, n, &cx));
    TU_OK(c->vec_alloc(c, ld * (size_t)m, &cW));
    pl_backend *bs[2] = {g, c};
    double *V[2] = {gV, cV}, *w[2] = {gw, cw}, *x[2] = {gx, cx}, *W[2] = {gW, cW};
    double h2_before = g->bytes_h2d, d2h_before = g->bytes_d2h;
    for (int b = 0; b < 2; b++) {
        pl_backend *be = bs[b];
        TU_OK(be->upload(be, V[b], hv, ld * (size_t)k));
        TU_OK(be->upload(be, w[b], hw, n));
        TU_OK(be->upload(be, x[b], hx, n));
    }
    TU_CHECK(g->bytes_h2d - h2_before == (double)((ld * (size_t)k + 2 * n) * sizeof(double)));
    /* dot */
    TU_OK(g->dot(g, n, gw, gx, &r1));
    TU_OK(c->dot(c, n, cw, cx, &r2));
    TU_CLOSE(r1, r2, 1e-13);
    TU_CHECK(g->bytes_d2h > d2h_before);
    /* axpy, scal, copy, set */
    for (int b = 0; b < 2; b++) {
        pl_backend *be = bs[b];
        TU_OK(be->axpy(be, n, -0.75, x[b], w[b]));
        TU_OK(be->scal(be, n, 1.5, w[b]));
        TU_OK(be->copy(be, n, w[b], W[b]));
        TU_OK(be->set(be, n, 3.25, W[b] + ld));
        TU_OK(be->set(be, n, 0.0, W[b] + 2 * ld));
        TU_OK(be->copy(be, n, x[b], W[b] + 3 * ld));
        TU_OK(be->download(be, b ? out2 : out1, W[b], ld * (size_t)m));
    }
    for (size_t i = 0; i < n; i++) TU_CHECK(out1[ld + i] == 3.25 && out1[2 * ld + i] == 0.0);
    {
        double e = 0;
        for (int col = 0; col < m; col++) {
            double t = maxrel(out1 + (size_t)col * ld, out2 + (size_t)col * ld, n);
            if (t > e) e = t;
        }
        TU_CHECK_MSG(e <= 1e-14, "axpy/scal/copy/set differ by %g", e);
    }
    /* gemv_t */
    TU_OK(g->gemv_t(g, n, k, gV, ld, gw, hh2));
    double hh3[8];
    TU_OK(c->gemv_t(c, n, k, cV, ld, cw, hh3));
    for (int i = 0; i < k; i++) TU_CLOSE(hh2[i], hh3[i], 1e-13);
    /* gemv_n: w = 0.5 w - 2 V h */
    TU_OK(g->gemv_n(g, n, k, -2.0, gV, ld, hh, 0.5, gw));
    TU_OK(c->gemv_n(c, n, k, -2.0, cV, ld, hh, 0.5, cw));
    TU_OK(g->download(g, out1, gw, n));
    TU_OK(c->download(c, out2, cw, n));
    TU_CHECK_MSG(maxrel(out1, out2, n) <= 1e-13, "gemv_n differs by %g", maxrel(out1, out2, n));
    /* gemm: W = V Y */
    TU_OK(g->gemm(g, n, k, m, gV, ld, hY, ldy, gW, ld));
    TU_OK(c->gemm(c, n, k, m, cV, ld, hY, ldy, cW, ld));
    TU_OK(g->download(g, out1, gW, ld * (size_t)m));
    TU_OK(c->download(c, out2, cW, ld * (size_t)m));
    for (int col = 0; col < m; col++)
        TU_CHECK_MSG(maxrel(out1 + (size_t)col * ld, out2 + (size_t)col * ld, n) <= 1e-13, "gemm column %d", col);
    /* gemm_t: C = V^T W (cuBLAS dgemm) against the CPU's row tiles */
    {
        double C1[64], C2[64];
        TU_OK(g->gemm_t(g, n, k, m, gV, ld, gW, ld, C1));
        TU_OK(c->gemm_t(c, n, k, m, cV, ld, cW, ld, C2));
        for (int q = 0; q < k * m; q++) TU_CLOSE(C1[q], C2[q], 1e-12 * (1.0 + fabs(C2[q])));
    }
    /* gather through an index array */
    {
        int32_t idx[5] = {7, 0, 3000, 12, 7};
        int32_t *gi = NULL;
        double gb[5], *gbuf = NULL;
        TU_OK(g->idx_create(g, idx, 5, &gi));
        TU_OK(g->vec_alloc(g, 5, &gbuf));
        TU_OK(g->gather(g, 5, gi, gx, gbuf));
        TU_OK(g->download(g, gb, gbuf, 5));
        for (int i = 0; i < 5; i++) TU_CHECK(gb[i] == hx[idx[i]]);
        g->idx_destroy(g, gi);
        g->vec_free(g, gbuf);
    }
    /* zero-length operations are no-ops */
    TU_OK(g->dot(g, 0, gw, gx, &r1));
    TU_CHECK(r1 == 0.0);
    TU_OK(g->axpy(g, 0, 1.0, gx, gw));
    for (int b = 0; b < 2; b++) {
        bs[b]->vec_free(bs[b], V[b]);
        bs[b]->vec_free(bs[b], w[b]);
        bs[b]->vec_free(bs[b], x[b]);
        bs[b]->vec_free(bs[b], W[b]);
    }
    free(hv);
    free(hw);
    free(hx);
    free(hY);
    free(out1);
    free(out2);
}

/* rand_fill against lanczos.h's lz_random_element, bit for bit: sizes
 * around the block and grid edges, consecutive global indices from 0 and
 * from a large offset, two seeds */
static void test_rand_fill(pl_backend *be)
{
    TU_CHECK(be->rand_fill != NULL);
    if (!be->rand_fill) return;
    const size_t ns[] = {0, 1, 255, 256, 257, 100003, 2000001};
    const uint64_t seeds[] = {1, 0xD1B54A32D192ED03ull};
    const int64_t offs[] = {0, 123456789012345ll};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
        const size_t n = ns[a];
        double *d = NULL, *h = malloc((n ? n : 1) * sizeof *h);
        TU_OK(be->vec_alloc(be, n ? n : 1, &d));
        if (!d || !h) {
            free(h);
            return;
        }
        for (size_t s = 0; s < 2; s++)
            for (size_t o = 0; o < 2; o++) {
                TU_OK(be->rand_fill(be, n, seeds[s], offs[o], d));
                if (n) TU_OK(be->download(be, h, d, n));
                size_t bad = 0;
                for (size_t i = 0; i < n; i++) {
                    const double r = lz_random_element(seeds[s], offs[o] + (int64_t)i);
                    bad += memcmp(&r, &h[i], sizeof r) != 0;
                }
                TU_CHECK(bad == 0);
                if (bad) fprintf(stderr, "rand_fill: n %zu seed %zu offset %zu: %zu elements differ\n", n, s, o, bad);
            }
        be->vec_free(be, d);
        free(h);
    }
}

static void test_misc(pl_backend *be)
{
    /* memory plan */
    TU_OK(pl_backend_mem_check(be, 1024.0));
    int e = pl_backend_mem_check(be, 1e18);
    TU_CHECK(e == PL_ERR_INPUT);
    TU_CHECK(strstr(pl_error_message(), "needs") != NULL && strstr(pl_error_message(), "GiB free") != NULL);
    pl_error_clear();
    /* copy bandwidth is a positive number */
    double gbs = 0.0;
    TU_OK(pl_cuda_copy_bandwidth(be, (size_t)64 << 20, 5, &gbs));
    TU_CHECK(gbs > 1.0);
    fprintf(stderr, "copy bandwidth (64 MiB): %.0f GB/s\n", gbs);
    /* device selection modulo the count */
    pl_backend *b2 = NULL;
    TU_OK(pl_backend_cuda_create(1000 * pl_cuda_device_count() + 0, &b2));
    int dev = -1;
    char name[128];
    if (b2) {
        TU_OK(pl_cuda_device_name(b2, name, sizeof name, &dev));
        TU_CHECK(dev == 0);
        pl_backend_destroy(&b2);
    }
    /* a cpu backend is refused by the CUDA-only entry points */
    pl_backend *c = NULL;
    TU_OK(pl_backend_cpu_create(&c));
    TU_CHECK(pl_cuda_set_variant(c, 0) == PL_ERR_ARG);
    test_rand_fill(be);
    pl_error_clear();
    pl_backend_destroy(&c);
}
#endif

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--device-count")) {
        printf("%d\n", pl_cuda_device_count());
        return 0;
    }
#if !PJDS_HAVE_CUDA
    TU_SKIP("built without CUDA");
#else
    if (pl_cuda_device_count() == 0) TU_SKIP("no CUDA device");
    setenv("PJDS_FILL_STAGE_ENTRIES", "1000", 1); /* mat_create_fill in many ranges */
    pl_backend *be = NULL, *cpu = NULL;
    TU_OK(pl_backend_cuda_create(0, &be));
    TU_OK(pl_backend_cpu_create(&cpu));
    if (!be || !cpu) return tu_result("test_cuda_backend");
    char name[128];
    int dev = 0;
    TU_OK(pl_cuda_device_name(be, name, sizeof name, &dev));
    fprintf(stderr, "device %d: %s, %d kernel variants\n", dev, name, pl_cuda_spmv_nvariants());

    const int Cs[] = {1, 4, 7, 32, 64};
    const int64_t sigmas[] = {1, 16, 0};
    const int32_t ns[] = {0, 1, 2, 31, 33, 1000, 5003};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t c = 0; c < sizeof Cs / sizeof *Cs; c++)
            for (size_t s = 0; s < sizeof sigmas / sizeof *sigmas; s++)
                test_spmv_case(be, cpu, ns[a], 1 + (int)(rnd() % 20), Cs[c], sigmas[s], 0);
    /* row_map accumulate with halo columns */
    for (size_t c = 0; c < sizeof Cs / sizeof *Cs; c++) {
        test_spmv_case(be, cpu, 777, 12, Cs[c], 0, 1);
        test_spmv_case(be, cpu, 1, 3, Cs[c], 1, 1);
    }
    /* larger ones (skipped under PJDS_TEST_QUICK, e.g. in compute-sanitizer) */
    const char *quick = getenv("PJDS_TEST_QUICK");
    if (!quick || !*quick || !strcmp(quick, "0")) {
        test_spmv_case(be, cpu, 200003, 30, 32, 65536, 0);
        test_spmv_case(be, cpu, 200003, 30, 32, 0, 0);
    }
    test_vector_ops(be, cpu);
    test_gemm_t2(be, cpu);
    test_misc(be);
    pl_backend_destroy(&be);
    pl_backend_destroy(&cpu);
#endif
    return tu_result("test_cuda_backend");
}
