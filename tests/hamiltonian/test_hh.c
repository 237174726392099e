/* test_hh.c — unit tests of the Holstein-Hubbard row generator.
 *
 *  1. structure and symmetry: for many small models (both phonon bases, both
 *     boundaries, g != 0, L = 2..6) every row is sorted, in range, free of
 *     exact zeros, within hh_model_max_row_len, and A == A^T entry by entry;
 *     hh_row, hh_row_lengths and the per-row phonon ranking path agree with
 *     the CSR build;
 *  2. rows built in pieces [r0, r1) equal the rows built whole;
 *  3. dense LAPACKE_dsyev references: the 4-site Hubbard ring (known ground
 *     state), the atomic limit t = 0 (exact -g^2 n^2 / w0 per site), and
 *     site vs normal phonon basis converging to each other as M grows;
 *  4. basis counts (HMEp N = 6,201,600; small hand-counted cases), input
 *     errors, ranking round trips, a hand-written 2-site matrix. */
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_impl.h"
#include "pl_error.h"
#include "testutil.h"

static hh_params model(int L, int nu, int nd, double t, double U, double w0, double g, int M, int basis, int bc)
{
    hh_params p = {.sites = L, .n_up = nu, .n_down = nd, .hopping = t,
                      .hubbard_u = U, .phonon_frequency = w0, .coupling = g, .max_phonons = M,
                      .phonon_basis = basis, .boundary = bc};
    return p;
}

static const char *describe(const hh_params *p)
{
    static char s[200];
    snprintf(s, sizeof s, "L=%d up=%d dn=%d t=%g U=%g w0=%g g=%g M=%d %s %s", p->sites, p->n_up, p->n_down,
             p->hopping, p->hubbard_u, p->phonon_frequency, p->coupling, p->max_phonons,
             p->phonon_basis == PL_PHONON_SITE ? "site" : "normal", p->boundary == PL_BOUNDARY_OPEN ? "open" : "periodic");
    return s;
}

/* value at (i, j) of a whole CSR matrix (binary search), and whether found */
static int csr_find(const pl_csr *a, int64_t i, int64_t j, double *v)
{
    int64_t lo = a->row_ptr[i], hi = a->row_ptr[i + 1];
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (a->col[mid] < j) lo = mid + 1;
        else hi = mid;
    }
    if (lo < a->row_ptr[i + 1] && a->col[lo] == j) {
        *v = a->val[lo];
        return 1;
    }
    return 0;
}

static int same_csr(const pl_csr *a, const pl_csr *b)
{
    if (a->nrows != b->nrows || a->row0 != b->row0 || pl_csr_nnz(a) != pl_csr_nnz(b)) return 0;
    for (int64_t i = 0; i <= a->nrows; i++)
        if (a->row_ptr[i] != b->row_ptr[i]) return 0;
    for (int64_t k = 0; k < pl_csr_nnz(a); k++)
        if (a->col[k] != b->col[k] || a->val[k] != b->val[k]) return 0;
    return 1;
}

