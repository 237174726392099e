/* lattice.h — the lattice of the Holstein-Hubbard model: its sites, its
 * bonds with their hopping factors, its geometry where it has one, and the
 * phonon normal modes and momenta that the geometry allows
 * (docs/models.md "Lattices").
 *
 * Kinds: chain (L sites, bonds i -> i+1, periodic: also L-1 -> 0), ladder
 * (lx x 2, legs along x, rungs), square (lx x ly), triangular (lx x ly with
 * the diagonal (x, y) -> (x+1, y+1)), bonds (any graph from a list
 * "0-1, 1-2:0.5, ..."). Site of (x, y): x + lx y.  A periodic direction of
 * length 2 joins the same pair twice (both bonds are kept: their hops add,
 * as on the 2-site periodic chain).
 *
 * Knows no config file: the caller fills hh_lattice_opts from its own keys;
 * input errors are PL_ERR_INPUT with a message that starts with the key
 * ("bonds: ...", "lx: ..."). */
#ifndef HH_LATTICE_H
#define HH_LATTICE_H

#define HH_LATTICE_MAX_SITES 62
#define HH_LATTICE_MAX_BONDS 256

enum hh_lattice_kind {
    HH_LATTICE_CHAIN = 0,
    HH_LATTICE_LADDER = 1,
    HH_LATTICE_SQUARE = 2,
    HH_LATTICE_TRIANGULAR = 3,
    HH_LATTICE_BONDS = 4
};

typedef struct hh_bond {
    int a, b;      /* the sites; a -> b is the direction of the current   */
    double factor; /* hopping t_ab = hopping x factor (1 unless given)     */
    double jx;     /* weight in the current: the x component of a -> b     */
                   /* (1 along x, 0 on a rung; lattice = bonds: 1)         */
    int wrap;      /* 1: crosses a periodic boundary                       */
} hh_bond;

/* What the caller gives (the [model] keys of docs/config.md). */
typedef struct hh_lattice_opts {
    int kind;                   /* enum hh_lattice_kind                              */
    int sites;                  /* chain: L; bonds: 0 = the largest index + 1        */
    int lx, ly;                 /* ladder: lx (ly 0 or 2); square, triangular: both   */
    int boundary_x, boundary_y; /* enum hh_boundary (hh.h): chain uses boundary_x    */
    const char *bonds;          /* lattice = bonds: "a-b[:factor], ..."              */
} hh_lattice_opts;

typedef struct hh_lattice {
    int kind, sites;
    int lx, ly;                 /* chain: L x 1; bonds: 0 x 0 (no geometry)          */
    int boundary_x, boundary_y;
    int translation;            /* 1: momenta exist (periodic chain; ladder periodic */
                                /* in x; square/triangular periodic in x and y)      */
    int nbonds;
    hh_bond bond[HH_LATTICE_MAX_BONDS];
} hh_lattice;

/* Build the lattice.  PL_ERR_INPUT naming the key: a site out of range, a
 * duplicated bond, a self-bond, a malformed entry (bonds), too few sites for
 * the shape (ladder lx < 2, square/triangular lx or ly < 2), more than 62
 * sites or 256 bonds. */
int hh_lattice_build(const hh_lattice_opts *o, hh_lattice *lat);
/* The chain of hh.h: L sites, bonds i -> i+1 and (periodic) L-1 -> 0.
 * PL_ERR_INPUT for L outside 2..62. */
int hh_lattice_chain(int L, int boundary, hh_lattice *lat);
/* The name of a kind ("chain", ...). */
const char *hh_lattice_kind_name(int kind);

/* Site i moved by the displacement r = rx + lx ry (periodic in both
 * directions: meaningful where lat->translation; bonds: i).  Can't fail. */
int hh_lattice_translate(const hh_lattice *lat, int i, int r);
/* The phase q . r_j of momentum index m = mx + lx my, q = (2 pi mx / lx,
 * 2 pi my / ly), at site j (chain: 2 pi m j / L, the chain's arithmetic;
 * bonds: 0, only m = 0 exists).  Can't fail. */
double hh_lattice_phase(const hh_lattice *lat, int m, int j);
/* Whether q = -q (mod the reciprocal lattice): the sin part vanishes. */
int hh_lattice_self_conjugate(const hh_lattice *lat, int m);
/* The L - 1 phonon normal modes orthogonal to the uniform one, mode k at
 * u[k L + i]: chain: the chain's Fourier standing waves (hh.h); ladder,
 * square, triangular: the real Fourier modes cos(q.r), sin(q.r) of the
 * lx x ly torus, q != 0 in index order, one of each pair q, -q (a
 * self-conjugate q: cos only); bonds: the columns 1..L-1 of the Householder
 * reflection that maps e_0 to the uniform vector.  Orthonormal, each
 * orthogonal to the uniform mode.  Can't fail. */
void hh_lattice_modes(const hh_lattice *lat, double *u);

#endif
