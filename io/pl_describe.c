/* pl_describe.c — dimension scales, units, descriptions and provenance of
 * a result file (pl_describe.h).
 *
 * Dimension scales (HDF5's high-level H5DS API, the netCDF-4 data model):
 * a scale is a dataset in the root group whose name is the dimension's
 * name; each axis of a dataset is attached to one.  netCDF readers take a
 * dimension's name from its scale and its values as a coordinate; a scale
 * whose NAME attribute is netCDF's "This is a netCDF dimension but not a
 * netCDF variable." marker is a dimension without values (used for the
 * eigenvectors' row axis, which has N entries: writing 0..N-1 would cost
 * 8 N bytes).  The table below names the axes of every dataset the
 * project writes; the names follow docs/formats.md. */
#define _DEFAULT_SOURCE /* realpath, gethostname */
#define _POSIX_C_SOURCE 200809L
#include "pl_describe.h"

#include <errno.h>
#include <hdf5_hl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "pl_build.h"
#include "pl_commit.h"
#include "pl_error.h"
#include "pl_h5_check.h"
#include "pl_h5util.h"

/* units: "E" = energy (the caller's unit), "1/E" its inverse, else as written */
typedef struct ds_desc {
    const char *path;  /* dataset path without the leading / */
    int rank;          /* the rank these dims are for (0: any)  */
    const char *dims;  /* comma-separated dimension names       */
    const char *units;
    const char *text;
} ds_desc;

static const ds_desc TABLE[] = {
    {"eigenvalues", 1, "eigenpair", "E", "wanted eigenvalues in wanted order ([solver] which)"},
    {"residual_norms", 1, "eigenpair", "E", "explicit residual ||A x - lambda x||_2 of each pair, ||x||_2 = 1"},
    {"eigenvectors", 2, "eigenpair,row", "1", "unit eigenvectors, row i for eigenvalue i, in the original basis"},
    {"convergence/iterations", 1, "cycle", "1", "matrix-vector products done at the end of each restart cycle"},
    {"convergence/ritz_values", 2, "cycle,eigenpair", "E", "the wanted Ritz values at the end of each cycle"},
    {"convergence/residual_estimates", 2, "cycle,eigenpair", "E", "residual estimates of those Ritz values"},
    {"observables/energy_kinetic", 1, "eigenpair", "E", "kinetic energy <H> - the three other parts"},
    {"observables/energy_hubbard", 1, "eigenpair", "E", "U <sum_i n_i,up n_i,down>"},
    {"observables/energy_phonon", 1, "eigenpair", "E", "omega0 x phonon_number"},
    {"observables/energy_coupling", 1, "eigenpair", "E", "electron-phonon coupling energy"},
    {"observables/energy_expectation", 1, "eigenpair", "E", "<psi|H psi>"},
    {"observables/double_occupancy", 1, "eigenpair", "1", "<sum_i n_i,up n_i,down> / L"},
    {"observables/phonon_number", 1, "eigenpair", "1", "<sum b+ b> of the basis' modes + beta0^2"},
    {"observables/norm", 1, "eigenpair", "1", "<psi|psi> (a check: 1)"},
    {"observables/phonon_distribution", 2, "eigenpair,phonons", "1", "P(n): weight of the states with n phonons"},
    {"observables/density_correlation", 2, "eigenpair,distance", "1", "C(r) = (1/L) sum_i <n_i n_i+r>"},
    {"observables/density_correlation", 3, "eigenpair,site,site_j", "1", "<n_i n_j>"},
    {"observables/spin_correlation", 2, "eigenpair,distance", "1", "(1/L) sum_i <S^z_i S^z_i+r>"},
    {"observables/spin_correlation", 3, "eigenpair,site,site_j", "1", "<S^z_i S^z_j>"},
    {"observables/electron_phonon_correlation", 2, "eigenpair,distance", "1", "(1/L) sum_i <n_i x_i+r>"},
    {"observables/electron_phonon_correlation", 3, "eigenpair,site,site_j", "1", "<n_i x_j>, x = b + b+"},
    {"observables/momentum_distribution", 3, "eigenpair,spin,momentum", "1",
     "n_s(k) = (1/L) sum_ij e^{iq.(r_i - r_j)} <c+_is c_js>, spin 0 up, 1 down"},
    {"spectral/akw", 2, "spectral_momentum,omega", "1/E", "A(k, omega) of each momentum (or site) of /spectral/momenta"},
    {"spectral/momenta", 1, "spectral_momentum", "1", "momentum indices m = mx + lx my (or site indices: local)"},
    {"spectral/weights", 1, "spectral_momentum", "1", "<n_ks> (removal) or 1 - <n_ks> (addition): |c_ks psi0|^2"},
    {"spectral/part_momentum", 1, "spectral_part", "1", "the momentum (or site) each recursion belongs to"},
    {"spectral/omega", 1, "omega", "E", "frequency grid, measured from the ground state energy"},
    {"spectral/intensity", 1, "omega", "1/E", "spectral function A(omega), broadened"},
    {"spectral/alpha", 2, "spectral_part,spectral_step", "E", "Lanczos recursion coefficients alpha"},
    {"spectral/beta", 2, "spectral_part,spectral_step", "E", "Lanczos recursion coefficients beta (beta[p][0] = |phi_p|)"},
    {"spectral/steps_done", 1, "spectral_part", "1", "recursion steps done per part"},
    {"dos/energy", 1, "dos_energy", "E", "energies (Chebyshev nodes mapped to E), ascending"},
    {"dos/density", 1, "dos_energy", "1/E", "density of states, integral 1"},
    {"dos/moments", 1, "moment", "1", "raw Chebyshev moments mu_n, before the kernel"},
    /* [model] max_phonons = auto (app/cutoff.c): one row per cut-off solved */
    {"max_phonons_search/max_phonons", 1, "cutoff_step", "1", "the phonon cut-offs M solved, ascending"},
    {"max_phonons_search/energy", 1, "cutoff_step", "E", "the lowest eigenvalue E0 at each M"},
    {"max_phonons_search/rows", 1, "cutoff_step", "1", "the rows N of the model at each M"},
    /* sweep files (io/pl_sweepfile.c): one row per point */
    {"sweep/eigenvalues", 2, "point,eigenpair", "E", "eigenvalues of each point"},
    {"sweep/residual_norms", 2, "point,eigenpair", "E", "explicit residual norms of each point"},
    {"sweep/status", 1, "point", "1", "0 not run, 1 converged, 2 not converged, 3 failed"},
    {"sweep/rebuilt", 1, "point", "1", "1 where the point built its operator anew"},
    {"sweep/spmv_count", 1, "point", "1", "matrix-vector products of each point"},
    {"sweep/solve_seconds", 1, "point", "s", "solve time of each point"},
    {"sweep/*", 1, "point", NULL, NULL}, /* the swept keys' values */
};

