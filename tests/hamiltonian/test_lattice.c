/* test_lattice.c — hamiltonian/lattice.c (issue 30):
 *  1. bond counts of every kind against the counts by hand (chain L or L-1,
 *     ladder 3 lx or 3 lx - 2, square 2 L or 2 L - lx - ly, triangular 3 L
 *     or 3 L - 2 lx - 2 ly + 1 when open in both directions);
 *  2. the normal modes: L - 1 orthonormal vectors orthogonal to the uniform
 *     one (1e-13), for every kind;
 *  3. with translations the modes have momenta: each is an eigenvector of
 *     the lattice's hopping matrix (a translation-invariant operator; 1e-12),
 *     and translating a mode keeps it in the span of itself and its partner;
 *  4. translations are permutations, and the phase of momentum m at site j
 *     adds up: phase(m, j + r) = phase(m, j) + phase(m, r) mod 2 pi. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "lattice.h"
#include "pl_error.h"
#include "testutil.h"

static void adjacency(const hh_lattice *l, double *A)
{
    const int L = l->sites;
    memset(A, 0, (size_t)L * L * sizeof *A);
    for (int b = 0; b < l->nbonds; b++) {
        A[l->bond[b].a * L + l->bond[b].b] += l->bond[b].factor;
        A[l->bond[b].b * L + l->bond[b].a] += l->bond[b].factor;
    }
}

static void check_modes(const hh_lattice *l)
{
    const int L = l->sites;
    double *u = calloc((size_t)L * L, sizeof *u), *A = calloc((size_t)L * L, sizeof *A);
    TU_CHECK(u && A);
    hh_lattice_modes(l, u);
    for (int k = 0; k < L - 1; k++) {
        double s = 0.0;
        for (int i = 0; i < L; i++) s += u[k * L + i];
        TU_CHECK_MSG(fabs(s) < 1e-13, "%s L=%d: mode %d has a uniform part %g", hh_lattice_kind_name(l->kind), L, k, s);
        for (int q = 0; q < L - 1; q++) {
            double d = 0.0;
            for (int i = 0; i < L; i++) d += u[k * L + i] * u[q * L + i];
            TU_CHECK_MSG(fabs(d - (k == q)) < 1e-13, "%s L=%d: <u%d|u%d> = %g", hh_lattice_kind_name(l->kind), L, k, q, d);
        }
    }
    if (l->translation) {
        adjacency(l, A);
        for (int k = 0; k < L - 1; k++) {
            double Au[64], lam = 0.0, r = 0.0;
            for (int i = 0; i < L; i++) {
                Au[i] = 0.0;
                for (int j = 0; j < L; j++) Au[i] += A[i * L + j] * u[k * L + j];
                lam += u[k * L + i] * Au[i];
            }
            for (int i = 0; i < L; i++) r = fmax(r, fabs(Au[i] - lam * u[k * L + i]));
            TU_CHECK_MSG(r < 1e-12, "%s %dx%d: mode %d is no eigenvector of the hopping (residual %g)",
                         hh_lattice_kind_name(l->kind), l->lx, l->ly, k, r);
            /* a translated mode stays in the span of its momentum pair: weight 1 on modes of the
             * same hopping eigenvalue, which contain that pair */
            for (int t = 0; t < L; t++) {
                double w = 0.0;
                for (int q = 0; q < L - 1; q++) {
                    double lq = 0.0, d = 0.0;
                    for (int i = 0; i < L; i++)
                        for (int j = 0; j < L; j++) lq += u[q * L + i] * A[i * L + j] * u[q * L + j];
                    if (fabs(lq - lam) > 1e-9) continue;
                    for (int i = 0; i < L; i++) d += u[q * L + hh_lattice_translate(l, i, t)] * u[k * L + i];
                    w += d * d;
                }
                TU_CHECK_MSG(fabs(w - 1.0) < 1e-12, "%s: mode %d translated by %d leaves its momentum (%g)",
                             hh_lattice_kind_name(l->kind), k, t, w);
            }
        }
        /* translations permute the sites; phases add */
        const double two_pi = 2.0 * acos(-1.0);
        for (int t = 0; t < L; t++) {
            int seen[64] = {0};
            for (int i = 0; i < L; i++) seen[hh_lattice_translate(l, i, t)]++;
            for (int i = 0; i < L; i++) TU_CHECK(seen[i] == 1);
            for (int m = 0; m < L; m++)
                for (int j = 0; j < L; j++) {
                    double d = hh_lattice_phase(l, m, hh_lattice_translate(l, j, t)) - hh_lattice_phase(l, m, j) -
                               hh_lattice_phase(l, m, t);
                    d = remainder(d, two_pi);
                    TU_CHECK_MSG(fabs(d) < 1e-12, "phase of m=%d at %d + %d: off by %g", m, j, t, d);
                }
        }
    }
    free(u);
    free(A);
}

