/* lattice.c — lattices of the Holstein-Hubbard model (lattice.h;
 * docs/models.md "Lattices"). */
#include "lattice.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "pl_error.h"

const char *hh_lattice_kind_name(int kind)
{
    static const char *const names[] = {"chain", "ladder", "square", "triangular", "bonds"};
    return kind >= 0 && kind <= HH_LATTICE_BONDS ? names[kind] : "?";
}

static int add_bond(hh_lattice *lat, int a, int b, double factor, double jx, int wrap)
{
    PL_CHECK(lat->nbonds < HH_LATTICE_MAX_BONDS, PL_ERR_INPUT, "bonds: more than %d bonds", HH_LATTICE_MAX_BONDS);
    lat->bond[lat->nbonds++] = (hh_bond){.a = a, .b = b, .factor = factor, .jx = jx, .wrap = wrap};
    return PL_OK;
}

int hh_lattice_chain(int L, int boundary, hh_lattice *lat)
{
    memset(lat, 0, sizeof *lat);
    PL_CHECK(L >= 2 && L <= HH_LATTICE_MAX_SITES, PL_ERR_INPUT, "sites: %d: need 2 .. %d", L, HH_LATTICE_MAX_SITES);
    PL_CHECK(boundary == PL_BOUNDARY_PERIODIC || boundary == PL_BOUNDARY_OPEN, PL_ERR_INPUT,
             "boundary: must be periodic or open");
    lat->kind = HH_LATTICE_CHAIN;
    lat->sites = lat->lx = L;
    lat->ly = 1;
    lat->boundary_x = boundary;
    lat->boundary_y = PL_BOUNDARY_OPEN;
    lat->translation = boundary == PL_BOUNDARY_PERIODIC;
    for (int i = 0; i + 1 < L; i++) PL_CALL(add_bond(lat, i, i + 1, 1.0, 1.0, 0));
    if (boundary == PL_BOUNDARY_PERIODIC) PL_CALL(add_bond(lat, L - 1, 0, 1.0, 1.0, 1));
    return PL_OK;
}

/* ladder, square, triangular: the lx x ly grid with bonds along x, y and
 * (triangular) the diagonal; the x components of a1 = (1, 0) and
 * a2 = (0, 1) (square) or (-1/2, sqrt(3)/2) (triangular) weigh the current */
static int build_grid(const hh_lattice_opts *o, hh_lattice *lat)
{
    const int kind = o->kind, lx = o->lx;
    const int ly = kind == HH_LATTICE_LADDER ? 2 : o->ly;
    const char *name = hh_lattice_kind_name(kind);
    PL_CHECK(lx >= 2, PL_ERR_INPUT, "lx: %d: a %s needs lx >= 2", lx, name);
    if (kind == HH_LATTICE_LADDER)
        PL_CHECK(o->ly == 0 || o->ly == 2, PL_ERR_INPUT, "ly: %d: a ladder has two legs (ly = 2)", o->ly);
    else PL_CHECK(ly >= 2, PL_ERR_INPUT, "ly: %d: a %s needs ly >= 2", ly, name);
    PL_CHECK(lx <= HH_LATTICE_MAX_SITES && ly <= HH_LATTICE_MAX_SITES && lx * ly <= HH_LATTICE_MAX_SITES,
             PL_ERR_INPUT, "lx: %d x %d = %d sites: at most %d are supported", lx, ly, lx * ly, HH_LATTICE_MAX_SITES);
    const int px = o->boundary_x == PL_BOUNDARY_PERIODIC;
    const int py = kind != HH_LATTICE_LADDER && o->boundary_y == PL_BOUNDARY_PERIODIC;
    lat->kind = kind;
    lat->lx = lx;
    lat->ly = ly;
    lat->sites = lx * ly;
    lat->boundary_x = px ? PL_BOUNDARY_PERIODIC : PL_BOUNDARY_OPEN;
    lat->boundary_y = py ? PL_BOUNDARY_PERIODIC : PL_BOUNDARY_OPEN;
    lat->translation = px && (py || kind == HH_LATTICE_LADDER);
    const double jy = kind == HH_LATTICE_TRIANGULAR ? -0.5 : 0.0;
    for (int y = 0; y < ly; y++)
        for (int x = 0; x < lx; x++) {
            const int i = x + lx * y, xr = (x + 1) % lx, yu = (y + 1) % ly;
            const int okx = x + 1 < lx || px, oky = y + 1 < ly || py;
            if (okx) PL_CALL(add_bond(lat, i, xr + lx * y, 1.0, 1.0, x + 1 == lx));
            if (oky) PL_CALL(add_bond(lat, i, x + lx * yu, 1.0, jy, y + 1 == ly));
            if (kind == HH_LATTICE_TRIANGULAR && okx && oky)
                PL_CALL(add_bond(lat, i, xr + lx * yu, 1.0, 1.0 + jy, x + 1 == lx || y + 1 == ly));
        }
    return PL_OK;
}

