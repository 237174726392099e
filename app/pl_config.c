/* pl_config.c — INI parsing with libinih, table-driven: each key has a type,
 * a field offset, a default and (for enums) its allowed words.  Every key
 * remembers the line it was set on so checks can name it. */
#define _POSIX_C_SOURCE 200809L
#include "pl_config.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pl_error.h"

#include "pl_config_keys.h"

#define F(s, m) offsetof(pl_config, s.m)
#define SZ(s, m) sizeof(((pl_config *)0)->s.m)
const key_desc pl_cfg_keys[] = {
    {"model", "type", KT_ENUM, F(model, type), 0, "holstein-hubbard|hdf5|block-stencil", 1, 1},
    {"model", "sites", KT_INT, F(model, sites), 0, NULL, 1, 0},
    {"model", "n_up", KT_INT, F(model, n_up), 0, NULL, 1, 0},
    {"model", "n_down", KT_INT, F(model, n_down), 0, NULL, 1, 0},
    {"model", "hopping", KT_DBL, F(model, hopping), 0, NULL, 0, 0},
    {"model", "hubbard_u", KT_DBL, F(model, hubbard_u), 0, NULL, 0, 0},
    {"model", "phonon_frequency", KT_DBL, F(model, phonon_frequency), 0, NULL, 0, 0},
    {"model", "coupling", KT_DBL, F(model, coupling), 0, NULL, 0, 0},
    {"model", "max_phonons", KT_INT_AUTO, F(model, max_phonons), 0, NULL, 1, 0},
    {"model", "max_phonons_start", KT_INT, F(model, max_phonons_start), 0, NULL, 0, 0},
    {"model", "max_phonons_limit", KT_INT, F(model, max_phonons_limit), 0, NULL, 0, 0},
    {"model", "max_phonons_tol", KT_DBL, F(model, max_phonons_tol), 0, NULL, 0, 0},
    {"model", "cutoff_warn", KT_DBL, F(model, cutoff_warn), 0, NULL, 0, 0},
    {"model", "phonon_basis", KT_ENUM, F(model, phonon_basis), 0, "site|normal", 0, 0},
    {"model", "boundary", KT_ENUM, F(model, boundary), 0, "periodic|open", 0, 0},
    {"model", "lattice", KT_ENUM, F(model, lattice), 0, "chain|ladder|square|triangular|bonds", 0, 0},
    {"model", "lx", KT_INT, F(model, lx), 0, NULL, 0, 0},
    {"model", "ly", KT_INT, F(model, ly), 0, NULL, 0, 0},
    {"model", "boundary_x", KT_ENUM, F(model, boundary_x), 0, "periodic|open", 0, 0},
    {"model", "boundary_y", KT_ENUM, F(model, boundary_y), 0, "periodic|open", 0, 0},
    {"model", "bonds", KT_STR, F(model, bonds), SZ(model, bonds), NULL, 0, 0},
    {"model", "nx", KT_INT, F(model, nx), 0, NULL, 0, 0},
    {"model", "ny", KT_INT, F(model, ny), 0, NULL, 0, 0},
    {"model", "nz", KT_INT, F(model, nz), 0, NULL, 0, 0},
    {"model", "block_size", KT_INT, F(model, block_size), 0, NULL, 0, 0},
    {"model", "stencil", KT_ENUM, F(model, stencil), 0, "7|27", 0, 0},
    {"model", "convection", KT_DBL, F(model, convection), 0, NULL, 0, 0},
    {"model", "shift", KT_DBL, F(model, shift), 0, NULL, 0, 0},
    {"model", "corner", KT_DBL, F(model, corner), 0, NULL, 0, 0},
    {"model", "rotation", KT_DBL, F(model, rotation), 0, NULL, 0, 0},
    {"model", "seed", KT_U64, F(model, seed), 0, NULL, 0, 0},
    {"matrix", "file", KT_STR, F(matrix, file), SZ(matrix, file), NULL, 0, 1},
    {"matrix", "group", KT_STR, F(matrix, group), SZ(matrix, group), NULL, 0, 0},
    {"matrix", "check_symmetry", KT_BOOL, F(matrix, check_symmetry), 0, NULL, 0, 0},
    {"matrix", "symmetry_tolerance", KT_DBL, F(matrix, symmetry_tolerance), 0, NULL, 0, 0},
    {"matrix", "layout", KT_ENUM, F(matrix, layout), 0, "auto|pjds|petsc|matlab|csr|csc|coo", 0, 0},
    {"matrix", "index_base", KT_ENUM, F(matrix, index_base), 0, "auto|0|1", 0, 0},
    {"matrix", "b_file", KT_STR, F(matrix, b_file), SZ(matrix, b_file), NULL, 0, 0},
    {"matrix", "b_group", KT_STR, F(matrix, b_group), SZ(matrix, b_group), NULL, 0, 0},
    {"solver", "nev", KT_INT, F(solver, nev), 0, NULL, 0, 0},
    {"solver", "which", KT_ENUM, F(solver, which), 0,
     "smallest|largest|largest_magnitude|smallest_real|largest_real|largest_imaginary|nearest|nearest_real|"
     "nearest_imaginary", 0, 0},
    {"solver", "method", KT_ENUM, F(solver, method), 0, "auto|lanczos|krylov-schur|chebfd", 0, 0},
    {"solver", "tolerance", KT_DBL, F(solver, tolerance), 0, NULL, 0, 0},
    {"solver", "ncv", KT_INT, F(solver, ncv), 0, NULL, 0, 0},
    {"solver", "max_restarts", KT_INT_AUTO, F(solver, max_restarts), 0, NULL, 0, 0},
    {"solver", "seed", KT_U64, F(solver, seed), 0, NULL, 0, 0},
    {"solver", "verify", KT_BOOL, F(solver, verify), 0, NULL, 0, 0},
    {"solver", "verify_probability", KT_DBL, F(solver, verify_probability), 0, NULL, 0, 0},
    {"solver", "reproducible", KT_BOOL, F(solver, reproducible), 0, NULL, 0, 0},
    {"solver", "reorthogonalization", KT_ENUM, F(solver, reorthogonalization), 0, "partial|full", 0, 0},
    {"solver", "interval", KT_RANGE, F(solver, interval), 0, NULL, 0, 0},
    {"solver", "target", KT_CPLX_OPT, F(solver, target), 0, NULL, 0, 0},
    {"solver", "transform", KT_ENUM, F(solver, transform), 0, "auto|none|shift_invert", 0, 0},
    {"solver", "factorization", KT_ENUM, F(solver, factorization), 0, "auto|mumps|cudss", 0, 0},
    {"solver", "filter_degree", KT_INT_AUTO, F(solver, filter_degree), 0, NULL, 0, 0},
    {"solver", "search_size", KT_INT_AUTO, F(solver, search_size), 0, NULL, 0, 0},
    {"spmv", "backend", KT_ENUM, F(spmv, backend), 0, "auto|cpu|cuda", 0, 0},
    {"spmv", "chunk_height", KT_INT, F(spmv, chunk_height), 0, NULL, 0, 0},
    {"spmv", "sort_window", KT_I64_AUTO, F(spmv, sort_window), 0, NULL, 0, 0},
    {"spmv", "exchange", KT_ENUM, F(spmv, exchange), 0, "vector|overlap|task", 0, 0},
    {"spmv", "format", KT_ENUM, F(spmv, format), 0, "auto|pjds|compressed|matrix_free", 0, 0},
    {"spmv", "transport", KT_ENUM, F(spmv, transport), 0, "mpi|nccl|auto|ipc", 0, 0},
    {"spmv", "kron_split", KT_ENUM, F(spmv, kron_split), 0, "auto|electron|phonon", 0, 0},
    {"spmv", "precision", KT_ENUM, F(spmv, precision), 0, "double|single", 0, 0},
    {"spmv", "repeats", KT_INT, F(spmv, repeats), 0, NULL, 0, 0},
    {"output", "file", KT_STR, F(output, file), SZ(output, file), NULL, 0, 0},
    {"output", "eigenvectors", KT_BOOL, F(output, eigenvectors), 0, NULL, 0, 0},
    {"output", "checkpoint_interval", KT_DBL, F(output, checkpoint_interval), 0, NULL, 0, 0},
    {"output", "observables", KT_ENUM, F(output, observables), 0, "auto|true|false", 0, 0},
    {"spectral", "operator", KT_ENUM, F(spectral, op), 0,
     "phonon_displacement|density|current|electron_removal|electron_addition", 0, 0},
    {"spectral", "momentum", KT_INT_ALL, F(spectral, momentum), 0, NULL, 0, 0},
    {"spectral", "spin", KT_ENUM, F(spectral, spin), 0, "up|down", 0, 0},
    {"spectral", "site", KT_INT_ALL, F(spectral, site), 0, NULL, 0, 0},
    {"spectral", "steps", KT_INT, F(spectral, steps), 0, NULL, 0, 0},
    {"spectral", "broadening", KT_DBL, F(spectral, broadening), 0, NULL, 0, 0},
    {"spectral", "omega_min", KT_DBL, F(spectral, omega_min), 0, NULL, 0, 0},
    {"spectral", "omega_max", KT_DBL, F(spectral, omega_max), 0, NULL, 0, 0},
    {"spectral", "points", KT_INT, F(spectral, points), 0, NULL, 0, 0},
    {"kpm", "moments", KT_INT, F(kpm, moments), 0, NULL, 0, 0},
    {"kpm", "random_vectors", KT_INT, F(kpm, random_vectors), 0, NULL, 0, 0},
    {"kpm", "kernel", KT_ENUM, F(kpm, kernel), 0, "jackson|lorentz", 0, 0},
    {"kpm", "lorentz_lambda", KT_DBL, F(kpm, lorentz_lambda), 0, NULL, 0, 0},
    {"kpm", "points", KT_INT, F(kpm, points), 0, NULL, 0, 0},
    {"kpm", "seed", KT_U64, F(kpm, seed), 0, NULL, 0, 0},
    {"kpm", "block", KT_INT, F(kpm, block), 0, NULL, 0, 0},
    {"kpm", "vectors", KT_ENUM, F(kpm, vectors), 0, "random|unit", 0, 0},
    {"sweep", "combine", KT_ENUM, F(sweep, combine), 0, "grid|zip", 0, 0},
    {"sweep", "warm_start", KT_BOOL, F(sweep, warm_start), 0, NULL, 0, 0},
};
#define NKEYS (sizeof pl_cfg_keys / sizeof pl_cfg_keys[0])
const size_t pl_cfg_nkeys = NKEYS;
static const char *sections[] = {"model", "matrix", "solver", "spmv", "output", "sweep", "spectral", "kpm"};

