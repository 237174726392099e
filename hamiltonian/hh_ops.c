/* hh_ops.c — the operators O of `pjds-lanczos spectral` as CSR rows
 * (hh.h "operators"; docs/models.md "Spectral functions").
 *
 * q = 2 pi m / L on the chain; on a lattice q . r_j = hh_lattice_phase
 * (2 pi (mx x / lx + my y / ly), m = mx + lx my; a bond list: momentum 0
 * only, hh_op_check refuses others where the lattice has no translations).
 * The complex operators O_q = L^-1/2 sum_j e^{iq.r_j} o_j are written as
 * C + i S with the real parts C = L^-1/2 sum_j cos(q.r_j) o_j and
 * S = L^-1/2 sum_j sin(q.r_j) o_j.  For a real symmetric H and a real ground
 * state, <psi|O_q^+ G O_q|psi> = <C psi|G|C psi> + <S psi|G|S psi> (the
 * cross terms cancel because G is symmetric), so the spectrum is the sum of
 * two real recursions; S = 0 where q = -q (m = 0 and m = L/2 on the chain).
 *   phonon_displacement: o_j = x_j = b_j + b_j^+, in the normal basis
 *     x_j = sum_k u_k(j) x_k (the removed uniform mode has no weight at
 *     q != 0; q = 0 is refused there, its spectrum is analytic);
 *   density: o_j = n_j (diagonal);
 *   current: j = -i t sum_{bonds a -> b, s} w_ab (c+_{b s} c_{a s} - h.c.) =
 *     -i t K with K real antisymmetric, w_ab = jx f_ab (the x component of
 *     a -> b times the bond's hopping factor; the chain: 1); the phase -i drops out of <j psi|G|j psi>, so the
 *     rows are those of t K (one part, no momentum). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hh_impl.h"
#include "pl_error.h"

int hh_op_parts(const hh_model *m, int kind, int momentum)
{
    if (kind == HH_OP_CURRENT) return 1;
    return hh_lattice_self_conjugate(&m->lat, momentum) ? 1 : 2;
}

int hh_op_check(const hh_model *m, int kind, int momentum)
{
    if (kind < 0 || kind > HH_OP_CURRENT) return PL_ERROR(PL_ERR_ARG, "hh_op: unknown operator %d", kind);
    if (kind != HH_OP_CURRENT && (momentum < 0 || momentum >= m->L))
        return PL_ERROR(PL_ERR_INPUT, "[spectral] momentum: must be in 0..%d (got %d)", m->L - 1, momentum);
    if (kind != HH_OP_CURRENT && momentum != 0 && m->lat.kind != HH_LATTICE_CHAIN && !m->lat.translation)
        return PL_ERROR(PL_ERR_INPUT,
                        "[spectral] momentum: %d: a momentum on a lattice without translation symmetry (lattice = %s%s; "
                        "only momentum = 0, the uniform sum, is defined)",
                        momentum, hh_lattice_kind_name(m->lat.kind),
                        m->lat.kind == HH_LATTICE_BONDS ? "" : " with an open boundary");
    if (kind == HH_OP_PHONON && momentum == 0 && m->par.phonon_basis == PL_PHONON_NORMAL)
        return PL_ERROR(PL_ERR_INPUT,
                        "[spectral] momentum: 0 with operator = phonon_displacement needs phonon_basis = site (the "
                        "normal basis removes the uniform mode, whose spectrum is analytic: 4 beta0^2 delta(w) + "
                        "delta(w - w0))");
    return PL_OK;
}

/* per-thread scratch of op_row: phonon occupations, and the electron moves
 * of the current for the last electron configuration seen (a slice of
 * n_ph rows shares them) */
typedef struct op_ws {
    int32_t occ[HH_MAX_MODES];
    int64_t e;                       /* -1: none cached */
    int n;
    int64_t e2[2 * HH_MAX_HOPS + 4];
    double v[2 * HH_MAX_HOPS + 4];
} op_ws;

