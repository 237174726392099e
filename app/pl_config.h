/* pl_config.h — the run configuration: INI file (libinih) + --set overrides.
 *
 * Order: defaults -> INI file -> --set section.key=value -> pl_config_check().
 * Unknown sections and keys, duplicate keys, malformed numbers and values out
 * of range are PL_ERR_INPUT with a one-line message naming file, line and key
 * ("configs/x.ini:7: [model] n_up: 7 > sites = 6").  The defaults are
 * documented beside each field and in docs/config.md. */
#ifndef PL_CONFIG_H
#define PL_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "bs.h"
#include "hh.h"
#include "lanczos.h"
#include "pl_hash.h"
#include "spmv.h"

enum pl_model_type { PL_MODEL_HOLSTEIN_HUBBARD = 0, PL_MODEL_HDF5 = 1, PL_MODEL_BLOCK_STENCIL = 2 };
/* The enums of the keys that lower layers read are theirs: which, method,
 * (lanczos.h), backend, exchange, format, transport,
 * precision (spmv.h), phonon_basis, boundary (hh.h), stencil (bs.h). */

typedef struct pl_model_cfg {
    int type;                /* type: holstein-hubbard | hdf5 (required)        */
    int sites;               /* sites: L >= 2 (required for holstein-hubbard)   */
    int n_up;                /* n_up: 0..sites (required)                       */
    int n_down;              /* n_down: 0..sites (required)                     */
    double hopping;          /* hopping: t = 1.0                                */
    double hubbard_u;        /* hubbard_u: U = 0.0                              */
    double phonon_frequency; /* phonon_frequency: omega0 = 1.0 (> 0)            */
    double coupling;         /* coupling: g = 0.0                               */
    int max_phonons;         /* max_phonons: M >= 0 or auto (required; auto:    */
                             /* PL_MAX_PHONONS_AUTO until `solve` resolves it,  */
                             /* app/cutoff.c)                                   */
    int max_phonons_auto;    /* not a key: max_phonons = auto was given         */
    int max_phonons_start;   /* max_phonons_start: the search's first M = 1     */
    int max_phonons_limit;   /* max_phonons_limit: its largest M = 40           */
    double max_phonons_tol;  /* max_phonons_tol: stop when |E0(M) - E0(M - 1)|  */
                             /* < tol = 1e-6 (energy units)                     */
    double cutoff_warn;      /* cutoff_warn: warn when P(n = M) of an           */
                             /* eigenvector exceeds it = 1e-3                   */
    int phonon_basis;        /* phonon_basis: site | normal = site              */
    int boundary;            /* boundary: periodic | open = periodic            */
    /* lattices (hamiltonian/lattice.h; docs/models.md "Lattices")                */
    int lattice;             /* lattice: chain | ladder | square | triangular | */
                             /* bonds = chain (enum hh_lattice_kind)            */
    int lx, ly;              /* lx, ly: extent (ladder: lx, ly = 2; square,     */
                             /* triangular: both >= 2)                          */
    int boundary_x;          /* boundary_x, boundary_y: periodic | open =       */
    int boundary_y;          /* boundary (ladder: x only)                       */
    char bonds[2048];        /* bonds: "i-j[:factor], ..." (lattice = bonds)    */
    hh_lattice lat;          /* not a key: the lattice, resolved by             */
                             /* pl_config_check (sites = lat.sites)             */
    /* type = block-stencil (hamiltonian/bs.h; docs/models.md "Block-stencil") */
    int nx, ny, nz;          /* nx, ny, nz: grid points per direction (required) */
    int block_size;          /* block_size: b unknowns per point (required)     */
    int stencil;             /* stencil: 7 | 27 = 27                            */
    double convection;       /* convection: c in [0, 1), upwind/downwind        */
                             /* coupling ratio (1+c)/(1-c) = 0.01               */
    double shift;            /* shift: sigma added to the grid operator = 1.0   */
    double corner;           /* corner: w, weight of the 27-point product term  */
                             /* = 0.5 (stencil 27 only)                         */
    double rotation;         /* rotation: argument (radians) of the complex     */
                             /* block eigenvalues, in (0, pi) = 0.3             */
    uint64_t seed;           /* seed: of the dense block eigenbasis X = 1       */
} pl_model_cfg;