/* 1 + 2: structure, symmetry, consistency of all entry points, pieces */
static void check_model(const hh_params *p)
{
    hh_model *m = NULL, *mf = NULL;
    pl_csr a = {0};
    TU_OK(hh_model_create(p, &m));
    TU_OK(hh_model_create_opts(p, 0, &mf));
    if (!m || !mf) return;
    const int64_t N = hh_model_rows(m);
    TU_OK(hh_rows_csr(m, 0, N, &a));
    if (!a.row_ptr) return;
    const int maxlen = hh_model_max_row_len(m);
    int bad_struct = 0, bad_sym = 0, bad_row = 0, bad_len = 0;
    int64_t *col = malloc((size_t)maxlen * sizeof *col);
    double *val = malloc((size_t)maxlen * sizeof *val);
    int32_t *len = malloc((size_t)N * sizeof *len);
    TU_OK(hh_row_lengths(m, 0, N, len));
    for (int64_t i = 0; i < N; i++) {
        int64_t b = a.row_ptr[i], e = a.row_ptr[i + 1];
        if (e - b > maxlen || e - b != len[i]) bad_len++;
        for (int64_t k = b; k < e; k++) {
            if (a.col[k] < 0 || a.col[k] >= N || a.val[k] == 0.0 || !isfinite(a.val[k]) ||
                (k > b && a.col[k] <= a.col[k - 1]))
                bad_struct++;
            double v;
            if (!csr_find(&a, a.col[k], i, &v) || v != a.val[k]) bad_sym++;
        }
        /* hh_row on both ranking paths */
        for (int path = 0; path < 2; path++) {
            int n = -1;
            TU_OK(hh_row(path ? mf : m, i, &n, col, val));
            if (n != e - b) {
                bad_row++;
                continue;
            }
            for (int k = 0; k < n; k++)
                if (col[k] != a.col[b + k] || val[k] != a.val[b + k]) bad_row++;
        }
    }
    TU_CHECK_MSG(bad_struct == 0, "%s: %d malformed entries", describe(p), bad_struct);
    TU_CHECK_MSG(bad_sym == 0, "%s: %d entries without an equal transpose", describe(p), bad_sym);
    TU_CHECK_MSG(bad_row == 0, "%s: hh_row differs from the CSR build in %d places", describe(p), bad_row);
    TU_CHECK_MSG(bad_len == 0, "%s: %d row lengths wrong", describe(p), bad_len);
    /* the per-row ranking path builds the same CSR */
    pl_csr af = {0};
    TU_OK(hh_rows_csr(mf, 0, N, &af));
    TU_CHECK_MSG(same_csr(&a, &af), "%s: table and per-row phonon paths differ", describe(p));
    pl_csr_destroy(&af);
    /* pieces: three uneven blocks and an empty one */
    int64_t cut[5] = {0, N / 7, N / 7, N / 2 + 1 < N ? N / 2 + 1 : N, N};
    for (int s = 0; s < 4; s++) {
        pl_csr piece = {0};
        TU_OK(hh_rows_csr(m, cut[s], cut[s + 1], &piece));
        int ok = piece.row_ptr && piece.row0 == cut[s] && piece.nrows == cut[s + 1] - cut[s] &&
                 piece.nrows_global == N;
        for (int64_t i = 0; ok && i < piece.nrows; i++) {
            int64_t gb = a.row_ptr[cut[s] + i], pb = piece.row_ptr[i];
            if (piece.row_ptr[i + 1] - pb != a.row_ptr[cut[s] + i + 1] - gb) ok = 0;
            for (int64_t k = 0; ok && k < piece.row_ptr[i + 1] - pb; k++)
                if (piece.col[pb + k] != a.col[gb + k] || piece.val[pb + k] != a.val[gb + k]) ok = 0;
        }
        TU_CHECK_MSG(ok, "%s: piece [%lld, %lld) differs from the whole build", describe(p), (long long)cut[s],
                     (long long)cut[s + 1]);
        pl_csr_destroy(&piece);
    }
    free(col);
    free(val);
    free(len);
    pl_csr_destroy(&a);
    hh_model_destroy(&m);
    hh_model_destroy(&mf);
    TU_CHECK(m == NULL && mf == NULL);
}

/* all eigenvalues (ascending) of the whole matrix by dense LAPACKE_dsyev */
static double *dense_eigenvalues(const hh_params *p, int64_t *n_out)
{
    hh_model *m = NULL;
    pl_csr a = {0};
    *n_out = 0;
    TU_OK(hh_model_create(p, &m));
    if (!m) return NULL;
    const int64_t N = hh_model_rows(m);
    TU_OK(hh_rows_csr(m, 0, N, &a));
    hh_model_destroy(&m);
    if (!a.row_ptr) return NULL;
    double *h = calloc((size_t)(N * N), sizeof *h);
    double *w = malloc((size_t)N * sizeof *w);
    for (int64_t i = 0; i < N; i++)
        for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++) h[i * N + a.col[k]] = a.val[k];
    pl_csr_destroy(&a);
    int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (lapack_int)N, h, (lapack_int)N, w);
    TU_CHECK_MSG(info == 0, "dsyev info %d", info);
    free(h);
    *n_out = N;
    return w;
}