/* one row's entries into col and, per entry, the values of the parts:
 * val[np * i + p] (unsorted; an entry where every part is zero is left
 * out); returns the count */
static int op_row(const hh_model *m, int kind, int np, const double (*coef)[HH_MAX_SITES + 1], int64_t row,
                  int64_t *col, double *val, op_ws *ws)
{
    int32_t *occ_buf = ws->occ;
    const int64_t nph = m->n_ph, ndn = m->n_dn_states;
    const int64_t e = row / nph, p = row % nph, iu = e / ndn, id = e % ndn;
    const int L = m->L, nm = m->nmodes;
    int n = 0;
    if (kind == HH_OP_DENSITY) {
        const uint64_t mu = hh_el_unrank(m, iu, m->par.n_up), md = hh_el_unrank(m, id, m->par.n_down);
        int any = 0;
        for (int p = 0; p < np; p++) {
            double s = 0.0;
            for (int j = 0; j < L; j++) s += coef[p][j] * (double)(((mu >> j) & 1) + ((md >> j) & 1));
            val[p] = s;
            any |= s != 0.0;
        }
        if (any) {
            col[0] = row;
            n = 1;
        }
        return n;
    }
    if (kind == HH_OP_PHONON) {
        const int32_t *occ;
        if (m->ph_occ) occ = m->ph_occ + p * nm;
        else {
            hh_ph_unrank(m, p, occ_buf);
            occ = occ_buf;
        }
        int tot = 0;
        for (int k = 0; k < nm; k++) tot += occ[k];
        int32_t tmp[HH_MAX_MODES];
        for (int k = 0; k < nm; k++) {
            int any = 0;
            for (int p = 0; p < np; p++) any |= coef[p][k] != 0.0;
            if (!any) continue;
            if (tot < m->M) {
                int64_t q;
                if (m->ph_up) q = m->ph_up[p * nm + k];
                else {
                    memcpy(tmp, occ, (size_t)nm * sizeof *tmp);
                    tmp[k]++;
                    q = hh_ph_rank(m, tmp);
                }
                col[n] = e * nph + q;
                for (int p = 0; p < np; p++) val[np * n + p] = coef[p][k] * m->sqrt_n[occ[k] + 1];
                n++;
            }
            if (occ[k] > 0) {
                int64_t q;
                if (m->ph_dn) q = m->ph_dn[p * nm + k];
                else {
                    memcpy(tmp, occ, (size_t)nm * sizeof *tmp);
                    tmp[k]--;
                    q = hh_ph_rank(m, tmp);
                }
                col[n] = e * nph + q;
                for (int p = 0; p < np; p++) val[np * n + p] = coef[p][k] * m->sqrt_n[occ[k]];
                n++;
            }
        }
        return n;
    }
    /* current (one part): t K, K = sum_{bonds a -> b, s} w_ab (c+_b c_a - c+_a c_b), w_ab = jx f_ab (the
     * chain: bonds a -> a + 1 mod L, w = 1) */
    if (ws->e != e) {
        const double t = m->par.hopping;
        int c = 0;
        for (int s = 0; s < 2; s++) {
            const int nspin = s == 0 ? m->par.n_up : m->par.n_down;
            const uint64_t mask = hh_el_unrank(m, s == 0 ? iu : id, nspin);
            for (int b = 0; b < m->nbonds; b++) {
                const int a = m->lat.bond[b].a;
                const double w = m->lat.bond[b].jx * m->lat.bond[b].factor;
                const uint64_t bits = m->bond_bits[b], o = mask & bits;
                if (o == 0 || o == bits || w == 0.0) continue;
                const int64_t r = hh_el_rank(m, mask ^ bits);
                double v = ((mask >> a) & 1) ? t : -t; /* a -> b forward, b -> a backward */
                if (__builtin_popcountll(mask & m->bond_between[b]) & 1) v = -v;
                if (w != 1.0) v *= w;
                const int64_t e2 = s == 0 ? r * ndn + id : iu * ndn + r;
                int f = 0; /* sum duplicates (a pair joined twice: two bonds, one target) */
                for (int i = 0; i < c; i++)
                    if (ws->e2[i] == e2) {
                        ws->v[i] += v;
                        f = 1;
                    }
                if (!f) {
                    ws->e2[c] = e2;
                    ws->v[c++] = v;
                }
            }
        }
        int k = 0;
        for (int i = 0; i < c; i++)
            if (ws->v[i] != 0.0) {
                ws->e2[k] = ws->e2[i];
                ws->v[k++] = ws->v[i];
            }
        ws->n = k;
        ws->e = e;
    }
    for (int i = 0; i < ws->n; i++) {
        col[i] = ws->e2[i] * nph + p;
        val[i] = ws->v[i];
    }
    return ws->n;
}