typedef struct where_t {
    int line[NKEYS]; /* >0: line in file; -1: set by --set; 0: default */
} where_t;

void pl_config_defaults(pl_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->model.type = PL_MODEL_HOLSTEIN_HUBBARD;
    cfg->model.hopping = 1.0;
    cfg->model.phonon_frequency = 1.0;
    cfg->model.phonon_basis = PL_PHONON_SITE;
    cfg->model.boundary = PL_BOUNDARY_PERIODIC;
    cfg->model.max_phonons_start = 1; /* max_phonons = auto (app/cutoff.c) */
    cfg->model.max_phonons_limit = 40;
    cfg->model.max_phonons_tol = 1e-6;
    cfg->model.cutoff_warn = 1e-3;
    cfg->model.stencil = PL_STENCIL_27;
    cfg->model.convection = 0.01;
    cfg->model.shift = 1.0;
    cfg->model.corner = 0.5;
    cfg->model.rotation = 0.3;
    cfg->model.seed = 1;
    strcpy(cfg->matrix.group, "/");
    strcpy(cfg->matrix.b_group, "/");
    cfg->matrix.check_symmetry = 1;
    cfg->matrix.symmetry_tolerance = 1e-12;
    cfg->solver.nev = 4;
    cfg->solver.which = PL_WHICH_SMALLEST;
    cfg->solver.tolerance = 1e-10;
    cfg->solver.max_restarts = PL_MAX_RESTARTS_AUTO; /* scales with the problem: lanczos.h */
    cfg->solver.seed = 1;
    cfg->solver.verify = 1;
    cfg->solver.verify_probability = LZ_VERIFY_PROB;
    cfg->solver.interval[0] = cfg->solver.interval[1] = NAN; /* method = chebfd: not set */
    cfg->solver.target = NAN;
    cfg->solver.filter_degree = -1; /* auto */
    cfg->solver.search_size = -1;   /* auto */
    cfg->spmv.chunk_height = 32;
    cfg->spmv.sort_window = PL_SORT_WINDOW_AUTO;
    cfg->spmv.transport = PL_TRANSPORT_AUTO;
    cfg->spmv.repeats = 100;
    strcpy(cfg->output.file, "spectrum.h5");
    cfg->output.observables = PL_OBS_AUTO;
    cfg->spectral.op = PL_SPEC_PHONON_DISPLACEMENT;
    cfg->spectral.momentum = 0;
    cfg->spectral.steps = 200;
    cfg->spectral.broadening = 0.1;
    cfg->spectral.omega_min = 0.0;
    cfg->spectral.omega_max = 10.0;
    cfg->spectral.points = 1000;
    cfg->kpm.moments = 1024;
    cfg->kpm.random_vectors = 16;
    cfg->kpm.kernel = PL_KPM_JACKSON;
    cfg->kpm.lorentz_lambda = 4.0;
    cfg->kpm.points = 0;
    cfg->kpm.seed = 1;
    cfg->kpm.block = 0;
    cfg->kpm.vectors = PL_KPM_RANDOM;
    cfg->sweep.warm_start = 1;
    cfg->where_ = calloc(1, sizeof(where_t));
}