typedef struct pl_matrix_cfg {
    char file[1024];         /* file: HDF5 matrix file (required for hdf5)      */
    char group[256];         /* group: group path inside the file = "/"         */
    int check_symmetry;      /* check_symmetry: true | false = true             */
    double symmetry_tolerance; /* symmetry_tolerance: relative = 1e-12          */
    int layout;              /* layout: auto | pjds | petsc | matlab | csr | csc */
                             /* | coo = auto (PL_H5M_LAYOUT_*, pl_h5matrix.h)   */
    int index_base;          /* index_base: auto | 0 | 1 = auto (COO; the value */
                             /* is the word's index: 0 auto, 1 -> 0, 2 -> 1)    */
    char b_file[1024];       /* b_file: B of A x = lambda B x, same schema      */
                             /* (file, layout, index_base); "" = none           */
    char b_group[256];       /* b_group: B's group in b_file = "/"              */
} pl_matrix_cfg;

typedef struct pl_solver_cfg {
    int nev;                 /* nev: eigenvalues wanted = 4                     */
    int which;               /* which: smallest | largest | largest_magnitude | */
                             /* smallest_real | largest_real |                  */
                             /* largest_imaginary = smallest                    */
    int method;              /* method: auto | lanczos | krylov-schur = auto    */
    double tolerance;        /* tolerance: relative residual = 1e-10 (> 0)      */
    int ncv;                 /* ncv: basis size, 0 = auto (lanczos.h: 24 or 32) */
    int max_restarts;        /* max_restarts: >= 0, or auto (scales with N,     */
                             /* ncv, nev; PL_MAX_RESTARTS_AUTO) = auto          */
    uint64_t seed;           /* seed: start vector seed = 1                     */
    int verify;              /* verify: search for missed copies of degenerate  */
                             /* eigenvalues after convergence = true            */
    double verify_probability; /* verify_probability: Lanczos's search accepts */
                             /* once a missed wanted eigenvector would have    */
                             /* needed a start component this unlikely = 1e-3  */
    int reproducible;        /* reproducible: results bitwise independent of    */
                             /* the number of ranks and OpenMP threads (exact   */
                             /* reductions, row sums in one order; cpu backend, */
                             /* matrix_free on several ranks) = false           */
    int reorthogonalization; /* reorthogonalization: partial | full = partial   */
                             /* (Lanczos; Krylov-Schur is always full)          */
    /* method = chebfd (lanczos.h cf_*; docs/config.md): one of interval,     */
    /* target (with nev), or which = smallest | largest (with nev)            */
    double interval[2];      /* interval: a, b (a < b); NaN = not set           */
    double target;           /* target: E (chebfd), or sigma's real part (a     */
                             /* spectral transformation); NaN = not set         */
    double target_imag;      /* not a key alone: the imaginary part of target   */
                             /* ("a+bi"); 0 when real                           */
    int transform;           /* transform: auto | none | shift_invert = auto    */
                             /* (enum pl_transform; app/solve_st.c)             */
    int factorization;       /* factorization: auto | mumps | cudss = auto      */
                             /* (factor/fact.h pl_fact_kind)                    */
    int filter_degree;       /* filter_degree: >= 1 or auto (-1) = auto         */
    int search_size;         /* search_size: >= 1 or auto (-1) = auto           */
} pl_solver_cfg;
enum pl_reorth { PL_REORTH_PARTIAL = 0, PL_REORTH_FULL = 1 };
/* [solver] transform: auto = shift_invert when a target is given (and method is not chebfd) */
enum pl_transform { PL_TRANSFORM_AUTO = 0, PL_TRANSFORM_NONE = 1, PL_TRANSFORM_SHIFT_INVERT = 2 }; /* app translates to enum lz_reorth */

#define PL_MAX_RESTARTS_AUTO (-1) /* [solver] max_restarts = auto (= LZ_RESTARTS_AUTO) */
#define PL_MAX_PHONONS_AUTO (-1)  /* [model] max_phonons = auto (before the search) */
typedef struct pl_spmv_cfg {
    int backend;             /* backend: auto | cpu | cuda = auto               */
    int chunk_height;        /* chunk_height: C = 32                            */
    int64_t sort_window;     /* sort_window: sigma, 0 = all rows (pJDS), or     */
                             /* auto (PL_SORT_WINDOW_AUTO) = auto: per backend, */
                             /* pl_sort_window_resolve (spmv.h)                 */
    int exchange;            /* exchange: vector | overlap | task = vector      */
    int transport;           /* transport: mpi | nccl | auto | ipc = auto (nccl */
                             /* for the cuda backend when built with NCCL)      */
    int precision;           /* precision: double | single = double             */
    int repeats;             /* repeats: timed SpMVs per format in bench = 100  */
    int format;              /* format: auto | pjds | compressed | matrix_free  */
                             /* = auto (docs/performance.md "Compressed         */
                             /* format"; matrix_free: hamiltonian/hh_mf.h)      */
    int kron_split;          /* kron_split: auto | electron | phonon = auto:    */
                             /* how format = matrix_free cuts the rows over     */
                             /* ranks (app_free.c; spmv.h enum pl_kron_split)   */
    int blocks;              /* not a key: set by the caller when the operator  */
                             /* serves block products (SpMMV: dos, bench's      */
                             /* SpMMV rows); format = auto then keeps pJDS,     */
                             /* whose block kernels are the faster ones = 0     */
} pl_spmv_cfg;