/* the coefficients of the parts: coef[p][j] (site basis, density: per
 * site j) or coef[p][k] (normal basis: per mode k) */
static void op_coefs(const hh_model *m, int kind, int momentum, double coef[2][HH_MAX_SITES + 1])
{
    const int L = m->L, nm = m->nmodes, np = hh_op_parts(m, kind, momentum);
    memset(coef, 0, 2 * sizeof *coef);
    const double sl = 1.0 / sqrt((double)L);
    for (int p = 0; p < np; p++) {
        if (kind == HH_OP_DENSITY || (kind == HH_OP_PHONON && m->par.phonon_basis == PL_PHONON_SITE)) {
            for (int j = 0; j < L; j++) {
                const double ph = hh_lattice_phase(&m->lat, momentum, j); /* q . r_j */
                coef[p][j] = sl * (p == 0 ? cos(ph) : sin(ph));
            }
        } else if (kind == HH_OP_PHONON) {
            for (int k = 0; k < nm; k++) {
                double s = 0.0;
                for (int j = 0; j < L; j++) {
                    const double ph = hh_lattice_phase(&m->lat, momentum, j);
                    s += (p == 0 ? cos(ph) : sin(ph)) * m->umode[(int64_t)k * L + j];
                }
                coef[p][k] = sl * s;
            }
        }
        for (int j = 0; j <= HH_MAX_SITES; j++)
            if (fabs(coef[p][j]) < 1e-14) coef[p][j] = 0.0; /* cos(pi/2) and friends */
    }
}