int pl_cfg_find_key(const char *section, const char *key)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(pl_cfg_keys[i].section, section) && !strcmp(pl_cfg_keys[i].key, key)) return (int)i;
    return -1;
}

static int known_section(const char *s)
{
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (!strcmp(sections[i], s)) return 1;
    return 0;
}

/* "a", "a+bi", "a-bi", "bi" (i or j; blanks around the sign) into v[0], v[1].
 * Returns 0, or 1 with a message. */
static int parse_complex(const char *value, double *v, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double a = strtod(value, &end), b = 0.0;
    int ok = end != value && isfinite(a);
    while (ok && (*end == ' ' || *end == '\t')) end++;
    if (ok && (*end == 'i' || *end == 'j') && !end[1]) { /* "bi": purely imaginary */
        b = a;
        a = 0.0;
        end++;
    } else if (ok && (*end == '+' || *end == '-')) {
        const double sign = *end == '-' ? -1.0 : 1.0;
        const char *p = end + 1;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == 'i' || *p == 'j') { /* "a+i" */
            b = sign;
            end = (char *)p + 1;
        } else {
            b = strtod(p, &end);
            ok = end != p && isfinite(b) && *p != '+' && *p != '-';
            b *= sign;
            while (ok && (*end == ' ' || *end == '\t')) end++;
            ok = ok && (*end == 'i' || *end == 'j');
            if (ok) end++;
        }
    }
    if (!ok || *end || errno == ERANGE) {
        snprintf(err, errlen, "'%s' is not a finite real or complex number (a, a+bi or a-bi)", value);
        return 1;
    }
    v[0] = a;
    v[1] = b;
    return 0;
}