static int matches(const char *pattern, const char *path)
{
    const size_t n = strlen(pattern);
    if (n >= 2 && pattern[n - 1] == '*') return !strncmp(pattern, path, n - 1) && !strchr(path + n - 1, '/');
    return !strcmp(pattern, path);
}

static const ds_desc *lookup(const char *path, int rank)
{
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++)
        if (matches(TABLE[i].path, path) && (TABLE[i].rank == 0 || TABLE[i].rank == rank)) return &TABLE[i];
    return NULL;
}

/* The paths of all datasets (H5Lvisit over hard links). */
typedef struct name_list {
    char **v;
    int n, cap, failed;
} name_list;

static herr_t collect(hid_t g, const char *name, const H5L_info_t *info, void *op)
{
    name_list *L = op;
    /* hard links only (a sweep's points are external links to their own,
     * self-described files), and not the copies of points under /points */
    if (info->type != H5L_TYPE_HARD || !strncmp(name, "points/", 7)) return 0;
    hid_t o = H5Oopen(g, name, H5P_DEFAULT);
    if (o < 0) return 0;
    const int is_ds = H5Iget_type(o) == H5I_DATASET;
    H5Oclose(o);
    if (!is_ds) return 0;
    if (L->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 32;
        char **v = realloc(L->v, (size_t)cap * sizeof *v);
        if (!v) return L->failed = 1, -1;
        L->v = v;
        L->cap = cap;
    }
    if (!(L->v[L->n] = strdup(name))) return L->failed = 1, -1;
    L->n++;
    return 0;
}

static void names_free(name_list *L)
{
    for (int i = 0; i < L->n; i++) free(L->v[i]);
    free(L->v);
}

