/* pl_spectrum.c — writer of the HDF5 result file (docs/formats.md, "HDF5 result schema").
 *
 * Method: serial HDF5 (1.10 API) on one process; the file lives under a
 * temporary name "<path>.tmp.<pid>" until pl_spectrum_commit closes it and
 * moves it into place (pl_place_file: atomic inside one directory; without
 * replace never over a file that appeared meanwhile), so readers never see
 * a partial file.  Eigenvectors are one contiguous float64 dataset nev x N
 * written by hyperslabs, one row range of one vector at a time, so no
 * process ever needs a whole vector.  All HDF5 calls are checked. */
#define _POSIX_C_SOURCE 200809L
#include "pl_spectrum.h"

#include "pl_describe.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_error.h"
#include "pl_h5util.h"
#include "pl_place.h"

struct pl_spectrum {
    char path[1100];
    char tmp[1200];
    hid_t file;
    hid_t vec; /* /eigenvectors or -1 */
    int vec_complex; /* /eigenvectors has the complex compound type */
    int nev;
    int64_t N;
    char energy_units[64]; /* units of the energies (pl_spectrum_set_units) */
    int no_scales;         /* descriptions only, no dimension scales     */
};

/* Why a write failed, when the system said so: a full disk, a quota or a
 * file size limit ("" otherwise). */
static const char *io_hint(void)
{
    const int e = errno;
    if (e == ENOSPC) return " (no space left on the device)";
    if (e == EFBIG) return " (file too large: a file size limit)";
    if (e == EDQUOT) return " (disk quota exceeded)";
    if (e == EIO) return " (input/output error)";
    return "";
}