/* Parse value into the field; on failure write a message into err. */
static int parse_value(pl_config *cfg, const key_desc *k, const char *value, char *err, size_t errlen)
{
    char *field = (char *)cfg + k->offset;
    char *end = NULL;
    errno = 0;
    switch (k->type) {
    case KT_INT_AUTO:
    case KT_INT_ALL:
        if (!strcmp(value, k->type == KT_INT_AUTO ? "auto" : "all")) {
            *(int *)field = k->type == KT_INT_AUTO ? PL_MAX_RESTARTS_AUTO : PL_SPECTRAL_ALL;
            return 0;
        }
        /* fall through */
    case KT_INT: {
        long v = strtol(value, &end, 10);
        if (end == value || *end || errno) {
            snprintf(err, errlen, k->type == KT_INT_AUTO ? "'%s' is neither auto nor an integer" : "'%s' is not an integer",
                     value);
            return 1;
        }
        if (v < -2147483647L || v > 2147483647L) { snprintf(err, errlen, "%s does not fit a 32-bit integer", value); return 1; }
        /* refused here, not in pl_config_check: -1 would read as auto */
        if ((k->type == KT_INT_AUTO || k->type == KT_INT_ALL) && v < 0) {
            snprintf(err, errlen, "must be >= 0 or %s (got %s)", k->type == KT_INT_AUTO ? "auto" : "all", value);
            return 1;
        }
        *(int *)field = (int)v;
        return 0;
    }
    case KT_I64_AUTO:
        if (!strcmp(value, "auto")) {
            *(int64_t *)field = PL_SORT_WINDOW_AUTO;
            return 0;
        }
        /* fall through */
    case KT_I64: {
        long long v = strtoll(value, &end, 10);
        if (end == value || *end || errno) {
            snprintf(err, errlen, k->type == KT_I64_AUTO ? "'%s' is neither auto nor an integer" : "'%s' is not an integer",
                     value);
            return 1;
        }
        /* refused here, not in pl_config_check: -1 would read as auto */
        if (k->type == KT_I64_AUTO && v < 0) {
            snprintf(err, errlen, "must be >= 0 or auto, 0 = all rows (got %s)", value);
            return 1;
        }
        *(int64_t *)field = v;
        return 0;
    }
    case KT_U64: {
        if (value[0] == '-') { snprintf(err, errlen, "'%s' is not a non-negative integer", value); return 1; }
        unsigned long long v = strtoull(value, &end, 10);
        if (end == value || *end || errno) { snprintf(err, errlen, "'%s' is not a non-negative integer", value); return 1; }
        *(uint64_t *)field = v;
        return 0;
    }
    case KT_RANGE: {
        double a = strtod(value, &end), b = NAN;
        if (end != value && isfinite(a)) {
            while (*end == ' ' || *end == '\t') end++;
            if (*end == ',') {
                const char *v2 = end + 1;
                b = strtod(v2, &end);
                if (end == v2) b = NAN;
            }
        }
        if (!isfinite(a) || !isfinite(b) || *end || errno == ERANGE) {
            snprintf(err, errlen, "'%s' is not two finite numbers 'a, b'", value);
            return 1;
        }
        ((double *)field)[0] = a;
        ((double *)field)[1] = b;
        return 0;
    }
    case KT_CPLX_OPT: return parse_complex(value, (double *)field, err, errlen);
    case KT_DBL_OPT:
    case KT_DBL: {
        double v = strtod(value, &end);
        if (end == value || *end || errno == ERANGE || !isfinite(v)) { snprintf(err, errlen, "'%s' is not a finite number", value); return 1; }
        *(double *)field = v;
        return 0;
    }
    case KT_BOOL:
        if (!strcasecmp(value, "true") || !strcasecmp(value, "yes") || !strcmp(value, "1") || !strcasecmp(value, "on")) *(int *)field = 1;
        else if (!strcasecmp(value, "false") || !strcasecmp(value, "no") || !strcmp(value, "0") || !strcasecmp(value, "off")) *(int *)field = 0;
        else { snprintf(err, errlen, "'%s' is not true or false", value); return 1; }
        return 0;
    case KT_ENUM: {
        const char *w = k->words;
        for (int idx = 0; *w; idx++) {
            const char *bar = strchr(w, '|');
            size_t n = bar ? (size_t)(bar - w) : strlen(w);
            if (strlen(value) == n && !strncmp(value, w, n)) { *(int *)field = idx; return 0; }
            if (!bar) break;
            w = bar + 1;
        }
        snprintf(err, errlen, "'%s' is not one of %s", value, k->words);
        return 1;
    }
    case KT_STR:
        if (strlen(value) >= k->size) { snprintf(err, errlen, "value longer than %zu characters", k->size - 1); return 1; }
        if (!value[0]) { snprintf(err, errlen, "empty value"); return 1; }
        strcpy(field, value);
        return 0;
    }
    return 1;
}

/* A [sweep] key: it must name a [model] key other than type, or [solver]
 * target (a sweep over targets of a spectral transformation), once; its
 * value text is kept for app/sweep.c.  line > 0: file line, -1: --set
 * (which replaces an earlier value).  Returns 0, or 1 with a message. */
static int sweep_key_add(pl_config *cfg, const char *name, const char *value, int line, char *err, size_t errlen)
{
    pl_sweep_cfg *sw = &cfg->sweep;
    if ((pl_cfg_find_key("model", name) < 0 && strcmp(name, "target")) || !strcmp(name, "type")) {
        snprintf(err, errlen,
                 "[sweep] %s: unknown key (a sweep key names a [model] key or [solver] target, or is combine or "
                 "warm_start)",
                 name);
        return 1;
    }
    int i = 0;
    while (i < sw->nkeys && strcmp(sw->key[i], name)) i++;
    if (i < sw->nkeys && line > 0) {
        snprintf(err, errlen, "[sweep] %s: key given twice (first on line %d)", name, sw->line[i]);
        return 1;
    }
    if (i == sw->nkeys && sw->nkeys == PL_SWEEP_MAX_KEYS) {
        snprintf(err, errlen, "[sweep] %s: at most %d keys can be swept", name, PL_SWEEP_MAX_KEYS);
        return 1;
    }
    if (strlen(value) >= sizeof sw->values[0]) {
        snprintf(err, errlen, "[sweep] %s: value longer than %zu characters", name, sizeof sw->values[0] - 1);
        return 1;
    }
    if (i == sw->nkeys) sw->nkeys++;
    snprintf(sw->key[i], sizeof sw->key[i], "%s", name);
    snprintf(sw->values[i], sizeof sw->values[i], "%s", value);
    sw->line[i] = line;
    return 0;
}

typedef struct parse_state {
    pl_config *cfg;
    int line;        /* current line, counted by the reader */
    int indented;    /* the current line starts with white space */
    int last_key;    /* the key set last (-1: none) */
    char err[512];
} parse_state;