static double ground_state(const hh_params *p)
{
    int64_t n;
    double *w = dense_eigenvalues(p, &n);
    double e0 = w && n ? w[0] : NAN;
    free(w);
    return e0;
}

static void test_dense(void)
{
    /* 4-site Hubbard ring, half filling, U = 4: E0 = -2.1027484835 */
    for (int basis = 0; basis < 2; basis++) {
        hh_params p = model(4, 2, 2, 1.0, 4.0, 1.0, 0.0, 0, basis, PL_BOUNDARY_PERIODIC);
        TU_CLOSE(ground_state(&p), -2.1027484835, 1e-9);
        /* g != 0 with M = 0: phonons frozen; site basis: unchanged spectrum,
         * normal basis: only the uniform-mode shift -g^2 N_e^2 / (L w0) = -4 g^2 */
        p.coupling = 0.7;
        if (basis == PL_PHONON_SITE) TU_CLOSE(ground_state(&p), -2.1027484835, 1e-9);
        else TU_CLOSE(ground_state(&p), -2.1027484835 - 4.0 * 0.49, 1e-9);
    }
    /* free fermions on the 4-site ring: single-particle levels -2t cos(2 pi k / 4)
     * = -2, 0, 0, 2.  The matrix-element sign (-1)^(N-1) of the boundary hop
     * is what makes these fermions periodic: N = 2 gives E0 = -2 (twice);
     * without the sign (hard-core bosons' matrix) it would be -2 sqrt2. */
    {
        hh_params p = model(4, 2, 0, 1.0, 0.0, 1.0, 0.0, 0, PL_PHONON_SITE, PL_BOUNDARY_PERIODIC);
        int64_t n;
        double *w = dense_eigenvalues(&p, &n);
        if (w) {
            TU_CHECK(n == 6);
            TU_CLOSE(w[0], -2.0, 1e-12);
            TU_CLOSE(w[1], -2.0, 1e-12);
            TU_CLOSE(w[2], 0.0, 1e-12);
        }
        free(w);
        p.n_up = 1; /* one electron: k = 0 level -2t */
        TU_CLOSE(ground_state(&p), -2.0, 1e-12);
        p.n_up = 3; /* three: -2 + 0 + 0 */
        TU_CLOSE(ground_state(&p), -2.0, 1e-12);
        p.n_up = 2; /* 2 up 2 down, U = 0: twice the spinless value */
        p.n_down = 2;
        TU_CLOSE(ground_state(&p), -4.0, 1e-12);
        p.n_down = 0;
        p.n_up = 2;
        p.boundary = PL_BOUNDARY_OPEN; /* open chain: levels -2 cos(pi k / 5), k = 1..4 */
        TU_CLOSE(ground_state(&p), -2.0 * (cos(acos(-1.0) / 5) + cos(2 * acos(-1.0) / 5)), 1e-12);
    }
    /* atomic limit t = 0, L = 2, 1 up 1 down: displaced oscillators give
     * E = U d - g^2 sum_i n_i^2 / w0; with U = 0.2, g = 0.5, w0 = 1: the
     * on-site bipolaron 0.2 - 4 g^2 = -0.8 lies below the two polarons -0.5 */
    for (int basis = 0; basis < 2; basis++) {
        hh_params p = model(2, 1, 1, 0.0, 0.2, 1.0, 0.5, basis == PL_PHONON_SITE ? 20 : 40, basis,
                               PL_BOUNDARY_PERIODIC);
        int64_t n;
        double *w = dense_eigenvalues(&p, &n);
        if (w) {
            TU_CLOSE(w[0], -0.8, 1e-10);
            TU_CLOSE(w[1], -0.8, 1e-10); /* the bipolaron on either site */
            TU_CLOSE(w[2], -0.5, 1e-10);
        }
        free(w);
    }
    /* site vs normal phonon basis: different truncations, same limit.
     * L = 3 ring, 1 up 1 down, t = 1, U = 2, w0 = 1, g = 0.5. */
    {
        double prev = INFINITY, diff = INFINITY;
        int monotone = 1;
        for (int M = 2; M <= 8; M += 2) {
            hh_params ps = model(3, 1, 1, 1.0, 2.0, 1.0, 0.5, M, PL_PHONON_SITE, PL_BOUNDARY_PERIODIC);
            hh_params pn = ps;
            pn.phonon_basis = PL_PHONON_NORMAL;
            double es = ground_state(&ps), en = ground_state(&pn);
            diff = fabs(es - en);
            printf("site vs normal, M = %d: E_site = %.12f E_normal = %.12f |diff| = %.3e\n", M, es, en, diff);
            if (!(diff < prev)) monotone = 0;
            prev = diff;
        }
        TU_CHECK_MSG(monotone, "|E_site - E_normal| does not decrease with M");
        TU_CHECK_MSG(diff < 1e-3, "|E_site - E_normal| = %g at M = 8", diff);
    }
}

