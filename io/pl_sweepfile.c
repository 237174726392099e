/* pl_sweepfile.c — the HDF5 file of a sweep (pl_sweepfile.h). */
#define _POSIX_C_SOURCE 200809L
#include "pl_sweepfile.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_build.h"
#include "pl_error.h"
#include "pl_describe.h"
#include "pl_h5util.h"
#include "pl_place.h"

#define SWEEP_FORMAT "pjds-lanczos sweep"
#define PL_SWEEP_KEYS_MAX_READ 16

const char *pl_point_name(int p, char buf[16])
{
    snprintf(buf, 16, "%04d", p);
    return buf;
}

int pl_sweep_summary_alloc(pl_sweep_summary *s, int npoints, int nkeys, int ncols, int cplx)
{
    memset(s, 0, sizeof *s);
    s->npoints = npoints;
    s->nkeys = nkeys;
    s->ncols = ncols;
    s->cplx = cplx;
    size_t P = (size_t)npoints + 1, E = (size_t)npoints * (size_t)ncols + 1;
    s->keys = calloc((size_t)nkeys + 1, sizeof *s->keys);
    s->words = calloc((size_t)nkeys + 1, sizeof *s->words);
    s->values = calloc(P * ((size_t)nkeys + 1), sizeof *s->values);
    s->eig_re = malloc(E * sizeof *s->eig_re);
    s->eig_im = malloc(E * sizeof *s->eig_im);
    s->resid = malloc(E * sizeof *s->resid);
    s->status = calloc(P, sizeof *s->status);
    s->rebuilt = malloc(P * sizeof *s->rebuilt);
    s->spmvs = calloc(P, sizeof *s->spmvs);
    s->seconds = calloc(P, sizeof *s->seconds);
    if (!s->keys || !s->words || !s->values || !s->eig_re || !s->eig_im || !s->resid || !s->status || !s->rebuilt ||
        !s->spmvs || !s->seconds) {
        pl_sweep_summary_free(s);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    for (size_t i = 0; i < E; i++) s->eig_re[i] = s->eig_im[i] = s->resid[i] = NAN;
    memset(s->rebuilt, -1, P);
    return PL_OK;
}

void pl_sweep_summary_free(pl_sweep_summary *s)
{
    for (int k = 0; s->words && k < s->nkeys; k++) free(s->words[k]);
    free(s->keys);
    free(s->words);
    free(s->values);
    free(s->eig_re);
    free(s->eig_im);
    free(s->resid);
    free(s->status);
    free(s->rebuilt);
    free(s->spmvs);
    free(s->seconds);
    free(s->hash);
    free(s->definition);
    free(s->config);
    free(s->config_path);
    memset(s, 0, sizeof *s);
}

int pl_sweep_summary_widen(pl_sweep_summary *s, int ncols, int cplx)
{
    if (ncols <= s->ncols) {
        s->cplx |= cplx;
        return PL_OK;
    }
    size_t E = (size_t)s->npoints * (size_t)ncols + 1;
    double *a[3] = {malloc(E * sizeof(double)), malloc(E * sizeof(double)), malloc(E * sizeof(double))};
    double *old[3] = {s->eig_re, s->eig_im, s->resid};
    if (!a[0] || !a[1] || !a[2]) {
        for (int i = 0; i < 3; i++) free(a[i]);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    for (int i = 0; i < 3; i++) {
        for (size_t e = 0; e < E; e++) a[i][e] = NAN;
        for (int p = 0; p < s->npoints; p++)
            memcpy(a[i] + (size_t)p * ncols, old[i] + (size_t)p * s->ncols, (size_t)s->ncols * sizeof(double));
        free(old[i]);
    }
    s->eig_re = a[0];
    s->eig_im = a[1];
    s->resid = a[2];
    s->ncols = ncols;
    s->cplx |= cplx;
    return PL_OK;
}

/* The point groups: links or copies. */
static int write_points(hid_t f, const char *tmp, const pl_sweep_summary *s, const pl_point_src *src)
{
    hid_t g = H5Gcreate2(f, "/points", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    PL_CHECK(g >= 0, PL_ERR_HDF5, "%s: HDF5 failed to create group /points", tmp);
    int rc = PL_OK;
    for (int p = 0; p < s->npoints && rc == PL_OK; p++) {
        char name[16];
        pl_point_name(p, name);
        if (src[p].kind == 1) {
            if (H5Lcreate_external(src[p].file, "/", g, name, H5P_DEFAULT, H5P_DEFAULT) < 0)
                rc = PL_ERROR(PL_ERR_HDF5, "%s: HDF5 failed to link /points/%s to %s", tmp, name, src[p].file);
        } else if (src[p].kind == 2) {
            hid_t in = H5Fopen(src[p].file, H5F_ACC_RDONLY, H5P_DEFAULT);
            if (in < 0) {
                rc = PL_ERROR(PL_ERR_INPUT, "%s: cannot open it to copy point %d", src[p].file, p);
                break;
            }
            if (H5Ocopy(in, src[p].obj, g, name, H5P_DEFAULT, H5P_DEFAULT) < 0)
                rc = PL_ERROR(PL_ERR_HDF5, "%s: HDF5 failed to copy %s of %s into /points/%s", tmp, src[p].obj,
                              src[p].file, name);
            H5Fclose(in);
        }
    }
    H5Gclose(g);
    return rc;
}

static int write_all(hid_t f, const char *tmp, const pl_sweep_summary *s, const pl_point_src *src, int finalised)
{
    PL_CALL(pl_h5_attr_string(f, "format", SWEEP_FORMAT, tmp));
    PL_CALL(pl_h5_attr_string(f, "program", "pjds-lanczos", tmp));
    PL_CALL(pl_h5_attr_string(f, "version", PL_VERSION, tmp));
    PL_CALL(pl_h5_attr_string(f, "sweep_hash", s->hash ? s->hash : "", tmp));
    PL_CALL(pl_h5_attr_string(f, "sweep_definition", s->definition ? s->definition : "", tmp));
    PL_CALL(pl_h5_attr_string(f, "config_resolved", s->config ? s->config : "", tmp));
    PL_CALL(pl_h5_attr_int(f, "npoints", s->npoints, tmp));
    PL_CALL(pl_h5_attr_int(f, "finalised", finalised, tmp));
    PL_CALL(pl_h5_provenance(f, s->config_path, NULL, tmp)); /* time, commit, host, the config file */
    hsize_t P = (hsize_t)s->npoints, d2[2] = {P, (hsize_t)s->ncols};
    double *col = malloc(((size_t)P + 1) * sizeof *col);
    PL_CHECK(col, PL_ERR_MEM, "out of host memory");
    int rc = PL_OK;
    for (int k = 0; k < s->nkeys && rc == PL_OK; k++) {
        char name[64];
        snprintf(name, sizeof name, "/sweep/%s", s->keys[k]);
        for (hsize_t p = 0; p < P; p++) col[p] = s->values[p * s->nkeys + k];
        rc = pl_h5_write(f, name, H5T_NATIVE_DOUBLE, 1, &P, col, tmp);
        if (rc == PL_OK && s->words[k]) { /* an enum key: the value is the index into these words */
            hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
            rc = ds < 0 ? PL_ERROR(PL_ERR_HDF5, "%s: HDF5 failed to open %s", tmp, name)
                        : pl_h5_attr_string(ds, "words", s->words[k], tmp);
            if (ds >= 0) H5Dclose(ds);
        }
    }
    free(col);
    PL_CALL(rc);
    if (s->cplx) {
        size_t E = (size_t)P * (size_t)s->ncols;
        double *ri = malloc((2 * E + 1) * sizeof *ri);
        PL_CHECK(ri, PL_ERR_MEM, "out of host memory");
        for (size_t e = 0; e < E; e++) {
            ri[2 * e] = s->eig_re[e];
            ri[2 * e + 1] = s->eig_im[e];
        }
        hid_t ct = pl_h5_complex_type();
        rc = ct < 0 ? PL_ERROR(PL_ERR_HDF5, "%s: HDF5 failed to make the complex type", tmp)
                    : pl_h5_write(f, "/sweep/eigenvalues", ct, 2, d2, ri, tmp);
        if (ct >= 0) H5Tclose(ct);
        free(ri);
        PL_CALL(rc);
    } else {
        PL_CALL(pl_h5_write(f, "/sweep/eigenvalues", H5T_NATIVE_DOUBLE, 2, d2, s->eig_re, tmp));
    }
    PL_CALL(pl_h5_write(f, "/sweep/residual_norms", H5T_NATIVE_DOUBLE, 2, d2, s->resid, tmp));
    PL_CALL(pl_h5_write(f, "/sweep/status", H5T_NATIVE_INT8, 1, &P, s->status, tmp));
    PL_CALL(pl_h5_write(f, "/sweep/rebuilt", H5T_NATIVE_INT8, 1, &P, s->rebuilt, tmp));
    PL_CALL(pl_h5_write(f, "/sweep/spmv_count", H5T_NATIVE_INT64, 1, &P, s->spmvs, tmp));
    PL_CALL(pl_h5_write(f, "/sweep/solve_seconds", H5T_NATIVE_DOUBLE, 1, &P, s->seconds, tmp));
    PL_CALL(write_points(f, tmp, s, src));
    /* a generated Holstein-Hubbard sweep is in units of the hopping t (its
     * definition says the model type), any other in the matrix's units */
    const int hh = s->definition && strstr(s->definition, "type = holstein-hubbard");
    return pl_h5_describe(f, hh ? "t" : "matrix units", 1, tmp);
}

int pl_sweepfile_write(const char *path, const pl_sweep_summary *s, const pl_point_src *src, int finalised,
                       int replace)
{
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    pl_h5_quiet();
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    PL_CHECK(f >= 0, PL_ERR_IO, "%s: cannot create the sweep file", tmp);
    int rc = write_all(f, tmp, s, src, finalised);
    if (H5Fclose(f) < 0 && rc == PL_OK) rc = PL_ERROR(PL_ERR_HDF5, "%s: HDF5 failed to close the file", tmp);
    int kept = 0; /* refused (PL_ERR_INPUT): the file stays under its temporary name */
    if (rc == PL_OK) {
        rc = pl_place_file(tmp, path, replace);
        kept = rc == PL_ERR_INPUT;
    }
    if (rc != PL_OK && !kept) unlink(tmp);
    return rc;
}

static int read_all(hid_t f, const char *path, pl_sweep_summary *s, int *finalised)
{
    char *fmt = NULL;
    int rc = PL_OK;
    int64_t P = 0, fin = 0;
    if (pl_h5_attr_get_string(f, "format", &fmt, path) != PL_OK || strcmp(fmt, SWEEP_FORMAT)) {
        free(fmt);
        pl_error_clear();
        return PL_ERROR(PL_ERR_INPUT, "%s: not a pjds-lanczos sweep file (no format = '%s')", path, SWEEP_FORMAT);
    }
    free(fmt);
    PL_CALL(pl_h5_attr_get_int(f, "npoints", &P, path));
    PL_CALL(pl_h5_attr_get_int(f, "finalised", &fin, path));
    *finalised = (int)fin;
    int rk;
    hsize_t d[2];
    PL_CALL(pl_h5_shape(f, "/sweep/residual_norms", &rk, d, path));
    PL_CHECK(rk == 2 && (int64_t)d[0] == P && d[1] >= 1 && d[1] < 100000, PL_ERR_INPUT,
             "%s: dataset /sweep/residual_norms is not %lld x ncols", path, (long long)P);
    hid_t et = -1;
    {
        hid_t ds = H5Dopen2(f, "/sweep/eigenvalues", H5P_DEFAULT);
        PL_CHECK(ds >= 0, PL_ERR_INPUT, "%s: dataset /sweep/eigenvalues is missing", path);
        et = H5Dget_type(ds);
        H5Dclose(ds);
    }
    int cplx = et >= 0 && H5Tget_class(et) == H5T_COMPOUND;
    if (et >= 0) H5Tclose(et);
    /* the keys: the datasets of /sweep other than the known ones */
    static const char *const known[] = {"eigenvalues", "residual_norms", "status", "rebuilt", "spmv_count", "solve_seconds"};
    hid_t g = H5Gopen2(f, "/sweep", H5P_DEFAULT);
    PL_CHECK(g >= 0, PL_ERR_INPUT, "%s: group /sweep is missing", path);
    H5G_info_t gi;
    if (H5Gget_info(g, &gi) < 0) {
        H5Gclose(g);
        return PL_ERROR(PL_ERR_INPUT, "%s: group /sweep cannot be read", path);
    }
    char names[PL_SWEEP_KEYS_MAX_READ][32];
    int nk = 0;
    for (hsize_t i = 0; i < gi.nlinks; i++) {
        char nm[64] = "";
        if (H5Lget_name_by_idx(g, ".", H5_INDEX_CRT_ORDER, H5_ITER_INC, i, nm, sizeof nm, H5P_DEFAULT) < 0 &&
            H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, nm, sizeof nm, H5P_DEFAULT) < 0)
            continue;
        int is_known = 0;
        for (size_t j = 0; j < sizeof known / sizeof known[0]; j++) is_known |= !strcmp(nm, known[j]);
        if (!is_known && nk < PL_SWEEP_KEYS_MAX_READ && strlen(nm) < 32) snprintf(names[nk++], 32, "%s", nm);
    }
    H5Gclose(g);
    PL_CALL(pl_sweep_summary_alloc(s, (int)P, nk, (int)d[1], cplx));
    size_t E = (size_t)P * d[1];
    double *col = malloc(((size_t)P + 1) * 2 * sizeof *col);
    PL_CHECK(col, PL_ERR_MEM, "out of host memory");
    for (int k = 0; k < nk && rc == PL_OK; k++) {
        char name[64];
        snprintf(s->keys[k], 32, "%s", names[k]);
        snprintf(name, sizeof name, "/sweep/%s", names[k]);
        rc = pl_h5_read(f, name, H5T_NATIVE_DOUBLE, (size_t)P, col, path);
        for (int64_t p = 0; rc == PL_OK && p < P; p++) s->values[p * nk + k] = col[p];
        hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
        if (rc == PL_OK && ds >= 0 && H5Aexists(ds, "words") > 0) rc = pl_h5_attr_get_string(ds, "words", &s->words[k], path);
        if (ds >= 0) H5Dclose(ds);
    }
    free(col);
    PL_CALL(rc);
    if (cplx) {
        double *ri = malloc((2 * E + 1) * sizeof *ri);
        PL_CHECK(ri, PL_ERR_MEM, "out of host memory");
        hid_t ct = pl_h5_complex_type();
        rc = ct < 0 ? PL_ERROR(PL_ERR_HDF5, "HDF5 failed to make the complex type")
                    : pl_h5_read(f, "/sweep/eigenvalues", ct, E, ri, path);
        if (ct >= 0) H5Tclose(ct);
        for (size_t e = 0; rc == PL_OK && e < E; e++) {
            s->eig_re[e] = ri[2 * e];
            s->eig_im[e] = ri[2 * e + 1];
        }
        free(ri);
        PL_CALL(rc);
    } else {
        PL_CALL(pl_h5_read(f, "/sweep/eigenvalues", H5T_NATIVE_DOUBLE, E, s->eig_re, path));
    }
    PL_CALL(pl_h5_read(f, "/sweep/residual_norms", H5T_NATIVE_DOUBLE, E, s->resid, path));
    PL_CALL(pl_h5_read(f, "/sweep/status", H5T_NATIVE_INT8, (size_t)P, s->status, path));
    PL_CALL(pl_h5_read(f, "/sweep/rebuilt", H5T_NATIVE_INT8, (size_t)P, s->rebuilt, path));
    PL_CALL(pl_h5_read(f, "/sweep/spmv_count", H5T_NATIVE_INT64, (size_t)P, s->spmvs, path));
    PL_CALL(pl_h5_read(f, "/sweep/solve_seconds", H5T_NATIVE_DOUBLE, (size_t)P, s->seconds, path));
    for (int64_t p = 0; p < P; p++)
        PL_CHECK(s->status[p] >= 0 && s->status[p] <= 3, PL_ERR_INPUT, "%s: /sweep/status[%lld] = %d is not 0..3", path,
                 (long long)p, s->status[p]);
    PL_CALL(pl_h5_attr_get_string(f, "sweep_hash", &s->hash, path));
    PL_CALL(pl_h5_attr_get_string(f, "sweep_definition", &s->definition, path));
    PL_CALL(pl_h5_attr_get_string(f, "config_resolved", &s->config, path));
    /* written since 2026-11-26; an older file has none */
    if (H5Aexists(f, "config_file_absolute") > 0)
        PL_CALL(pl_h5_attr_get_string(f, "config_file_absolute", &s->config_path, path));
    return PL_OK;
}

int pl_sweepfile_read(const char *path, pl_sweep_summary *s, int *finalised)
{
    memset(s, 0, sizeof *s);
    pl_h5_quiet();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    PL_CHECK(f >= 0, PL_ERR_INPUT, "%s: cannot open it as an HDF5 file", path);
    int rc = read_all(f, path, s, finalised);
    H5Fclose(f);
    if (rc != PL_OK) pl_sweep_summary_free(s);
    return rc;
}

int pl_sweepfile_has_point(const char *path, int p)
{
    pl_h5_quiet();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return 0;
    char name[40], nm[16];
    snprintf(name, sizeof name, "/points/%s", pl_point_name(p, nm));
    int ok = 0;
    if (pl_h5_exists(f, name)) {
        hid_t g = H5Oopen(f, name, H5P_DEFAULT); /* follows an external link */
        if (g >= 0) {
            ok = 1;
            H5Oclose(g);
        }
    }
    H5Fclose(f);
    return ok;
}