/* [model] bonds continues on indented lines (libinih's multi-line values
 * hand them over as the same key again): the parts joined by commas */
static int bonds_continue(parse_state *st, int i, const char *value)
{
    char *b = st->cfg->model.bonds;
    size_t n = strlen(b);
    while (n > 0 && (b[n - 1] == ' ' || b[n - 1] == '\t')) n--;
    const int comma = n > 0 && b[n - 1] == ',';
    if (n + strlen(value) + 3 > sizeof st->cfg->model.bonds) {
        snprintf(st->err, sizeof st->err, "[model] bonds: longer than %zu characters", sizeof st->cfg->model.bonds - 1);
        return 0;
    }
    snprintf(b + n, sizeof st->cfg->model.bonds - n, "%s %s", comma ? "" : ",", value);
    st->last_key = i;
    return 1;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_state *st = user;
    where_t *wh = st->cfg->where_;
    if (!known_section(section)) {
        snprintf(st->err, sizeof st->err, "[%s] unknown section (known: model, matrix, solver, spmv, output, sweep)",
                 section);
        return 0;
    }
    if (!strcmp(section, "sweep") && strcmp(name, "combine") && strcmp(name, "warm_start")) {
        if (sweep_key_add(st->cfg, name, value, st->line, st->err, sizeof st->err)) return 0;
        return 1;
    }
    int i = pl_cfg_find_key(section, name);
    if (i < 0) {
        snprintf(st->err, sizeof st->err, "[%s] %s: unknown key", section, name);
        return 0;
    }
    if (st->indented && i == st->last_key && !strcmp(section, "model") && !strcmp(name, "bonds"))
        return bonds_continue(st, i, value);
    if (wh->line[i] > 0) {
        snprintf(st->err, sizeof st->err, "[%s] %s: key given twice (first on line %d)", section, name, wh->line[i]);
        return 0;
    }
    char msg[400];
    if (parse_value(st->cfg, &pl_cfg_keys[i], value, msg, sizeof msg)) {
        snprintf(st->err, sizeof st->err, "[%s] %s: %s", section, name, msg);
        return 0;
    }
    wh->line[i] = -2; /* placeholder, fixed below with the line number */
    st->last_key = i;
    return 1;
}

/* libinih does not pass line numbers to the handler; read line by line with
 * ini_parse_stream and a reader that counts lines. */
typedef struct line_reader {
    FILE *f;
    parse_state *st;
    pl_config *cfg;
} line_reader;

static char *reader(char *str, int num, void *stream)
{
    line_reader *lr = stream;
    where_t *wh = lr->cfg->where_;
    /* keys set by the previous line get the previous line number */
    for (size_t i = 0; i < NKEYS; i++)
        if (wh->line[i] == -2) wh->line[i] = lr->st->line;
    char *r = fgets(str, num, lr->f);
    if (r) lr->st->line++;
    lr->st->indented = r && (r[0] == ' ' || r[0] == '\t');
    return r;
}

static int append_text(pl_config *cfg, const char *s)
{
    size_t old = cfg->text ? strlen(cfg->text) : 0, add = strlen(s);
    char *t = realloc(cfg->text, old + add + 2);
    PL_CHECK(t, PL_ERR_MEM, "out of host memory");
    memcpy(t + old, s, add);
    t[old + add] = 0;
    cfg->text = t;
    return PL_OK;
}

int pl_config_read(pl_config *cfg, const char *path)
{
    PL_CHECK(cfg->where_, PL_ERR_MEM, "out of host memory");
    snprintf(cfg->path, sizeof cfg->path, "%s", path);
    FILE *f = fopen(path, "r");
    PL_CHECK(f, PL_ERR_INPUT, "%s: cannot open config file: %s", path, strerror(errno));
    /* keep the text for the output file */
    char buf[4096];
    size_t n;
    int rc = PL_OK;
    while ((n = fread(buf, 1, sizeof buf - 1, f)) > 0) {
        buf[n] = 0;
        if (strlen(buf) != n) { fclose(f); return PL_ERROR(PL_ERR_INPUT, "%s: not a text file (NUL byte)", path); }
        if ((rc = append_text(cfg, buf))) { fclose(f); return rc; }
    }
    rewind(f);
    parse_state st = {.cfg = cfg, .line = 0, .last_key = -1};
    line_reader lr = {.f = f, .st = &st, .cfg = cfg};
    int err = ini_parse_stream(reader, &lr, handler, &st);
    for (size_t i = 0; i < NKEYS; i++) /* keys set on the last line */
        if (((where_t *)cfg->where_)->line[i] == -2) ((where_t *)cfg->where_)->line[i] = st.line;
    fclose(f);
    if (err > 0) {
        if (st.err[0]) return PL_ERROR(PL_ERR_INPUT, "%s:%d: %s", path, err, st.err);
        return PL_ERROR(PL_ERR_INPUT, "%s:%d: syntax error (expected [section] or key = value)", path, err);
    }
    PL_CHECK(err == 0, PL_ERR_INPUT, "%s: cannot parse config file", path);
    return PL_OK;
}

