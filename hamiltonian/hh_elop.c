/* hh_elop.c — the electron operators of the single-particle spectral
 * function (hh.h "electron operators"; docs/models.md "Single-particle
 * spectral function A(k, w)"): c_{j s} and c+_{j s} from the N sector's
 * basis into the N -/+ 1 sector's, and combinations sum_j a_j c_{j s}.
 *
 * The fermion order is that of hh.h: all up before all down, each by site,
 * so c_{j up} |m_up, m_dn> = (-1)^(up electrons below j) |m_up - j, m_dn>
 * and c_{j dn} |m_up, m_dn> = (-1)^(N_up + down electrons below j)
 * |m_up, m_dn - j>; c+ the same with the electron added.  The phonons are
 * untouched: a target row (e', p) takes the source rows (e_j, p) of the
 * same phonon state p, so the work is an axpy of whole phonon slices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hh_impl.h"
#include "pl_error.h"

int hh_el_sector(const hh_params *p, int kind, int spin, hh_params *out)
{
    PL_CHECK(p && out && (kind == HH_EL_REMOVE || kind == HH_EL_ADD) && (spin == 0 || spin == 1), PL_ERR_ARG,
             "hh_el_sector: bad arguments");
    *out = *p;
    int *n = spin == 0 ? &out->n_up : &out->n_down;
    const int L = p->lattice ? p->lattice->sites : p->sites;
    if (kind == HH_EL_REMOVE) {
        PL_CHECK(*n > 0, PL_ERR_INPUT, "removal of a %s electron from an empty band (n_%s = 0)", spin ? "down" : "up",
                 spin ? "down" : "up");
        (*n)--;
    } else {
        PL_CHECK(*n < L, PL_ERR_INPUT, "addition of a %s electron into a full band (n_%s = %d = the number of sites)",
                 spin ? "down" : "up", spin ? "down" : "up", *n);
        (*n)++;
    }
    return PL_OK;
}

int hh_el_partner(const hh_model *m, int momentum)
{
    const hh_lattice *lat = &m->lat;
    if (lat->kind == HH_LATTICE_CHAIN) return (m->L - momentum) % m->L;
    const int lx = lat->lx, ly = lat->ly, mx = momentum % lx, my = momentum / lx;
    return (lx - mx) % lx + lx * ((ly - my) % ly);
}

int hh_el_coefs(const hh_model *m, int momentum, int site, double coef[2][HH_LATTICE_MAX_SITES])
{
    const int L = m->L;
    memset(coef, 0, 2 * sizeof *coef);
    if (site >= 0) {
        coef[0][site] = 1.0;
        return 1;
    }
    const double sl = 1.0 / sqrt((double)L);
    int any_sin = 0;
    for (int j = 0; j < L; j++) {
        const double ph = hh_lattice_phase(&m->lat, momentum, j); /* q . r_j */
        coef[0][j] = sl * cos(ph);
        coef[1][j] = sl * sin(ph);
        for (int p = 0; p < 2; p++)
            if (fabs(coef[p][j]) < 1e-14) coef[p][j] = 0.0; /* cos(pi/2) and friends */
        any_sin |= coef[1][j] != 0.0;
    }
    return hh_lattice_self_conjugate(&m->lat, momentum) || !any_sin ? 1 : 2;
}

/* the source electron configuration of target configuration (iu', id')
 * for site j: -1 when c / c+ at j does not reach it; *sign the fermion sign */
static int64_t el_source(const hh_model *src, const hh_model *dst, int kind, int spin, int64_t iu, int64_t id, int j,
                         double *sign)
{
    const uint64_t bit = UINT64_C(1) << j;
    uint64_t mu = hh_el_unrank(dst, iu, dst->par.n_up), md = hh_el_unrank(dst, id, dst->par.n_down);
    uint64_t *ms = spin == 0 ? &mu : &md;
    /* removal: the source has j occupied (target empty there); addition: the target has j occupied */
    if (kind == HH_EL_REMOVE ? (*ms & bit) != 0 : (*ms & bit) == 0) return -1;
    if (kind == HH_EL_ADD) *ms &= ~bit; /* the source */
    int below = __builtin_popcountll(*ms & (bit - 1));
    if (spin == 1) below += src->par.n_up;
    *sign = (below & 1) ? -1.0 : 1.0;
    if (kind == HH_EL_REMOVE) *ms |= bit;
    return hh_el_rank(src, mu) * src->n_dn_states + hh_el_rank(src, md);
}