typedef struct pl_output_cfg {
    char file[1024];         /* file: HDF5 result file = "spectrum.h5"          */
    int eigenvectors;        /* eigenvectors: true | false = false              */
    double checkpoint_interval; /* checkpoint_interval: seconds between periodic */
                             /* checkpoints of a solve, 0 = only on SIGUSR1 or  */
                             /* SIGTERM = 0                                      */
    int observables;         /* observables: auto | true | false = auto (auto:  */
                             /* true for a holstein-hubbard model, else false;  */
                             /* true on another model is refused)               */
} pl_output_cfg;
enum pl_observables { PL_OBS_AUTO = 0, PL_OBS_TRUE = 1, PL_OBS_FALSE = 2 };

/* [spectral]: `pjds-lanczos spectral` (docs/models.md "Spectral functions"). */
enum pl_spectral_op { PL_SPEC_PHONON_DISPLACEMENT = 0, PL_SPEC_DENSITY = 1, PL_SPEC_CURRENT = 2,
                      PL_SPEC_ELECTRON_REMOVAL = 3, PL_SPEC_ELECTRON_ADDITION = 4 };
#define PL_SPECTRAL_ALL (-1) /* momentum = all, site = all */
typedef struct pl_spectral_cfg {
    int op;                  /* operator: phonon_displacement | density |       */
                             /* current | electron_removal | electron_addition  */
                             /* = phonon_displacement                           */
    int momentum;            /* momentum: q index m, q = 2 pi m / L, 0..L-1 = 0  */
                             /* (electron operators: also all)                   */
    int spin;                /* spin: up | down = up (electron operators)        */
    int site;                /* site: i or all: the local spectral function of   */
                             /* the electron operators (unset: momentum) = 0     */
    int local;               /* resolved: site was given (electron operators)    */
    int steps;               /* steps: recursion length = 200                    */
    double broadening;       /* broadening: eta > 0 = 0.1 (units of t)           */
    double omega_min, omega_max; /* omega_min/max: excitation energies = 0, 10   */
    int points;              /* points: omega grid points = 1000                 */
} pl_spectral_cfg;

/* [sweep]: every key other than combine and warm_start names a [model] key
 * and gives its values, as text: a list "0.0, 0.5, 1.0" or a range
 * "start:stop:step" (app/sweep.c expands and checks them). */
#define PL_SWEEP_MAX_KEYS 8
enum pl_combine { PL_COMBINE_GRID = 0, PL_COMBINE_ZIP = 1 };
typedef struct pl_sweep_cfg {
    int nkeys;                             /* swept keys, in the order given     */
    char key[PL_SWEEP_MAX_KEYS][32];       /* [model] key names                  */
    char values[PL_SWEEP_MAX_KEYS][2048];  /* their value text                   */
    int line[PL_SWEEP_MAX_KEYS];           /* line in the file, -1: --set        */
    int combine;             /* combine: grid | zip = grid (grid: Cartesian     */
                             /* product, the first key varies slowest)          */
    int warm_start;          /* warm_start: true | false = true                 */
} pl_sweep_cfg;

/* [kpm]: `pjds-lanczos dos` (docs/models.md "Density of states"). */
enum pl_kpm_kernel { PL_KPM_JACKSON = 0, PL_KPM_LORENTZ = 1 };
enum pl_kpm_vectors { PL_KPM_RANDOM = 0, PL_KPM_UNIT = 1 };
typedef struct pl_kpm_cfg {
    int moments;             /* moments: N >= 2 = 1024                            */
    int random_vectors;      /* random_vectors: R >= 1 = 16                       */
    int kernel;              /* kernel: jackson | lorentz = jackson               */
    double lorentz_lambda;   /* lorentz_lambda: > 0 = 4                           */
    int points;              /* points: energies in the output, 0 = 4 N = 0       */
    uint64_t seed;           /* seed: of the random vectors = 1                   */
    int block;               /* block: vectors per SpMMV, 0 = min(R, 32) = 0       */
    int vectors;             /* vectors: random | unit (all N unit vectors: the   */
                             /* exact trace, for tests on small matrices) = random */
} pl_kpm_cfg;