int pl_config_set(pl_config *cfg, const char *assignment)
{
    char sec[64], key[64];
    const char *dot = strchr(assignment, '.'), *eq = strchr(assignment, '=');
    PL_CHECK(dot && eq && dot < eq && (size_t)(dot - assignment) < sizeof sec && (size_t)(eq - dot - 1) < sizeof key,
             PL_ERR_INPUT, "--set %s: expected section.key=value", assignment);
    memcpy(sec, assignment, (size_t)(dot - assignment));
    sec[dot - assignment] = 0;
    memcpy(key, dot + 1, (size_t)(eq - dot - 1));
    key[eq - dot - 1] = 0;
    PL_CHECK(known_section(sec), PL_ERR_INPUT, "--set %s: [%s] unknown section", assignment, sec);
    if (!strcmp(sec, "sweep") && strcmp(key, "combine") && strcmp(key, "warm_start")) {
        char msg[600];
        PL_CHECK(!sweep_key_add(cfg, key, eq + 1, -1, msg, sizeof msg), PL_ERR_INPUT, "--set %s: %s", assignment, msg);
        char line[2300];
        snprintf(line, sizeof line, "# --set %s\n", assignment);
        PL_CALL(append_text(cfg, line));
        return PL_OK;
    }
    int i = pl_cfg_find_key(sec, key);
    PL_CHECK(i >= 0, PL_ERR_INPUT, "--set %s: [%s] %s: unknown key", assignment, sec, key);
    char msg[400];
    PL_CHECK(!parse_value(cfg, &pl_cfg_keys[i], eq + 1, msg, sizeof msg), PL_ERR_INPUT, "--set %s: [%s] %s: %s", assignment, sec, key, msg);
    ((where_t *)cfg->where_)->line[i] = -1;
    char line[512];
    snprintf(line, sizeof line, "# --set %s\n", assignment);
    PL_CALL(append_text(cfg, line));
    return PL_OK;
}

const char *pl_config_where(const pl_config *cfg, const char *section, const char *key, char *buf, size_t len)
{
    int i = pl_cfg_find_key(section, key);
    int line = (i >= 0 && cfg->where_) ? ((where_t *)cfg->where_)->line[i] : 0;
    if (!strcmp(section, "sweep"))
        for (int j = 0; j < cfg->sweep.nkeys; j++)
            if (!strcmp(cfg->sweep.key[j], key)) line = cfg->sweep.line[j];
    const char *path = cfg->path[0] ? cfg->path : "config";
    if (line > 0) snprintf(buf, len, "%s:%d: [%s] %s", path, line, section, key);
    else if (line < 0) snprintf(buf, len, "--set %s.%s: [%s] %s", section, key, section, key);
    else snprintf(buf, len, "%s: [%s] %s", path, section, key);
    return buf;
}

static int is_set(const pl_config *cfg, const char *section, const char *key)
{
    int i = pl_cfg_find_key(section, key);
    return i >= 0 && ((where_t *)cfg->where_)->line[i] != 0;
}

int pl_config_is_set(const pl_config *cfg, const char *section, const char *key) { return is_set(cfg, section, key); }

/* Which [model] keys belong to block-stencil: 0 = not one of its keys,
 * 1 = optional, 2 = required.  Every other [model] key except type belongs
 * to holstein-hubbard (required where its required_hh says so). */
static int bs_key(const key_desc *k)
{
    static const char *const req[] = {"nx", "ny", "nz", "block_size"};
    static const char *const opt[] = {"stencil", "convection", "shift", "corner", "rotation", "seed"};
    if (strcmp(k->section, "model")) return 0;
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
        if (!strcmp(k->key, req[i])) return 2;
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
        if (!strcmp(k->key, opt[i])) return 1;
    return 0;
}

/* Whether key k is used by the configured model type. */
int pl_cfg_key_used(const pl_config *cfg, const key_desc *k)
{
    if (k->type == KT_DBL_OPT || k->type == KT_RANGE || k->type == KT_CPLX_OPT)
        return !isnan(*(const double *)((const char *)cfg + k->offset));
    /* the keys of a spectral transformation, only where one can run (older dumps stay as they were) */
    const int st_keys = !isnan(cfg->solver.target) || cfg->matrix.b_file[0];
    if (!strcmp(k->section, "solver") && (!strcmp(k->key, "transform") || !strcmp(k->key, "factorization")))
        return st_keys;
    if (!strcmp(k->section, "matrix") && !strncmp(k->key, "b_", 2)) return cfg->matrix.b_file[0] != 0;
    if (!strcmp(k->section, "sweep")) return cfg->sweep.nkeys > 0;
    if (!strcmp(k->section, "spectral")) return pl_config_spectral_key_used(cfg, k->key); /* pl_config_spectral.c */
    if (strcmp(k->section, "model") || !strcmp(k->key, "type")) return 1;
    switch (cfg->model.type) {
    case PL_MODEL_HDF5: return 0;
    case PL_MODEL_BLOCK_STENCIL: return bs_key(k) != 0;
    default:
        return bs_key(k) == 0 && pl_config_lattice_key_used(cfg, k->key) && pl_config_cutoff_key_used(cfg, k->key);
    }
}

#define BAD(sec, key, ...) PL_CFG_BAD(cfg, sec, key, __VA_ARGS__)