/* one non-negative integer at *s (advances *s); -1 if none */
static long parse_site(const char **s)
{
    while (isspace((unsigned char)**s)) (*s)++;
    if (!isdigit((unsigned char)**s)) return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol(*s, &end, 10);
    if (errno || v > 1000000) v = 1000000;
    *s = end;
    return v;
}

/* "a-b[:factor]" entries separated by commas */
static int build_bonds(const hh_lattice_opts *o, hh_lattice *lat)
{
    PL_CHECK(o->bonds && o->bonds[0], PL_ERR_INPUT, "bonds: lattice = bonds needs a list of bonds (0-1, 1-2, ...)");
    lat->kind = HH_LATTICE_BONDS;
    int maxsite = -1, entry = 0;
    for (const char *s = o->bonds; *s;) {
        entry++;
        while (isspace((unsigned char)*s)) s++;
        const char *start = s;
        size_t n = strcspn(s, ",");
        char text[64];
        snprintf(text, sizeof text, "%.*s", (int)(n < 60 ? n : 60), start);
        const char *p = s;
        long a = parse_site(&p), b = -1;
        while (isspace((unsigned char)*p)) p++;
        if (a >= 0 && *p == '-') {
            p++;
            b = parse_site(&p);
        }
        double f = 1.0;
        while (isspace((unsigned char)*p)) p++;
        if (b >= 0 && *p == ':') {
            char *end = NULL;
            f = strtod(p + 1, &end);
            PL_CHECK(end != p + 1 && isfinite(f), PL_ERR_INPUT, "bonds: entry %d '%s': the hopping factor is not a finite number",
                     entry, text);
            p = end;
        }
        while (isspace((unsigned char)*p)) p++;
        PL_CHECK(a >= 0 && b >= 0 && (*p == ',' || *p == 0), PL_ERR_INPUT,
                 "bonds: entry %d '%s' is not i-j or i-j:factor (sites i, j from 0)", entry, text);
        PL_CHECK(a != b, PL_ERR_INPUT, "bonds: %ld-%ld joins site %ld to itself", a, b, a);
        PL_CHECK(a < HH_LATTICE_MAX_SITES && b < HH_LATTICE_MAX_SITES, PL_ERR_INPUT,
                 "bonds: %ld-%ld: site %ld is beyond the %d sites supported", a, b, a > b ? a : b, HH_LATTICE_MAX_SITES);
        for (int k = 0; k < lat->nbonds; k++) {
            const hh_bond *q = &lat->bond[k];
            PL_CHECK(!((q->a == a && q->b == b) || (q->a == b && q->b == a)), PL_ERR_INPUT,
                     "bonds: %ld-%ld duplicates bond %d-%d", a, b, q->a, q->b);
        }
        PL_CALL(add_bond(lat, (int)a, (int)b, f, 1.0, 0));
        if (a > maxsite) maxsite = (int)a;
        if (b > maxsite) maxsite = (int)b;
        s = *p ? p + 1 : p;
        if (*p == ',' && !*s) return PL_ERROR(PL_ERR_INPUT, "bonds: the list ends with a comma");
    }
    if (o->sites > 0) {
        PL_CHECK(maxsite < o->sites, PL_ERR_INPUT, "bonds: a bond names site %d, which does not exist (sites = %d)",
                 maxsite, o->sites);
        lat->sites = o->sites;
    } else lat->sites = maxsite + 1;
    PL_CHECK(lat->sites >= 2 && lat->sites <= HH_LATTICE_MAX_SITES, PL_ERR_INPUT, "sites: %d: need 2 .. %d",
             lat->sites, HH_LATTICE_MAX_SITES);
    lat->boundary_x = lat->boundary_y = PL_BOUNDARY_OPEN;
    return PL_OK;
}

int hh_lattice_build(const hh_lattice_opts *o, hh_lattice *lat)
{
    PL_CHECK(o && lat, PL_ERR_ARG, "hh_lattice_build: NULL argument");
    memset(lat, 0, sizeof *lat);
    PL_CHECK(o->boundary_x == PL_BOUNDARY_PERIODIC || o->boundary_x == PL_BOUNDARY_OPEN, PL_ERR_INPUT,
             "boundary_x: must be periodic or open");
    PL_CHECK(o->boundary_y == PL_BOUNDARY_PERIODIC || o->boundary_y == PL_BOUNDARY_OPEN, PL_ERR_INPUT,
             "boundary_y: must be periodic or open");
    switch (o->kind) {
    case HH_LATTICE_CHAIN: return hh_lattice_chain(o->sites, o->boundary_x, lat);
    case HH_LATTICE_LADDER:
    case HH_LATTICE_SQUARE:
    case HH_LATTICE_TRIANGULAR: PL_CALL(build_grid(o, lat)); return PL_OK;
    case HH_LATTICE_BONDS: PL_CALL(build_bonds(o, lat)); return PL_OK;
    default: return PL_ERROR(PL_ERR_INPUT, "lattice: unknown kind %d", o->kind);
    }
}