int hh_op_rows_csr(const hh_model *m, int kind, int momentum, int64_t r0, int64_t r1, pl_csr *out)
{
    PL_CHECK(m && out && r0 >= 0 && r1 >= r0 && r1 <= m->N, PL_ERR_ARG, "hh_op_rows_csr: bad arguments");
    PL_CALL(hh_op_check(m, kind, momentum));
    memset(out, 0, sizeof *out);
    const int nm = m->nmodes, np = hh_op_parts(m, kind, momentum);
    double coef[2][HH_MAX_SITES + 1];
    op_coefs(m, kind, momentum, coef);
    const int maxlen = 2 * nm + 2 * m->nbonds + 2;
    const int64_t nr = r1 - r0;
    int64_t *len = calloc((size_t)nr + 1, sizeof *len);
    PL_CHECK(len, PL_ERR_MEM, "out of host memory for the operator rows");
    int err = 0;
#pragma omp parallel
    {
        int64_t *c = malloc((size_t)maxlen * sizeof *c);
        double *v = malloc((size_t)maxlen * 2 * sizeof *v);
        op_ws ob = {.e = -1};
        if (!c || !v) {
#pragma omp atomic write
            err = 1;
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < nr; i++)
            if (c && v) len[i] = op_row(m, kind, np, (const double(*)[HH_MAX_SITES + 1])coef, r0 + i, c, v, &ob);
        free(c);
        free(v);
    }
    int64_t nnz = 0;
    for (int64_t i = 0; i < nr; i++) nnz += len[i];
    int rc = err ? PL_ERROR(PL_ERR_MEM, "out of host memory for the operator rows") : PL_OK;
    if (rc == PL_OK) rc = pl_csr_alloc(out, m->N, r0, nr, nnz);
    if (rc == PL_OK && np > 1) {
        out->terms = malloc(((size_t)np * (size_t)nnz + 1) * sizeof *out->terms);
        if (!out->terms) rc = PL_ERROR(PL_ERR_MEM, "out of host memory for the operator's parts");
        else out->nterms = np;
    }
    if (rc == PL_OK) {
        out->ncols_global = m->N;
        out->row_ptr[0] = 0;
        for (int64_t i = 0; i < nr; i++) out->row_ptr[i + 1] = out->row_ptr[i] + len[i];
#pragma omp parallel
        {
            op_ws ob = {.e = -1};
            int64_t c[2 * HH_MAX_MODES + 2 * HH_MAX_HOPS + 4];
            double v[2 * (2 * HH_MAX_MODES + 2 * HH_MAX_HOPS + 4)];
            int idx[2 * HH_MAX_MODES + 2 * HH_MAX_HOPS + 4];
#pragma omp for schedule(static)
            for (int64_t i = 0; i < nr; i++) {
                const int n = op_row(m, kind, np, (const double(*)[HH_MAX_SITES + 1])coef, r0 + i, c, v, &ob);
                /* ascending columns (insertion sort of a handful of entries) */
                for (int a = 0; a < n; a++) idx[a] = a;
                for (int a = 1; a < n; a++)
                    for (int b = a; b > 0 && c[idx[b - 1]] > c[idx[b]]; b--) {
                        const int t = idx[b];
                        idx[b] = idx[b - 1];
                        idx[b - 1] = t;
                    }
                const int64_t o = out->row_ptr[i];
                for (int a = 0; a < n; a++) {
                    out->col[o + a] = c[idx[a]];
                    out->val[o + a] = v[np * idx[a]];
                    for (int p = 0; p < np && np > 1; p++) out->terms[(size_t)p * (size_t)nnz + (size_t)(o + a)] = v[np * idx[a] + p];
                }
            }
        }
    }
    free(len);
    return rc;
}

void hh_op_local_range(const hh_model *m, int64_t r0, int64_t r1, int64_t *xa, int64_t *xb)
{
    if (r1 <= r0) {
        *xa = r0;
        *xb = r1;
        return;
    }
    *xa = (r0 / m->n_ph) * m->n_ph;
    *xb = hh_obs_halo_end(m, r0, r1);
}

int hh_op_apply_local(const hh_model *m, int kind, int momentum, int part, int64_t r0, int64_t r1, const double *x,
                      int64_t xa, double *y)
{
    PL_CHECK(m && r0 >= 0 && r1 >= r0 && r1 <= m->N && (x || r1 == r0) && (y || r1 == r0) && part >= 0 &&
                 part < hh_op_parts(m, kind, momentum),
             PL_ERR_ARG, "hh_op_apply_local: bad arguments");
    PL_CHECK(kind == HH_OP_PHONON || kind == HH_OP_DENSITY, PL_ERR_ARG,
             "hh_op_apply_local: the current moves electrons between slices (use hh_op_rows_csr)");
    PL_CALL(hh_op_check(m, kind, momentum));
    const int np = hh_op_parts(m, kind, momentum);
    double coef[2][HH_MAX_SITES + 1];
    op_coefs(m, kind, momentum, coef);
#pragma omp parallel
    {
        op_ws ob = {.e = -1};
        int64_t c[2 * HH_MAX_MODES + 2];
        double v[2 * (2 * HH_MAX_MODES + 2)];
#pragma omp for schedule(static)
        for (int64_t r = r0; r < r1; r++) {
            const int n = op_row(m, kind, np, (const double(*)[HH_MAX_SITES + 1])coef, r, c, v, &ob);
            double s = 0.0;
            for (int a = 0; a < n; a++) s += v[np * a + part] * x[c[a] - xa];
            y[r - r0] = s;
        }
    }
    return PL_OK;
}