void hh_el_source_range(const hh_model *src, const hh_model *dst, int kind, int spin, int64_t r0, int64_t r1,
                        int64_t *xa, int64_t *xb)
{
    const int64_t nph = dst->n_ph;
    int64_t lo = INT64_MAX, hi = -1;
    if (r1 > r0) {
        const int64_t e0 = r0 / nph, e1 = (r1 - 1) / nph;
        for (int64_t e = e0; e <= e1; e++)
            for (int j = 0; j < dst->L; j++) {
                double s;
                const int64_t es = el_source(src, dst, kind, spin, e / dst->n_dn_states, e % dst->n_dn_states, j, &s);
                if (es < 0) continue;
                if (es < lo) lo = es;
                if (es > hi) hi = es;
            }
    }
    if (hi < 0) {
        *xa = *xb = 0;
        return;
    }
    *xa = lo * src->n_ph;
    *xb = (hi + 1) * src->n_ph;
}

int hh_el_apply(const hh_model *src, const hh_model *dst, int kind, int spin, const double *coef, int64_t r0,
                int64_t r1, const double *x, int64_t xa, int64_t xb, double *y)
{
    PL_CHECK(src && dst && coef && r0 >= 0 && r1 >= r0 && r1 <= dst->N && (y || r1 == r0) && src->n_ph == dst->n_ph &&
                 src->L == dst->L,
             PL_ERR_ARG, "hh_el_apply: bad arguments");
    const int64_t nph = dst->n_ph;
    if (r1 == r0) return PL_OK;
    const int64_t e0 = r0 / nph, e1 = (r1 - 1) / nph;
    int err = 0;
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t e = e0; e <= e1; e++) {
        const int64_t p0 = e == e0 ? r0 - e * nph : 0, p1 = e == e1 ? r1 - e * nph : nph;
        double *ye = y + (e * nph - r0);
        for (int64_t p = p0; p < p1; p++) ye[p] = 0.0;
        for (int j = 0; j < dst->L; j++) {
            if (coef[j] == 0.0) continue;
            double s = 0.0;
            const int64_t es = el_source(src, dst, kind, spin, e / dst->n_dn_states, e % dst->n_dn_states, j, &s);
            if (es < 0) continue;
            if (es * nph + p0 < xa || es * nph + p1 > xb) {
#pragma omp atomic write
                err = 1;
                continue;
            }
            const double a = s * coef[j];
            const double *xe = x + (es * nph - xa);
            for (int64_t p = p0; p < p1; p++) ye[p] += a * xe[p];
        }
    }
    PL_CHECK(!err, PL_ERR_ARG, "hh_el_apply: the source rows [%lld, %lld) miss rows the operator reaches",
             (long long)xa, (long long)xb);
    return PL_OK;
}

int64_t hh_el_table(const hh_model *src, const hh_model *dst, int kind, int spin, const double *coef, int64_t *ptr,
                    int32_t *hrow, double *val)
{
    const int64_t ne = dst->N / dst->n_ph;
    int64_t k = 0;
    ptr[0] = 0;
    for (int64_t e = 0; e < ne; e++) {
        for (int j = 0; j < dst->L; j++) { /* site order: hh_el_apply's order of the sum */
            if (coef[j] == 0.0) continue;
            double s = 0.0;
            const int64_t es = el_source(src, dst, kind, spin, e / dst->n_dn_states, e % dst->n_dn_states, j, &s);
            if (es < 0) continue;
            hrow[k] = (int32_t)es;
            val[k++] = s * coef[j];
        }
        ptr[e + 1] = k;
    }
    return k;
}