static void test_counts(void)
{
    hh_model *m = NULL;
    /* HMEp: C(6,3)^2 = 400 electron states x C(15+5,5) = 15504 phonon states */
    hh_params p = model(6, 3, 3, 1.0, 4.0, 1.0, 1.0, 15, PL_PHONON_NORMAL, PL_BOUNDARY_PERIODIC);
    TU_OK(hh_model_create(&p, &m));
    if (m) {
        int64_t nu, nd, nph;
        hh_model_dims(m, &nu, &nd, &nph);
        TU_CHECK(nu == 20 && nd == 20 && nph == 15504);
        TU_CHECK(hh_model_rows(m) == INT64_C(6201600));
        TU_CHECK(hh_model_max_row_len(m) == 2 * 6 + 2 * 5 + 1);
    }
    hh_model_destroy(&m);
    /* site basis: L = 3, 1 up 1 down, M = 2: 3 x 3 x C(5,3) = 90 */
    p = model(3, 1, 1, 1.0, 0.0, 1.0, 0.5, 2, PL_PHONON_SITE, PL_BOUNDARY_OPEN);
    TU_OK(hh_model_create(&p, &m));
    if (m) TU_CHECK(hh_model_rows(m) == 90);
    hh_model_destroy(&m);
    /* empty and full bands */
    p = model(5, 0, 5, 1.0, 0.0, 1.0, 0.5, 1, PL_PHONON_NORMAL, PL_BOUNDARY_PERIODIC);
    TU_OK(hh_model_create(&p, &m));
    if (m) TU_CHECK(hh_model_rows(m) == 5); /* 1 x 1 x C(1+4,4) */
    hh_model_destroy(&m);

    /* hand-written 2-site matrix: L = 2 periodic, 1 up, g = 0, M = 0:
     * both bonds join the two states: H = [[0, -2t], [-2t, 0]], no diagonal */
    p = model(2, 1, 0, 0.75, 3.0, 1.0, 0.0, 0, PL_PHONON_SITE, PL_BOUNDARY_PERIODIC);
    pl_csr a = {0};
    TU_OK(hh_model_create(&p, &m));
    if (m) TU_OK(hh_rows_csr(m, 0, 2, &a));
    if (a.row_ptr) {
        TU_CHECK(pl_csr_nnz(&a) == 2 && a.row_ptr[1] == 1);
        TU_CHECK(a.col[0] == 1 && a.col[1] == 0 && a.val[0] == -1.5 && a.val[1] == -1.5);
    }
    pl_csr_destroy(&a);
    hh_model_destroy(&m);
    p.boundary = PL_BOUNDARY_OPEN; /* one bond: -t */
    TU_OK(hh_model_create(&p, &m));
    if (m) TU_OK(hh_rows_csr(m, 0, 2, &a));
    if (a.row_ptr) TU_CHECK(pl_csr_nnz(&a) == 2 && a.val[0] == -0.75);
    pl_csr_destroy(&a);
    hh_model_destroy(&m);
    /* L = 2 site basis, 1 up, t = 0, U = 0, w0 = 1, g = 1, M = 1: states
     * electron on site 0/1 x phonons {(0,0), (0,1), (1,0)}; row 0 (site 0,
     * no phonon): coupling -g n_0 sqrt(1) to (1,0) = rank 2, no diagonal */
    p = model(2, 1, 0, 0.0, 0.0, 1.0, 1.0, 1, PL_PHONON_SITE, PL_BOUNDARY_PERIODIC);
    TU_OK(hh_model_create(&p, &m));
    if (m) TU_OK(hh_rows_csr(m, 0, hh_model_rows(m), &a));
    if (a.row_ptr) {
        TU_CHECK(a.nrows == 6 && pl_csr_nnz(&a) == 4 + 4); /* 2 coupling pairs + 4 diagonals w0 n_ph = 1 */
        TU_CHECK(a.row_ptr[1] == 1 && a.col[0] == 2 && a.val[0] == -1.0);
    }
    pl_csr_destroy(&a);
    hh_model_destroy(&m);

    /* HMEp diagonal: U d + w0 n_ph - 6 cancels exactly, e.g. d = 0, n_ph = 6 */
    p = model(6, 3, 3, 1.0, 4.0, 1.0, 1.0, 15, PL_PHONON_NORMAL, PL_BOUNDARY_PERIODIC);
    TU_OK(hh_model_create(&p, &m));
    if (m) {
        TU_CHECK(m->shift == -6.0);
        /* up = sites {0,1,2}, down = {3,4,5} (d = 0); phonon state (0,0,0,0,6) */
        int64_t iu = hh_el_rank(m, 0x07), id = hh_el_rank(m, 0x38);
        int32_t occ[5] = {0, 0, 0, 0, 6};
        int64_t row = (iu * 20 + id) * 15504 + hh_ph_rank(m, occ);
        int n;
        int64_t col[64];
        double val[64];
        TU_OK(hh_row(m, row, &n, col, val));
        int has_diag = 0;
        for (int k = 0; k < n; k++) has_diag |= col[k] == row;
        TU_CHECK_MSG(!has_diag, "cancelled diagonal stored");
    }
    hh_model_destroy(&m);

    /* input errors: one line naming the key */
    p = model(62, 31, 31, 1.0, 0.0, 1.0, 1.0, 100, PL_PHONON_SITE, PL_BOUNDARY_PERIODIC);
    TU_CHECK(hh_model_create(&p, &m) == PL_ERR_INPUT && m == NULL);
    TU_CHECK_MSG(strstr(pl_error_message(), "max_phonons") && strstr(pl_error_message(), "too large to index"),
                 "message: %s", pl_error_message());
    pl_error_clear();
    p = model(6, 7, 3, 1.0, 0.0, 1.0, 1.0, 1, PL_PHONON_SITE, PL_BOUNDARY_PERIODIC);
    TU_CHECK(hh_model_create(&p, &m) == PL_ERR_INPUT && strstr(pl_error_message(), "n_up"));
    pl_error_clear();
    p = model(6, 3, 3, 1.0, 0.0, 0.0, 1.0, 1, PL_PHONON_NORMAL, PL_BOUNDARY_PERIODIC);
    TU_CHECK(hh_model_create(&p, &m) == PL_ERR_INPUT && strstr(pl_error_message(), "phonon_frequency"));
    pl_error_clear();
    p = model(6, 3, 3, 1.0, 0.0, 1.0, 1.0, 2, PL_PHONON_NORMAL, PL_BOUNDARY_PERIODIC);
    TU_OK(hh_model_create(&p, &m));
    if (m) {
        pl_csr b = {0};
        TU_CHECK(hh_rows_csr(m, 5, hh_model_rows(m) + 1, &b) == PL_ERR_ARG);
        TU_CHECK(hh_rows_csr(m, 5, 4, &b) == PL_ERR_ARG);
        pl_error_clear();
    }
    hh_model_destroy(&m);
    hh_model_destroy(&m); /* NULL is fine */
}