static hh_lattice grid(int kind, int lx, int ly, int bx, int by)
{
    hh_lattice l;
    hh_lattice_opts o = {.kind = kind, .lx = lx, .ly = ly, .boundary_x = bx, .boundary_y = by};
    TU_OK(hh_lattice_build(&o, &l));
    return l;
}

int main(void)
{
    const int P = PL_BOUNDARY_PERIODIC, O = PL_BOUNDARY_OPEN;
    int nlat = 0;
    for (int L = 2; L <= 9; L++)
        for (int bc = 0; bc < 2; bc++) {
            hh_lattice l;
            TU_OK(hh_lattice_chain(L, bc ? O : P, &l));
            TU_CHECK(l.nbonds == (bc ? L - 1 : L));
            check_modes(&l);
            nlat++;
        }
    for (int lx = 2; lx <= 5; lx++)
        for (int bx = 0; bx < 2; bx++) {
            hh_lattice l = grid(HH_LATTICE_LADDER, lx, 0, bx ? O : P, P);
            TU_CHECK(l.sites == 2 * lx && l.ly == 2 && l.nbonds == (bx ? 3 * lx - 2 : 3 * lx));
            TU_CHECK(l.translation == !bx);
            check_modes(&l);
            nlat++;
        }
    for (int kind = HH_LATTICE_SQUARE; kind <= HH_LATTICE_TRIANGULAR; kind++)
        for (int lx = 2; lx <= 4; lx++)
            for (int ly = 2; ly <= 4; ly++)
                for (int b = 0; b < 4; b++) {
                    const int bx = b & 1 ? O : P, by = b & 2 ? O : P, L = lx * ly;
                    hh_lattice l = grid(kind, lx, ly, bx, by);
                    const int nx = bx == O ? (lx - 1) * ly : L, ny = by == O ? lx * (ly - 1) : L;
                    const int nd = (bx == O ? lx - 1 : lx) * (by == O ? ly - 1 : ly);
                    TU_CHECK_MSG(l.nbonds == nx + ny + (kind == HH_LATTICE_TRIANGULAR ? nd : 0), "%s %dx%d b=%d: %d bonds",
                                 hh_lattice_kind_name(kind), lx, ly, b, l.nbonds);
                    TU_CHECK(l.translation == (b == 0));
                    check_modes(&l);
                    nlat++;
                }
    hh_lattice l;
    hh_lattice_opts o = {.kind = HH_LATTICE_BONDS, .bonds = "0-1:1.0, 0-3:0.6, 1-2:0.9, 1-4:-0.4, 2-3, 3-4, 0-4:0.3"};
    TU_OK(hh_lattice_build(&o, &l));
    TU_CHECK(l.sites == 5 && l.nbonds == 7 && !l.translation && l.bond[3].factor == -0.4 && l.bond[4].factor == 1.0);
    check_modes(&l);
    o.sites = 7; /* isolated sites 5, 6 */
    TU_OK(hh_lattice_build(&o, &l));
    TU_CHECK(l.sites == 7);
    check_modes(&l);
    /* input errors name the key */
    const char *bad[] = {"0-1, 1-7", "0-1, 1-0", "2-2", "0-1,", "0-1:x", "a-b", ""};
    const char *key[] = {"bonds:", "bonds:", "bonds:", "bonds:", "bonds:", "bonds:", "bonds:"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hh_lattice_opts b = {.kind = HH_LATTICE_BONDS, .bonds = bad[i], .sites = i == 0 ? 4 : 0};
        TU_CHECK_MSG(hh_lattice_build(&b, &l) == PL_ERR_INPUT && !strncmp(pl_error_message(), key[i], strlen(key[i])),
                     "'%s': %s", bad[i], pl_error_message());
        pl_error_clear();
    }
    hh_lattice_opts lad = {.kind = HH_LATTICE_LADDER, .lx = 1};
    TU_CHECK(hh_lattice_build(&lad, &l) == PL_ERR_INPUT && !strncmp(pl_error_message(), "lx:", 3));
    pl_error_clear();
    printf("%d lattices: bonds, modes (orthonormal, no uniform part; with translations eigenvectors of the hopping "
           "that keep their momentum), translations and phases as defined\n",
           nlat + 2);
    return 0;
}