int pl_config_check(pl_config *cfg)
{
    PL_CHECK(cfg->where_, PL_ERR_MEM, "out of host memory");
    for (size_t i = 0; i < NKEYS; i++) {
        int need = cfg->model.type == PL_MODEL_HDF5            ? pl_cfg_keys[i].required_h5
                   : cfg->model.type == PL_MODEL_BLOCK_STENCIL ? (!strcmp(pl_cfg_keys[i].key, "type") || bs_key(&pl_cfg_keys[i]) == 2)
                                                               : pl_cfg_keys[i].required_hh && pl_cfg_key_used(cfg, &pl_cfg_keys[i]) &&
                                                                     (cfg->model.lattice == HH_LATTICE_CHAIN || strcmp(pl_cfg_keys[i].key, "sites"));
        if (need && !is_set(cfg, pl_cfg_keys[i].section, pl_cfg_keys[i].key))
            return PL_ERROR(PL_ERR_INPUT, "%s: [%s] missing key '%s'", cfg->path[0] ? cfg->path : "config", pl_cfg_keys[i].section, pl_cfg_keys[i].key);
    }
    const pl_model_cfg *m = &cfg->model;
    if (m->type == PL_MODEL_HOLSTEIN_HUBBARD) PL_CALL(pl_config_resolve_lattice(cfg)); /* pl_config_lattice.c */
    if (m->type == PL_MODEL_HOLSTEIN_HUBBARD) {
        if (m->sites < 2) BAD("model", "sites", "%d sites: need at least 2", m->sites);
        if (m->sites > 62) BAD("model", "sites", "%d sites: at most 62 are supported", m->sites);
        if (m->n_up < 0) BAD("model", "n_up", "must be >= 0 (got %d)", m->n_up);
        if (m->n_up > m->sites) BAD("model", "n_up", "%d > sites = %d", m->n_up, m->sites);
        if (m->n_down < 0) BAD("model", "n_down", "must be >= 0 (got %d)", m->n_down);
        if (m->n_down > m->sites) BAD("model", "n_down", "%d > sites = %d", m->n_down, m->sites);
        PL_CALL(pl_config_check_cutoff(cfg)); /* max_phonons (auto), cutoff_warn: pl_config_cutoff.c */
        if (!(m->phonon_frequency > 0)) BAD("model", "phonon_frequency", "must be > 0 (got %g)", m->phonon_frequency);
    }
    if (m->type == PL_MODEL_BLOCK_STENCIL) {
        if (m->nx < 1) BAD("model", "nx", "must be >= 1 (got %d)", m->nx);
        if (m->ny < 1) BAD("model", "ny", "must be >= 1 (got %d)", m->ny);
        if (m->nz < 1) BAD("model", "nz", "must be >= 1 (got %d)", m->nz);
        if (m->block_size < 1 || m->block_size > 64) BAD("model", "block_size", "must be in 1..64 (got %d)", m->block_size);
        if (m->stencil != PL_STENCIL_7 && m->stencil != PL_STENCIL_27) BAD("model", "stencil", "must be 7 or 27");
        if (!(m->convection >= 0 && m->convection < 1)) BAD("model", "convection", "must be in [0, 1) (got %g)", m->convection);
        if (!(m->rotation > 0 && m->rotation < 3.14159265358979323846)) BAD("model", "rotation", "must be in (0, pi) radians (got %g)", m->rotation);
        if (!isfinite(m->shift)) BAD("model", "shift", "must be finite");
        if (!isfinite(m->corner)) BAD("model", "corner", "must be finite");
        int64_t pts = 0, rows = 0, nnz = 0;
        if (__builtin_mul_overflow((int64_t)m->nx, (int64_t)m->ny, &pts) || __builtin_mul_overflow(pts, (int64_t)m->nz, &pts) ||
            __builtin_mul_overflow(pts, (int64_t)m->block_size, &rows))
            BAD("model", "block_size", "N = nx ny nz block_size = %d x %d x %d x %d rows does not fit 64 bits", m->nx, m->ny,
                m->nz, m->block_size);
        if (__builtin_mul_overflow(rows, (int64_t)m->block_size * (m->stencil == PL_STENCIL_27 ? 27 : 7), &nnz))
            BAD("model", "block_size", "the number of non-zeros (about %s N block_size) does not fit 64 bits",
                m->stencil == PL_STENCIL_27 ? "27" : "7");
    }
    const pl_solver_cfg *s = &cfg->solver;
    if (s->nev < 1) BAD("solver", "nev", "must be >= 1 (got %d)", s->nev);
    if (!(s->tolerance > 0)) BAD("solver", "tolerance", "must be > 0 (got %g)", s->tolerance);
    if (s->tolerance >= 1) BAD("solver", "tolerance", "must be < 1 (got %g)", s->tolerance);
    if (s->tolerance < 1e-15) /* residual estimates would only meet it by underflowing to 0 */
        BAD("solver", "tolerance", "%g is below what double precision can resolve; use >= 1e-15", s->tolerance);
    if (!(s->verify_probability > 0 && s->verify_probability < 1))
        BAD("solver", "verify_probability", "must be in (0, 1) (got %g)", s->verify_probability);
    if (s->ncv != 0 && s->ncv < s->nev + 2) BAD("solver", "ncv", "must be 0 (auto) or >= nev + 2 = %d (got %d)", s->nev + 2, s->ncv);
    if (s->max_restarts < 0 && s->max_restarts != PL_MAX_RESTARTS_AUTO)
        BAD("solver", "max_restarts", "must be >= 0 or auto (got %d)", s->max_restarts);
    if (s->reproducible && cfg->spmv.backend == PL_BACKEND_CUDA)
        BAD("solver", "reproducible", "true needs [spmv] backend = cpu or auto (the cuda backend's reductions "
                                      "are not exact)");
    {
        const int cheb = s->method == PL_METHOD_CHEBFD, has_iv = !isnan(s->interval[0]);
        int has_t = !isnan(s->target); /* or every point of a [sweep] target has one */
        for (int k = 0; k < cfg->sweep.nkeys; k++) has_t |= !strcmp(cfg->sweep.key[k], "target");
        if (has_iv && !cheb) BAD("solver", "interval", "only method = chebfd uses a window");
        if (has_t && !cheb && s->transform == PL_TRANSFORM_NONE)
            BAD("solver", "target", "transform = none: a target needs method = chebfd or transform = shift_invert");
        if (has_t && cheb && s->target_imag != 0.0)
            BAD("solver", "target", "method = chebfd takes a real target (got %g%+gi)", s->target, s->target_imag);
        if (!has_t && s->transform == PL_TRANSFORM_SHIFT_INVERT)
            BAD("solver", "transform", "shift_invert needs [solver] target = sigma");
        if (!has_t && s->which >= PL_WHICH_NEAREST)
            BAD("solver", "which", "%s is relative to a target: set [solver] target",
                pl_config_enum_name("solver", "which", s->which));
        if (cfg->matrix.b_file[0] && cfg->model.type != PL_MODEL_HDF5)
            BAD("matrix", "b_file", "a B matrix goes with an imported A ([model] type = hdf5)");
        if (cfg->matrix.b_file[0] && cheb) BAD("matrix", "b_file", "method = chebfd solves A x = lambda x only");
        if (has_iv && !(s->interval[0] < s->interval[1]))
            BAD("solver", "interval", "[%g, %g] is empty or inverted (need a < b)", s->interval[0], s->interval[1]);
        if (has_iv && has_t) BAD("solver", "target", "give either interval or target, not both");
        if (cheb && !has_iv && !has_t && s->which != PL_WHICH_SMALLEST && s->which != PL_WHICH_LARGEST)
            BAD("solver", "which", "method = chebfd needs interval, target, or which = smallest | largest");
        if (s->filter_degree == 0 || s->filter_degree > 200000)
            BAD("solver", "filter_degree", "must be in 1..200000 or auto (got %d)", s->filter_degree);
        if (s->search_size == 0) BAD("solver", "search_size", "must be >= 1 or auto (got 0)");
    }
    const pl_spmv_cfg *p = &cfg->spmv;
    if (p->chunk_height < 1 || p->chunk_height > 1024) BAD("spmv", "chunk_height", "must be in 1..1024 (got %d)", p->chunk_height);
    if (p->sort_window < 0 && p->sort_window != PL_SORT_WINDOW_AUTO)
        BAD("spmv", "sort_window", "must be >= 0 or auto, 0 = all rows (got %lld)", (long long)p->sort_window);
    if (p->repeats < 1) BAD("spmv", "repeats", "must be >= 1 (got %d)", p->repeats);
    if (p->precision != PL_PRECISION_DOUBLE) BAD("spmv", "precision", "single precision is not implemented yet; use double");
    if (p->format == PL_FORMAT_MATRIX_FREE && cfg->model.type != PL_MODEL_HOLSTEIN_HUBBARD)
        BAD("spmv", "format", "matrix_free needs a generated holstein-hubbard model (an imported or block-stencil matrix "
            "is stored; use auto, pjds or compressed)");
    if (cfg->output.observables == PL_OBS_TRUE && cfg->model.type != PL_MODEL_HOLSTEIN_HUBBARD)
        BAD("output", "observables", "needs a generated holstein-hubbard model (an imported or block-stencil matrix has "
            "no basis to measure in)");
    {
        const pl_kpm_cfg *k = &cfg->kpm;
        if (k->moments < 2 || k->moments > 1000000) BAD("kpm", "moments", "must be in 2..1000000 (got %d)", k->moments);
        if (k->random_vectors < 1 || k->random_vectors > 100000)
            BAD("kpm", "random_vectors", "must be in 1..100000 (got %d)", k->random_vectors);
        if (k->block < 0 || k->block > 64)
            BAD("kpm", "block", "must be in 1..64 vectors per SpMMV, or 0 = min(random_vectors, 32) (got %d)", k->block);
        if (!(k->lorentz_lambda > 0) || !isfinite(k->lorentz_lambda))
            BAD("kpm", "lorentz_lambda", "must be > 0 (got %g)", k->lorentz_lambda);
        if (k->points < 0 || k->points > 100000000) BAD("kpm", "points", "must be >= 0, 0 = 4 moments (got %d)", k->points);
    }
    PL_CALL(pl_config_check_spectral(cfg)); /* pl_config_spectral.c */
    if (!(cfg->output.checkpoint_interval >= 0))
        BAD("output", "checkpoint_interval", "must be >= 0 seconds, 0 = only on a signal (got %g)",
            cfg->output.checkpoint_interval);
    return PL_OK;
}