/* ranking round trips and order */
static void test_ranking(void)
{
    hh_model *m = NULL;
    hh_params p = model(7, 3, 2, 1.0, 0.0, 1.0, 1.0, 5, PL_PHONON_SITE, PL_BOUNDARY_PERIODIC);
    TU_OK(hh_model_create(&p, &m));
    if (!m) return;
    /* electrons: ascending masks with 3 bits among 7 are ranks 0, 1, ... */
    int64_t r = 0, bad = 0;
    for (uint64_t mask = 0; mask < 128; mask++) {
        if (__builtin_popcountll(mask) != 3) continue;
        if (hh_el_rank(m, mask) != r || hh_el_unrank(m, r, 3) != mask) bad++;
        r++;
    }
    TU_CHECK(bad == 0 && r == 35);
    /* phonons: 7 modes, total <= 5; lexicographic order, all states */
    int64_t nph = 0;
    hh_model_dims(m, NULL, NULL, &nph);
    int32_t prev[7], occ[7];
    bad = 0;
    for (int64_t s = 0; s < nph; s++) {
        hh_ph_unrank(m, s, occ);
        int tot = 0;
        for (int k = 0; k < 7; k++) tot += occ[k];
        if (tot > 5 || hh_ph_rank(m, occ) != s) bad++;
        if (s > 0 && memcmp(prev, occ, sizeof occ) >= 0) {
            int less = 0; /* lexicographic comparison */
            for (int k = 0; k < 7; k++)
                if (prev[k] != occ[k]) {
                    less = prev[k] < occ[k];
                    break;
                }
            if (!less) bad++;
        }
        memcpy(prev, occ, sizeof occ);
    }
    TU_CHECK_MSG(bad == 0 && nph == 792, "%lld bad phonon ranks, %lld states", (long long)bad, (long long)nph);
    hh_model_destroy(&m);
}