/* The scale "/dim" of length n, made when missing; *scale open (close it). */
static int scale_get(hid_t file, const char *dim, hsize_t n, hid_t *scale, const char *fname)
{
    int rc = PL_OK;
    hid_t space = -1, d = -1;
    char name[160];
    snprintf(name, sizeof name, "%s", dim);
    if (H5Lexists(file, name, H5P_DEFAULT) > 0) {
        H5W(d = H5Dopen2(file, name, H5P_DEFAULT), "%s: HDF5 failed to open dataset /%s", fname, name);
        hsize_t len = 0;
        H5W(space = H5Dget_space(d), "%s: HDF5 failed to read the shape of /%s", fname, name);
        const int r = H5Sget_simple_extent_ndims(space);
        if (r == 1) H5Sget_simple_extent_dims(space, &len, NULL);
        if (r == 1 && len == n && H5DSis_scale(d) > 0) goto done;
        /* taken by another length or by data: the name with the length */
        H5Sclose(space);
        H5Dclose(d);
        space = d = -1;
        snprintf(name, sizeof name, "%s_%llu", dim, (unsigned long long)n);
        if (H5Lexists(file, name, H5P_DEFAULT) > 0) {
            H5W(d = H5Dopen2(file, name, H5P_DEFAULT), "%s: HDF5 failed to open dataset /%s", fname, name);
            goto done;
        }
    }
    H5W(space = H5Screate_simple(1, &n, NULL), "%s: HDF5 failed to create the dataspace of /%s", fname, name);
    H5W(d = H5Dcreate2(file, name, H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
       "%s: HDF5 failed to create dimension scale /%s", fname, name);
    const char *cm = getenv("PJDS_DESCRIBE_COORD_MAX"); /* tests: a dimension without values on a small N */
    if (n <= (cm && *cm ? (hsize_t)strtoull(cm, NULL, 10) : (hsize_t)PL_DESCRIBE_COORD_MAX)) {
        int64_t *ix = malloc((size_t)(n ? n : 1) * sizeof *ix);
        PL_CHECK_GOTO(ix, PL_ERR_MEM, out, rc, "out of host memory (dimension %s)", name);
        for (hsize_t i = 0; i < n; i++) ix[i] = (int64_t)i;
        herr_t e = n ? H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ix) : 0;
        free(ix);
        H5W(e, "%s: HDF5 failed to write dimension scale /%s", fname, name);
        H5W(H5DSset_scale(d, name), "%s: HDF5 failed to make /%s a dimension scale", fname, name);
    } else {
        char marker[96];
        snprintf(marker, sizeof marker, "This is a netCDF dimension but not a netCDF variable.%10llu",
                 (unsigned long long)n);
        H5W(H5DSset_scale(d, marker), "%s: HDF5 failed to make /%s a dimension scale", fname, name);
    }
done:
    *scale = d;
    d = -1;
out:
    if (space >= 0) H5Sclose(space);
    if (d >= 0) H5Dclose(d);
    return rc;
}

/* Attach a scale to each axis of dataset `path`; units and description
 * from the table. */
static int describe_one(hid_t file, const char *path, const char *eunits, int scales, const char *fname)
{
    int rc = PL_OK;
    hid_t d = -1, space = -1, sc = -1;
    hsize_t dims[8];
    H5W(d = H5Dopen2(file, path, H5P_DEFAULT), "%s: HDF5 failed to open dataset /%s", fname, path);
    if (H5DSis_scale(d) > 0) goto out;
    H5W(space = H5Dget_space(d), "%s: HDF5 failed to read the shape of /%s", fname, path);
    const int rank = H5Sget_simple_extent_ndims(space);
    if (rank < 1 || rank > 8) goto out; /* scalars: no axes */
    H5Sget_simple_extent_dims(space, dims, NULL);
    const ds_desc *t = lookup(path, rank);
    char names[8][128];
    const char *p = t ? t->dims : "";
    for (int a = 0; a < rank; a++) {
        size_t k = 0;
        while (t && *p && *p != ',' && k + 1 < sizeof names[a]) names[a][k++] = *p++;
        if (t && *p == ',') p++;
        names[a][k] = 0;
        if (!k) { /* not in the table: <path>_<axis> with / as _ */
            snprintf(names[a], sizeof names[a], "%s_%d", path, a);
            for (char *c = names[a]; *c; c++)
                if (*c == '/') *c = '_';
        }
    }
    for (int a = 0; a < rank && scales; a++) {
        PL_CALL_GOTO(scale_get(file, names[a], dims[a], &sc, fname), out, rc);
        const htri_t at = H5DSis_attached(d, sc, (unsigned)a);
        H5W(at, "%s: HDF5 failed to check the dimension scale of /%s", fname, path);
        if (!at) H5W(H5DSattach_scale(d, sc, (unsigned)a), "%s: HDF5 failed to attach /%s to axis %d of /%s", fname,
                    names[a], a, path);
        H5Dclose(sc);
        sc = -1;
    }
    if (t && t->units) {
        const char *u = !strcmp(t->units, "E") ? eunits : !strcmp(t->units, "1/E") ? NULL : t->units;
        char inv[128];
        if (!u) {
            snprintf(inv, sizeof inv, "1/(%s)", eunits);
            u = inv;
        }
        if (H5Aexists(d, "units") <= 0) PL_CALL_GOTO(pl_h5_attr_string(d, "units", u, fname), out, rc);
        if (t->text && H5Aexists(d, "description") <= 0) PL_CALL_GOTO(pl_h5_attr_string(d, "description", t->text, fname), out, rc);
    }
out:
    if (sc >= 0) H5Dclose(sc);
    if (space >= 0) H5Sclose(space);
    if (d >= 0) H5Dclose(d);
    return rc;
}