/* Check an HDF5 return (hid_t or herr_t < 0 is a failure). */
#define PL_H5(call, what)                                                                                   \
    do {                                                                                                    \
        errno = 0;                                                                                          \
        if ((int64_t)(call) < 0)                                                                            \
            return pl_error_set(PL_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: HDF5 failed to %s%s", sp->tmp, \
                                what, io_hint());                                                           \
    } while (0)

/* Variant for functions that release identifiers on the way out. */
#define PL_H5_GOTO(call, what)                                                                                 \
    do {                                                                                                       \
        errno = 0;                                                                                             \
        if ((int64_t)(call) < 0) {                                                                             \
            rc = pl_error_set(PL_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: HDF5 failed to %s%s", sp->tmp, what, \
                              io_hint());                                                                      \
            goto out;                                                                                          \
        }                                                                                                      \
    } while (0)

static void close_id(hid_t id, herr_t (*fn)(hid_t))
{
    if (id >= 0) fn(id);
}

int pl_spectrum_create(const char *path, pl_spectrum **out)
{
    *out = NULL;
    PL_CHECK(path && path[0], PL_ERR_INPUT, "[output] file: empty path");
    pl_spectrum *sp = calloc(1, sizeof *sp);
    PL_CHECK(sp, PL_ERR_MEM, "out of host memory");
    sp->file = -1;
    sp->vec = -1;
    if (strlen(path) >= sizeof sp->path) {
        free(sp);
        return PL_ERROR(PL_ERR_INPUT, "[output] file: path too long (%zu characters)", strlen(path));
    }
    snprintf(sp->path, sizeof sp->path, "%s", path);
    snprintf(sp->tmp, sizeof sp->tmp, "%s.tmp.%ld", path, (long)getpid());
    /* HDF5's own error stack would print many lines; we report one */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    sp->file = H5Fcreate(sp->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (sp->file < 0) {
        int rc = pl_error_set(PL_ERR_IO, __FILE__, __LINE__, __func__, "%s: cannot create the output file", sp->tmp);
        free(sp);
        return rc;
    }
    *out = sp;
    return PL_OK;
}

const char *pl_spectrum_tmp_path(const pl_spectrum *sp) { return sp ? sp->tmp : ""; }

/* A 1D or 2D dataset written at once. */
static int write_dataset(pl_spectrum *sp, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data)
{
    int rc = PL_OK;
    hid_t space = -1, dset = -1;
    char what[300];
    snprintf(what, sizeof what, "create dataset %s", name);
    PL_H5_GOTO(space = H5Screate_simple(rank, dims, NULL), what);
    PL_H5_GOTO(dset = H5Dcreate2(sp->file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), what);
    hsize_t total = 1;
    for (int i = 0; i < rank; i++) total *= dims[i];
    snprintf(what, sizeof what, "write dataset %s", name);
    if (total > 0) PL_H5_GOTO(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), what);
out:
    close_id(dset, H5Dclose);
    close_id(space, H5Sclose);
    return rc;
}

int pl_spectrum_write_array(pl_spectrum *sp, const char *group, const char *name, int rank, const int64_t *dims,
                            const double *data)
{
    PL_CHECK(sp && group && name && rank >= 1 && rank <= 3 && dims, PL_ERR_ARG, "pl_spectrum_write_array: bad arguments");
    char path[400];
    snprintf(path, sizeof path, "/%s", group);
    if (!pl_h5_exists(sp->file, path)) {
        hid_t g;
        PL_H5(g = H5Gcreate2(sp->file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create group");
        PL_H5(H5Gclose(g), "close group");
    }
    hsize_t d[3];
    for (int i = 0; i < rank; i++) d[i] = (hsize_t)dims[i];
    snprintf(path, sizeof path, "/%s/%s", group, name);
    return write_dataset(sp, path, H5T_NATIVE_DOUBLE, rank, d, data);
}

/* open /group, write one attribute with fn, close */
static int group_attr(pl_spectrum *sp, const char *group, const char *name, int is_string, double v, const char *str)
{
    char path[400];
    snprintf(path, sizeof path, "/%s", group);
    hid_t g;
    PL_H5(g = H5Gopen2(sp->file, path, H5P_DEFAULT), "open group");
    int rc = is_string ? pl_h5_attr_string(g, name, str, sp->path) : pl_h5_attr_double(g, name, v, sp->path);
    H5Gclose(g);
    return rc;
}

int pl_spectrum_group_attr_double(pl_spectrum *sp, const char *group, const char *name, double value)
{
    PL_CHECK(sp && group && name, PL_ERR_ARG, "pl_spectrum_group_attr_double: bad arguments");
    return group_attr(sp, group, name, 0, value, NULL);
}

int pl_spectrum_group_attr_string(pl_spectrum *sp, const char *group, const char *name, const char *value)
{
    PL_CHECK(sp && group && name && value, PL_ERR_ARG, "pl_spectrum_group_attr_string: bad arguments");
    return group_attr(sp, group, name, 1, 0.0, value);
}

int pl_spectrum_write_results(pl_spectrum *sp, int nev, const double *eigenvalues, const double *residual_norms)
{
    PL_CHECK(sp && nev >= 0, PL_ERR_ARG, "pl_spectrum_write_results: bad arguments");
    hsize_t d[1] = {(hsize_t)nev};
    PL_CALL(write_dataset(sp, "/eigenvalues", H5T_NATIVE_DOUBLE, 1, d, eigenvalues));
    PL_CALL(write_dataset(sp, "/residual_norms", H5T_NATIVE_DOUBLE, 1, d, residual_norms));
    return PL_OK;
}

/* A complex dataset from separate real and imaginary parts (n values). */
static int write_complex(pl_spectrum *sp, const char *name, int rank, const hsize_t *dims, size_t n, const double *re,
                         const double *im)
{
    int rc = PL_OK;
    hid_t type = -1;
    double *buf = malloc((2 * n + 1) * sizeof *buf);
    PL_CHECK(buf, PL_ERR_MEM, "out of host memory");
    for (size_t k = 0; k < n; k++) {
        buf[2 * k] = re[k];
        buf[2 * k + 1] = im[k];
    }
    PL_H5_GOTO(type = pl_h5_complex_type(), "create the complex type");
    rc = write_dataset(sp, name, type, rank, dims, buf);
    if (rc) pl_error_trace(rc, __FILE__, __LINE__, __func__, "write_dataset(sp, name, type, rank, dims, buf)");
out:
    close_id(type, H5Tclose);
    free(buf);
    return rc;
}

int pl_spectrum_write_results_complex(pl_spectrum *sp, int nev, const double *re, const double *im,
                                      const double *residual_norms)
{
    PL_CHECK(sp && nev >= 0, PL_ERR_ARG, "pl_spectrum_write_results_complex: bad arguments");
    hsize_t d[1] = {(hsize_t)nev};
    PL_CALL(write_complex(sp, "/eigenvalues", 1, d, (size_t)nev, re, im));
    PL_CALL(write_dataset(sp, "/residual_norms", H5T_NATIVE_DOUBLE, 1, d, residual_norms));
    return PL_OK;
}

/* ritz_imag NULL: /convergence/ritz_values float64, else complex. */
int pl_spectrum_write_history_complex(pl_spectrum *sp, int nrows, int nev, const int64_t *iterations, const double *ritz,
                                      const double *ritz_imag, const double *resid)
{
    PL_CHECK(sp && nrows >= 0 && nev >= 0, PL_ERR_ARG, "pl_spectrum_write_history: bad arguments");
    hid_t g;
    PL_H5(g = H5Gcreate2(sp->file, "/convergence", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "create group /convergence");
    PL_H5(H5Gclose(g), "close group /convergence");
    hsize_t d1[1] = {(hsize_t)nrows}, d2[2] = {(hsize_t)nrows, (hsize_t)nev};
    PL_CALL(write_dataset(sp, "/convergence/iterations", H5T_NATIVE_INT64, 1, d1, iterations));
    if (ritz_imag)
        PL_CALL(write_complex(sp, "/convergence/ritz_values", 2, d2, (size_t)nrows * (size_t)nev, ritz, ritz_imag));
    else
        PL_CALL(write_dataset(sp, "/convergence/ritz_values", H5T_NATIVE_DOUBLE, 2, d2, ritz));
    PL_CALL(write_dataset(sp, "/convergence/residual_estimates", H5T_NATIVE_DOUBLE, 2, d2, resid));
    return PL_OK;
}

int pl_spectrum_write_history(pl_spectrum *sp, int nrows, int nev, const int64_t *iterations, const double *ritz,
                              const double *resid)
{
    return pl_spectrum_write_history_complex(sp, nrows, nev, iterations, ritz, NULL, resid);
}

static int write_attr(pl_spectrum *sp, const char *name, hid_t type, const void *value)
{
    int rc = PL_OK;
    hid_t space = -1, attr = -1;
    char what[300];
    snprintf(what, sizeof what, "write attribute %s", name);
    PL_H5_GOTO(space = H5Screate(H5S_SCALAR), what);
    PL_H5_GOTO(attr = H5Acreate2(sp->file, name, type, space, H5P_DEFAULT, H5P_DEFAULT), what);
    PL_H5_GOTO(H5Awrite(attr, type, value), what);
out:
    close_id(attr, H5Aclose);
    close_id(space, H5Sclose);
    return rc;
}

int pl_spectrum_attr_int(pl_spectrum *sp, const char *name, int64_t value)
{
    PL_CHECK(sp && name, PL_ERR_ARG, "pl_spectrum_attr_int: bad arguments");
    return write_attr(sp, name, H5T_NATIVE_INT64, &value);
}

int pl_spectrum_attr_double(pl_spectrum *sp, const char *name, double value)
{
    PL_CHECK(sp && name, PL_ERR_ARG, "pl_spectrum_attr_double: bad arguments");
    return write_attr(sp, name, H5T_NATIVE_DOUBLE, &value);
}

int pl_spectrum_attr_string(pl_spectrum *sp, const char *name, const char *value)
{
    PL_CHECK(sp && name, PL_ERR_ARG, "pl_spectrum_attr_string: bad arguments");
    int rc = PL_OK;
    hid_t type = -1;
    const char *v = value ? value : "";
    PL_H5_GOTO(type = H5Tcopy(H5T_C_S1), "create a string type");
    PL_H5_GOTO(H5Tset_size(type, H5T_VARIABLE), "create a string type");
    PL_H5_GOTO(H5Tset_cset(type, H5T_CSET_UTF8), "create a string type");
    rc = write_attr(sp, name, type, &v);
    if (rc) pl_error_trace(rc, __FILE__, __LINE__, __func__, "write_attr(sp, name, type, &v)");
out:
    close_id(type, H5Tclose);
    return rc;
}

int pl_spectrum_vectors_create(pl_spectrum *sp, int nev, int64_t N) { return pl_spectrum_vectors_create2(sp, nev, N, 0); }

int pl_spectrum_vectors_create2(pl_spectrum *sp, int nev, int64_t N, int is_complex)
{
    PL_CHECK(sp && nev > 0 && N > 0 && sp->vec < 0, PL_ERR_ARG, "pl_spectrum_vectors_create: bad arguments");
    int rc = PL_OK;
    hid_t space = -1, ctype = -1;
    hsize_t d[2] = {(hsize_t)nev, (hsize_t)N};
    if (is_complex) PL_H5_GOTO(ctype = pl_h5_complex_type(), "create the complex type");
    PL_H5_GOTO(space = H5Screate_simple(2, d, NULL), "create dataset /eigenvectors");
    PL_H5_GOTO(sp->vec = H5Dcreate2(sp->file, "/eigenvectors", is_complex ? ctype : H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT),
               "create dataset /eigenvectors");
    sp->nev = nev;
    sp->N = N;
    sp->vec_complex = is_complex;
out:
    close_id(ctype, H5Tclose);
    close_id(space, H5Sclose);
    return rc;
}

/* Rows [row0, row0 + count) of eigenvector i from x (float64, or interleaved
 * (re, im) pairs when is_complex; must match how /eigenvectors was created). */
static int vectors_write(pl_spectrum *sp, int i, int64_t row0, int64_t count, const double *x, int original_basis,
                         int is_complex)
{
    PL_CHECK(sp && sp->vec >= 0, PL_ERR_ARG, "pl_spectrum_vectors_write: /eigenvectors not created");
    PL_CHECK(sp->vec_complex == is_complex, PL_ERR_ARG, "pl_spectrum_vectors_write: /eigenvectors is %s",
             sp->vec_complex ? "complex" : "real");
    PL_CHECK(original_basis, PL_ERR_ARG, "pl_spectrum_vectors_write: refusing a vector in the permuted basis");
    PL_CHECK(i >= 0 && i < sp->nev && row0 >= 0 && count >= 0 && row0 + count <= sp->N, PL_ERR_ARG,
             "pl_spectrum_vectors_write: rows [%lld, %lld) of vector %d outside %d x %lld", (long long)row0,
             (long long)(row0 + count), i, sp->nev, (long long)sp->N);
    if (count == 0) return PL_OK;
    int rc = PL_OK;
    hid_t fspace = -1, mspace = -1, ctype = -1;
    hsize_t start[2] = {(hsize_t)i, (hsize_t)row0}, cnt[2] = {1, (hsize_t)count}, m[1] = {(hsize_t)count};
    if (is_complex) PL_H5_GOTO(ctype = pl_h5_complex_type(), "create the complex type");
    PL_H5_GOTO(fspace = H5Dget_space(sp->vec), "select rows of /eigenvectors");
    PL_H5_GOTO(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, cnt, NULL), "select rows of /eigenvectors");
    PL_H5_GOTO(mspace = H5Screate_simple(1, m, NULL), "select rows of /eigenvectors");
    PL_H5_GOTO(H5Dwrite(sp->vec, is_complex ? ctype : H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, x),
               "write /eigenvectors");
out:
    close_id(ctype, H5Tclose);
    close_id(mspace, H5Sclose);
    close_id(fspace, H5Sclose);
    return rc;
}

int pl_spectrum_vectors_write(pl_spectrum *sp, int i, int64_t row0, int64_t count, const double *x, int original_basis)
{
    return vectors_write(sp, i, row0, count, x, original_basis, 0);
}

int pl_spectrum_vectors_write_complex(pl_spectrum *sp, int i, int64_t row0, int64_t count, const double *xri,
                                      int original_basis)
{
    return vectors_write(sp, i, row0, count, xri, original_basis, 1);
}

int pl_spectrum_commit(pl_spectrum **psp, int replace)
{
    PL_CHECK(psp && *psp, PL_ERR_ARG, "pl_spectrum_commit: no writer");
    pl_spectrum *sp = *psp;
    int rc = PL_OK;
    if (sp->vec >= 0 && H5Dclose(sp->vec) < 0)
        rc = pl_error_set(PL_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: HDF5 failed to close /eigenvectors", sp->tmp);
    sp->vec = -1;
    if (rc == PL_OK) rc = pl_h5_describe(sp->file, sp->energy_units, !sp->no_scales, sp->tmp);
    if (rc == PL_OK && H5Fflush(sp->file, H5F_SCOPE_GLOBAL) < 0)
        rc = pl_error_set(PL_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: HDF5 failed to flush the file", sp->tmp);
    herr_t e = H5Fclose(sp->file);
    if (e < 0) pl_h5_mark_unclean();
    sp->file = -1;
    if (rc == PL_OK && e < 0)
        rc = pl_error_set(PL_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: HDF5 failed to close the file", sp->tmp);
    int kept = 0; /* refused (PL_ERR_INPUT): the result stays under its temporary name */
    if (rc == PL_OK) {
        rc = pl_place_file(sp->tmp, sp->path, replace);
        kept = rc == PL_ERR_INPUT;
    }
    if (rc != PL_OK && !kept) unlink(sp->tmp);
    free(sp);
    *psp = NULL;
    return rc;
}

void pl_spectrum_abort(pl_spectrum **psp)
{
    if (!psp || !*psp) return;
    pl_spectrum *sp = *psp;
    if (sp->vec >= 0) H5Dclose(sp->vec);
    if (sp->file >= 0 && H5Fclose(sp->file) < 0) pl_h5_mark_unclean();
    unlink(sp->tmp);
    free(sp);
    *psp = NULL;
}

void pl_spectrum_set_units(pl_spectrum *sp, const char *energy_units, int scales)
{
    if (!sp) return;
    snprintf(sp->energy_units, sizeof sp->energy_units, "%s", energy_units ? energy_units : "");
    sp->no_scales = !scales;
}

int pl_spectrum_provenance(pl_spectrum *sp, const char *config_path, const struct pl_file_sum *matrix_sum)
{
    PL_CHECK(sp, PL_ERR_ARG, "pl_spectrum_provenance: no writer");
    return pl_h5_provenance(sp->file, config_path, matrix_sum, sp->tmp);
}