/* value terms (hh_rows_csr_terms): one pattern for all parameter values; the
 * fixed part plus the swept terms give the values; on the entries
 * hh_rows_csr stores the values are its values, elsewhere 0 */
static void test_terms(const hh_params *base)
{
    const double pars[][4] = {{1.0, 3.0, 0.8, 0.6}, {0.0, 0.0, 1.3, 0.0}, {0.7, 0.0, 0.5, 1.1}, {1.0, 2.0, 1.0, 0.0}};
    const unsigned masks[] = {0u, 1u << HH_TERM_COUPLING | 1u << HH_TERM_SHIFT, (1u << HH_NTERMS) - 1u,
                              1u << HH_TERM_U};
    pl_csr first = {0};
    for (size_t q = 0; q < sizeof pars / sizeof pars[0]; q++) {
        hh_params p = *base;
        p.hopping = pars[q][0];
        p.hubbard_u = pars[q][1];
        p.phonon_frequency = pars[q][2];
        p.coupling = pars[q][3];
        unsigned mask = masks[q];
        hh_model *m = NULL;
        TU_OK(hh_model_create(&p, &m));
        int64_t N = hh_model_rows(m);
        pl_csr t = {0}, plain = {0};
        TU_OK(hh_rows_csr_terms(m, 0, N, mask, &t));
        TU_OK(hh_rows_csr(m, 0, N, &plain));
        int32_t *len = malloc((size_t)N * sizeof *len);
        TU_OK(hh_row_lengths_terms(m, 0, N, len));
        int K = t.nterms, bad_len = 0, bad_sum = 0, bad_val = 0, bad_pat = 0;
        TU_CHECK_MSG(K == 1 + __builtin_popcount(mask) && t.terms, "%s: %d terms for mask %#x", describe(&p), K, mask);
        for (int64_t i = 0; i < N; i++) bad_len += len[i] != t.row_ptr[i + 1] - t.row_ptr[i];
        double c[HH_NTERMS];
        hh_term_coefs(&p, c);
        int64_t nnz = pl_csr_nnz(&t);
        for (int64_t i = 0; i < N; i++)
            for (int64_t e = t.row_ptr[i]; e < t.row_ptr[i + 1]; e++) {
                double sum = t.terms[e];
                for (int k = 0, qq = 1; k < HH_NTERMS; k++)
                    if (mask >> k & 1u) sum += c[k] * t.terms[(size_t)qq++ * nnz + e];
                bad_sum += fabs(sum - t.val[e]) > 1e-14 * fmax(1.0, fabs(t.val[e]));
                double v;
                if (csr_find(&plain, i, t.col[e], &v)) bad_val += v != t.val[e];
                else bad_val += t.val[e] != 0.0;
            }
        for (int64_t i = 0; i < N; i++) /* every stored entry of hh_rows_csr is in the pattern */
            for (int64_t e = plain.row_ptr[i]; e < plain.row_ptr[i + 1]; e++) {
                double v;
                bad_pat += !csr_find(&t, i, plain.col[e], &v);
            }
        if (q == 0) first = t;
        else { /* the same pattern at other parameter values */
            int same = first.nrows == t.nrows && pl_csr_nnz(&first) == nnz;
            for (int64_t i = 0; same && i <= N; i++) same = first.row_ptr[i] == t.row_ptr[i];
            for (int64_t e = 0; same && e < nnz; e++) same = first.col[e] == t.col[e];
            TU_CHECK_MSG(same, "%s: the terms pattern changed with the parameters", describe(&p));
        }
        TU_CHECK_MSG(!bad_len && !bad_sum && !bad_val && !bad_pat,
                     "%s mask %#x: %d lengths, %d sums, %d values, %d pattern entries wrong", describe(&p), mask,
                     bad_len, bad_sum, bad_val, bad_pat);
        free(len);
        if (q > 0) pl_csr_destroy(&t);
        pl_csr_destroy(&plain);
        hh_model_destroy(&m);
    }
    pl_csr_destroy(&first);
}