int pl_h5_describe(hid_t file, const char *energy_units, int scales, const char *fname)
{
    name_list L = {0};
    int rc = PL_OK;
    const herr_t e = H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect, &L);
    PL_CHECK_GOTO(!L.failed, PL_ERR_MEM, out, rc, "out of host memory (dataset names of %s)", fname);
    PL_CHECK_GOTO(e >= 0, PL_ERR_HDF5, out, rc, "%s: HDF5 failed to list the datasets", fname);
    for (int i = 0; i < L.n && rc == PL_OK; i++)
        rc = describe_one(file, L.v[i], energy_units && *energy_units ? energy_units : "matrix units", scales, fname);
out:
    names_free(&L);
    return rc;
}

/* zlib's CRC-32 of a whole file, read in 4 MiB pieces (in its thread:
 * no error state is set here, the result goes back through s->rc). */
static void *sum_thread(void *arg)
{
    pl_file_sum *s = arg;
    FILE *f = fopen(s->path, "rb");
    unsigned char *buf = f ? malloc(1 << 22) : NULL;
    s->rc = !f ? PL_ERR_IO : !buf ? PL_ERR_MEM : PL_OK;
    uLong c = crc32(0L, Z_NULL, 0);
    long long total = 0;
    size_t got;
    while (s->rc == PL_OK && (got = fread(buf, 1, 1 << 22, f)) > 0) {
        c = crc32(c, buf, (uInt)got);
        total += (long long)got;
    }
    if (s->rc == PL_OK && ferror(f)) s->rc = PL_ERR_IO;
    free(buf);
    if (f) fclose(f);
    s->crc = c;
    s->bytes = total;
    return NULL;
}

int pl_file_sum_start(pl_file_sum *s, const char *path)
{
    memset(s, 0, sizeof *s);
    PL_CHECK(realpath(path, s->path), PL_ERR_IO, "%s: cannot resolve its path: %s", path, strerror(errno));
    const int e = pthread_create(&s->th, NULL, sum_thread, s);
    PL_CHECK(e == 0, PL_ERR_INTERNAL, "cannot start the checksum thread of %s: %s", path, strerror(e));
    s->started = 1;
    return PL_OK;
}

int pl_file_sum_finish(pl_file_sum *s)
{
    if (!s->started) return PL_OK;
    pthread_join(s->th, NULL);
    s->started = 0;
    PL_CHECK(s->rc == PL_OK, s->rc, "%s: cannot read it for its checksum", s->path);
    return PL_OK;
}

int pl_h5_provenance(hid_t file, const char *config_path, const pl_file_sum *sum, const char *fname)
{
    char buf[PATH_MAX + 64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    PL_CALL(pl_h5_attr_string(file, "created_utc", buf, fname));
    PL_CALL(pl_h5_attr_string(file, "program_commit", PL_COMMIT, fname));
    if (gethostname(buf, sizeof buf - 1) != 0) snprintf(buf, sizeof buf, "unknown");
    buf[sizeof buf - 1] = 0;
    PL_CALL(pl_h5_attr_string(file, "host", buf, fname));
    char abs[PATH_MAX];
    const char *cp = config_path && *config_path && realpath(config_path, abs) ? abs : (config_path ? config_path : "");
    PL_CALL(pl_h5_attr_string(file, "config_file_absolute", cp, fname));
    if (sum && sum->path[0] && !sum->started && sum->rc == PL_OK) {
        snprintf(buf, sizeof buf, "%08lx", sum->crc & 0xffffffffUL);
        PL_CALL(pl_h5_attr_string(file, "matrix_file_absolute", sum->path, fname));
        PL_CALL(pl_h5_attr_int(file, "matrix_file_bytes", sum->bytes, fname));
        PL_CALL(pl_h5_attr_string(file, "matrix_file_crc32", buf, fname));
    }
    return PL_OK;
}