int hh_lattice_translate(const hh_lattice *lat, int i, int r)
{
    if (lat->kind == HH_LATTICE_BONDS) return i; /* no translations */
    const int lx = lat->lx, ly = lat->ly;
    const int x = i % lx, y = i / lx, rx = r % lx, ry = r / lx;
    return (x + rx) % lx + lx * ((y + ry) % ly);
}

double hh_lattice_phase(const hh_lattice *lat, int m, int j)
{
    const double two_pi = 2.0 * acos(-1.0);
    if (lat->kind == HH_LATTICE_CHAIN) { /* the chain's arithmetic (hh_ops.c before the lattices) */
        const double q = two_pi * (double)m / (double)lat->sites;
        return q * j;
    }
    if (lat->kind == HH_LATTICE_BONDS) return 0.0; /* no geometry: momentum 0 only (the uniform sum) */
    const int lx = lat->lx, ly = lat->ly, mx = m % lx, my = m / lx, x = j % lx, y = j / lx;
    return two_pi * ((double)((mx * x) % lx) / (double)lx + (double)((my * y) % ly) / (double)ly);
}

int hh_lattice_self_conjugate(const hh_lattice *lat, int m)
{
    if (lat->kind == HH_LATTICE_BONDS) return m == 0;
    const int lx = lat->lx, ly = lat->ly, mx = m % lx, my = m / lx;
    return (2 * mx) % lx == 0 && (2 * my) % ly == 0;
}

/* the chain's standing waves (hh.c before the lattices, bit for bit) */
static void chain_modes(int L, double *u)
{
    const double two_pi = 2.0 * acos(-1.0);
    const double a = sqrt(2.0 / L);
    int k = 0;
    for (int q = 1; 2 * q < L; q++) {
        for (int i = 0; i < L; i++) {
            double phi = two_pi * (double)((q * i) % L) / (double)L;
            u[(int64_t)k * L + i] = a * cos(phi);
            u[(int64_t)(k + 1) * L + i] = a * sin(phi);
        }
        k += 2;
    }
    if (L % 2 == 0)
        for (int i = 0; i < L; i++) u[(int64_t)k * L + i] = (i % 2 ? -1.0 : 1.0) / sqrt((double)L);
}

/* the real Fourier modes of the lx x ly torus, q != 0 */
static void grid_modes(const hh_lattice *lat, double *u)
{
    const int lx = lat->lx, ly = lat->ly, L = lat->sites;
    const double a = sqrt(2.0 / L), s1 = 1.0 / sqrt((double)L);
    int k = 0;
    for (int m = 1; m < L; m++) {
        const int mx = m % lx, my = m / lx, mp = (lx - mx) % lx + lx * ((ly - my) % ly);
        if (mp < m) continue; /* the partner's pair */
        for (int j = 0; j < L; j++) {
            const double phi = hh_lattice_phase(lat, m, j);
            if (mp == m) u[(int64_t)k * L + j] = s1 * cos(phi);
            else {
                u[(int64_t)k * L + j] = a * cos(phi);
                u[(int64_t)(k + 1) * L + j] = a * sin(phi);
            }
        }
        k += mp == m ? 1 : 2;
    }
}

/* columns 1..L-1 of H = I - 2 v v^T / (v^T v), v = e_0 - 1/sqrt(L) */
static void householder_modes(int L, double *u)
{
    const double s = 1.0 / sqrt((double)L), vv = 2.0 - 2.0 * s;
    for (int k = 1; k < L; k++) {
        double *col = u + (int64_t)(k - 1) * L;
        for (int i = 0; i < L; i++) {
            const double vi = i == 0 ? 1.0 - s : -s, vk = -s;
            col[i] = (i == k ? 1.0 : 0.0) - 2.0 * vi * vk / vv;
        }
    }
}

void hh_lattice_modes(const hh_lattice *lat, double *u)
{
    switch (lat->kind) {
    case HH_LATTICE_CHAIN: chain_modes(lat->sites, u); break;
    case HH_LATTICE_BONDS: householder_modes(lat->sites, u); break;
    default: grid_modes(lat, u); break;
    }
}