int main(void)
{
    test_ranking();
    test_counts();
    /* symmetry, structure, pieces over a family of small models */
    const int sizes[][3] = {{2, 1, 1}, {2, 2, 1}, {3, 2, 1}, {4, 2, 2}, {4, 3, 1}, {5, 2, 2}, {5, 3, 1}, {6, 3, 2}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int basis = 0; basis < 2; basis++)
            for (int bc = 0; bc < 2; bc++) {
                int L = sizes[s][0];
                int M = L <= 3 ? 4 : L <= 5 ? 3 : 2;
                hh_params p = model(L, sizes[s][1], sizes[s][2], 1.0, 3.0, 0.8, 0.6, M, basis, bc);
                check_model(&p);
            }
    /* g = 0 and t = 0 special cases */
    hh_params p = model(4, 2, 1, 1.0, 2.0, 1.0, 0.0, 3, PL_PHONON_NORMAL, PL_BOUNDARY_PERIODIC);
    check_model(&p);
    p = model(4, 2, 1, 0.0, 2.0, 1.0, 1.0, 3, PL_PHONON_NORMAL, PL_BOUNDARY_OPEN);
    check_model(&p);
    test_dense();
    /* value terms: site and normal basis, periodic and open, L = 2 (duplicate hops) */
    const int tsz[][4] = {{4, 2, 1, 3}, {2, 1, 1, 4}, {5, 2, 2, 2}, {6, 3, 3, 2}};
    for (size_t s = 0; s < sizeof tsz / sizeof tsz[0]; s++)
        for (int basis = 0; basis < 2; basis++)
            for (int bc = 0; bc < 2; bc++) {
                hh_params tp = model(tsz[s][0], tsz[s][1], tsz[s][2], 1.0, 3.0, 0.8, 0.6, tsz[s][3], basis, bc);
                test_terms(&tp);
            }
    return tu_result("hh_unit");
}