void pl_config_destroy(pl_config *cfg)
{
    if (!cfg) return;
    free(cfg->text);
    free(cfg->where_);
    cfg->text = NULL;
    cfg->where_ = NULL;
}

int pl_config_copy(pl_config *dst, const pl_config *src)
{
    *dst = *src;
    dst->text = NULL;
    dst->where_ = NULL;
    dst->where_ = malloc(sizeof(where_t));
    dst->text = src->text ? strdup(src->text) : NULL;
    if (!dst->where_ || (src->text && !dst->text)) {
        pl_config_destroy(dst);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    if (src->where_) memcpy(dst->where_, src->where_, sizeof(where_t));
    else memset(dst->where_, 0, sizeof(where_t));
    return PL_OK;
}

int pl_config_set_value(pl_config *cfg, const char *section, const char *key, const char *value)
{
    int i = pl_cfg_find_key(section, key);
    PL_CHECK(i >= 0, PL_ERR_INPUT, "[%s] %s: unknown key", section, key);
    char msg[400];
    PL_CHECK(!parse_value(cfg, &pl_cfg_keys[i], value, msg, sizeof msg), PL_ERR_INPUT, "[%s] %s: %s", section, key, msg);
    return PL_OK;
}

int pl_config_key_exists(const char *section, const char *key) { return pl_cfg_find_key(section, key) >= 0; }