typedef struct pl_config {
    pl_model_cfg model;
    pl_matrix_cfg matrix;
    pl_solver_cfg solver;
    pl_spmv_cfg spmv;
    pl_output_cfg output;
    pl_sweep_cfg sweep;
    pl_spectral_cfg spectral;
    pl_kpm_cfg kpm;
    char path[1024];         /* the config file's path                          */
    char *text;              /* the config file's text plus the --set lines     */
    void *where_;            /* internal: where each key was set                */
} pl_config;

/* Fill defaults.  Can't fail. */
void pl_config_defaults(pl_config *cfg);
/* Read the INI file into cfg (after pl_config_defaults).  PL_ERR_INPUT for an
 * unreadable file, an unknown section or key, a duplicate key, or a malformed
 * value. */
int pl_config_read(pl_config *cfg, const char *path);
/* Apply one override "section.key=value" (command line --set). */
int pl_config_set(pl_config *cfg, const char *assignment);
/* Check required keys and ranges.  PL_ERR_INPUT with "file:line: [s] key: ...". */
int pl_config_check(pl_config *cfg);
/* "file:line: [section] key" ("file: [section] key" when the key was not
 * set, "--set section.key: [section] key" when --set set it) for messages
 * about a key, written into buf. Returns buf. */
const char *pl_config_where(const pl_config *cfg, const char *section, const char *key, char *buf, size_t len);
/* Write the resolved configuration as INI text.  Can't fail. */
void pl_config_dump(const pl_config *cfg, FILE *f);
/* The resolved configuration as a malloc'ed INI string (NULL on no memory). */
char *pl_config_dump_string(const pl_config *cfg);
void pl_config_destroy(pl_config *cfg);
/* A deep copy of src into dst (dst uninitialised; free with
 * pl_config_destroy).  PL_ERR_MEM. */
int pl_config_copy(pl_config *dst, const pl_config *src);
/* Set one key from its text (as in the INI file) without recording where it
 * was set: for the points of a sweep.  PL_ERR_INPUT "[section] key: why"
 * for an unknown key or a malformed value. */
int pl_config_set_value(pl_config *cfg, const char *section, const char *key, const char *value);
/* Whether [section] key is a key of the table and of type enum; its words
 * ("site|normal") into *words when it is.  Can't fail. */
int pl_config_key_exists(const char *section, const char *key);
const char *pl_config_enum_words(const char *section, const char *key);
/* The resolved configuration of the sections that decide a result (model,
 * matrix, solver; sweep when with_sweep and it has keys) as INI text,
 * malloc'ed: what checkpoints and sweep files hash and compare.  NULL on no
 * memory. */
char *pl_config_result_text(const pl_config *cfg, int with_sweep);

/* Whether [section] key was set (file or --set).  Can't fail. */
int pl_config_is_set(const pl_config *cfg, const char *section, const char *key);
/* The lattice keys (pl_config_lattice.c): whether [model] lattice uses the
 * [model] key (1 for the keys of every lattice), and pl_config_check's step
 * that builds cfg->model.lat from them (sites = its sites; PL_ERR_INPUT
 * naming the key: a key the lattice does not use, what
 * hamiltonian/lattice.c refuses, sites that disagree). */
int pl_config_lattice_key_used(const pl_config *cfg, const char *key);
int pl_config_resolve_lattice(pl_config *cfg);
/* The cut-off keys (pl_config_cutoff.c): whether a [model] key is used
 * (max_phonons_start, _limit, _tol only with max_phonons = auto), and
 * pl_config_check's step for them: max_phonons = auto sets
 * max_phonons_auto; PL_ERR_INPUT naming the key for a search key without
 * auto, max_phonons_tol <= 0, a limit not above the start, auto with a
 * [sweep], which other than smallest or method = chebfd, cutoff_warn
 * outside (0, 1]. */
int pl_config_cutoff_key_used(const pl_config *cfg, const char *key);
int pl_config_check_cutoff(pl_config *cfg);
/* The [spectral] keys (pl_config_spectral.c): whether the operator uses the
 * key, and pl_config_check's step for [spectral] (sets spectral.local). */
int pl_config_spectral_key_used(const pl_config *cfg, const char *key);
int pl_config_check_spectral(pl_config *cfg);

/* Name of an enum value as written in the INI file. */
const char *pl_config_enum_name(const char *section, const char *key, int value);

/* For the check files of pl_config: return PL_ERR_INPUT with the message
 * "<where [sec] key>: why" (the file and line the key was set on). */
#define PL_CFG_BAD(cfg, sec, key, ...)                                                                   \
    do {                                                                                                 \
        char w_[1200], m_[480];                                                                          \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                            \
        return PL_ERROR(PL_ERR_INPUT, "%s: %s", pl_config_where(cfg, sec, key, w_, sizeof w_), m_);     \
    } while (0)

#endif
