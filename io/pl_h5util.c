/* pl_h5util.c — checked HDF5 helpers (pl_h5util.h). */
#define _POSIX_C_SOURCE 200809L
#include "pl_h5util.h"

#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "pl_h5_check.h"

static void close_id(hid_t id, herr_t (*fn)(hid_t))
{
    if (id >= 0) fn(id);
}

void pl_h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

static int h5_unclean;
void pl_h5_mark_unclean(void) { h5_unclean = 1; }
int pl_h5_unclean(void) { return h5_unclean; }

int pl_h5_exists(hid_t loc, const char *name)
{
    /* check each component, as H5Lexists requires */
    char path[1024];
    snprintf(path, sizeof path, "%s", name);
    for (char *p = path + (path[0] == '/'); ; p++) {
        char c = *p;
        if (c == '/' || c == 0) {
            *p = 0;
            if (H5Lexists(loc, path, H5P_DEFAULT) <= 0) return 0;
            if (c == 0) return 1;
            *p = '/';
        }
    }
}

int pl_h5_write(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data,
                const char *file)
{
    int rc = PL_OK;
    hid_t space = -1, dset = -1, lcpl = -1;
    H5W(lcpl = H5Pcreate(H5P_LINK_CREATE), "%s: HDF5 failed to create a property list", file);
    H5W(H5Pset_create_intermediate_group(lcpl, 1), "%s: HDF5 failed to set a property", file);
    H5W(space = H5Screate_simple(rank, dims, NULL), "%s: HDF5 failed to create the dataspace of %s", file, name);
    H5W(dset = H5Dcreate2(loc, name, type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT), "%s: HDF5 failed to create dataset %s",
        file, name);
    hsize_t total = 1;
    for (int i = 0; i < rank; i++) total *= dims[i];
    if (total > 0) H5W(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "%s: HDF5 failed to write dataset %s", file, name);
out:
    close_id(dset, H5Dclose);
    close_id(space, H5Sclose);
    close_id(lcpl, H5Pclose);
    return rc;
}

int pl_h5_create_2d(hid_t loc, const char *name, hsize_t rows, hsize_t cols, const char *file)
{
    int rc = PL_OK;
    hid_t space = -1, dset = -1;
    hsize_t d[2] = {rows, cols};
    H5W(space = H5Screate_simple(2, d, NULL), "%s: HDF5 failed to create the dataspace of %s", file, name);
    H5W(dset = H5Dcreate2(loc, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        "%s: HDF5 failed to create dataset %s", file, name);
out:
    close_id(dset, H5Dclose);
    close_id(space, H5Sclose);
    return rc;
}

/* Row r, columns [c0, c0 + n) of a 2-D float64 dataset: write (w = 1) or read. */
static int row_io(hid_t loc, const char *name, hsize_t r, hsize_t c0, hsize_t n, double *data, int w, const char *file)
{
    int rc = PL_OK;
    hid_t dset = -1, fs = -1, ms = -1;
    hsize_t d[2] = {0, 0}, off[2] = {r, c0}, cnt[2] = {1, n};
    if (w) H5W(dset = H5Dopen2(loc, name, H5P_DEFAULT), "%s: HDF5 failed to open dataset %s", file, name);
    else H5R(dset = H5Dopen2(loc, name, H5P_DEFAULT), "%s: dataset %s is missing", file, name);
    H5W(fs = H5Dget_space(dset), "%s: HDF5 failed to get the dataspace of %s", file, name);
    if (H5Sget_simple_extent_ndims(fs) != 2 || H5Sget_simple_extent_dims(fs, d, NULL) < 0 || r >= d[0] || c0 + n > d[1]) {
        rc = pl_error_set(w ? PL_ERR_ARG : PL_ERR_INPUT, __FILE__, __LINE__, __func__,
                          "%s: dataset %s: row %llu, columns %llu..%llu are outside its %llu x %llu shape", file, name,
                          (unsigned long long)r, (unsigned long long)c0, (unsigned long long)(c0 + n),
                          (unsigned long long)d[0], (unsigned long long)d[1]);
        goto out;
    }
    if (n == 0) goto out;
    H5W(H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL) , "%s: HDF5 failed to select rows of %s", file, name);
    H5W(ms = H5Screate_simple(1, &n, NULL), "%s: HDF5 failed to create a dataspace", file);
    if (w) H5W(H5Dwrite(dset, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, data), "%s: HDF5 failed to write %s", file, name);
    else H5R(H5Dread(dset, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, data), "%s: dataset %s cannot be read", file, name);
out:
    close_id(ms, H5Sclose);
    close_id(fs, H5Sclose);
    close_id(dset, H5Dclose);
    return rc;
}

int pl_h5_row_write(hid_t loc, const char *name, hsize_t r, hsize_t c0, hsize_t n, const double *data, const char *file)
{
    return row_io(loc, name, r, c0, n, (double *)data, 1, file);
}

int pl_h5_row_read(hid_t loc, const char *name, hsize_t r, hsize_t c0, hsize_t n, double *data, const char *file)
{
    return row_io(loc, name, r, c0, n, data, 0, file);
}

int pl_h5_shape(hid_t loc, const char *name, int *rank, hsize_t dims[2], const char *file)
{
    int rc = PL_OK;
    hid_t dset = -1, fs = -1;
    dims[0] = dims[1] = 0;
    H5R(dset = H5Dopen2(loc, name, H5P_DEFAULT), "%s: dataset %s is missing", file, name);
    H5R(fs = H5Dget_space(dset), "%s: dataset %s has no dataspace", file, name);
    *rank = H5Sget_simple_extent_ndims(fs);
    if (*rank < 1 || *rank > 2 || H5Sget_simple_extent_dims(fs, dims, NULL) < 0) {
        rc = pl_error_set(PL_ERR_INPUT, __FILE__, __LINE__, __func__, "%s: dataset %s: expected 1 or 2 dimensions",
                          file, name);
    }
out:
    close_id(fs, H5Sclose);
    close_id(dset, H5Dclose);
    return rc;
}

int pl_h5_read(hid_t loc, const char *name, hid_t memtype, size_t count, void *data, const char *file)
{
    int rc = PL_OK, rank = 0;
    hsize_t d[2];
    PL_CALL(pl_h5_shape(loc, name, &rank, d, file));
    hsize_t total = rank == 1 ? d[0] : d[0] * d[1];
    PL_CHECK(total == count, PL_ERR_INPUT, "%s: dataset %s has %llu elements, expected %zu", file, name,
             (unsigned long long)total, count);
    if (count == 0) return PL_OK;
    hid_t dset = -1;
    H5R(dset = H5Dopen2(loc, name, H5P_DEFAULT), "%s: dataset %s is missing", file, name);
    H5R(H5Dread(dset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "%s: dataset %s cannot be read as the expected type",
        file, name);
out:
    close_id(dset, H5Dclose);
    return rc;
}

static int attr_write(hid_t obj, const char *name, hid_t type, const void *v, const char *file)
{
    int rc = PL_OK;
    hid_t space = -1, attr = -1;
    if (H5Aexists(obj, name) > 0) H5W(H5Adelete(obj, name), "%s: HDF5 failed to replace attribute %s", file, name);
    H5W(space = H5Screate(H5S_SCALAR), "%s: HDF5 failed to create a dataspace", file);
    H5W(attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), "%s: HDF5 failed to create attribute %s",
        file, name);
    H5W(H5Awrite(attr, type, v), "%s: HDF5 failed to write attribute %s", file, name);
out:
    close_id(attr, H5Aclose);
    close_id(space, H5Sclose);
    return rc;
}

int pl_h5_attr_int(hid_t obj, const char *name, int64_t v, const char *file)
{
    return attr_write(obj, name, H5T_NATIVE_INT64, &v, file);
}

int pl_h5_attr_double(hid_t obj, const char *name, double v, const char *file)
{
    return attr_write(obj, name, H5T_NATIVE_DOUBLE, &v, file);
}

int pl_h5_attr_string(hid_t obj, const char *name, const char *v, const char *file)
{
    int rc = PL_OK;
    hid_t t = -1;
    H5W(t = H5Tcopy(H5T_C_S1), "%s: HDF5 failed to copy a type", file);
    H5W(H5Tset_size(t, H5T_VARIABLE), "%s: HDF5 failed to set a string type", file);
    H5W(H5Tset_cset(t, H5T_CSET_UTF8), "%s: HDF5 failed to set a string type", file);
    rc = attr_write(obj, name, t, &v, file);
out:
    close_id(t, H5Tclose);
    return rc;
}

static int attr_read(hid_t obj, const char *name, hid_t type, void *v, const char *file)
{
    int rc = PL_OK;
    hid_t attr = -1;
    H5R(attr = H5Aopen(obj, name, H5P_DEFAULT), "%s: attribute %s is missing", file, name);
    H5R(H5Aread(attr, type, v), "%s: attribute %s cannot be read as the expected type", file, name);
out:
    close_id(attr, H5Aclose);
    return rc;
}

int pl_h5_attr_get_int(hid_t obj, const char *name, int64_t *v, const char *file)
{
    return attr_read(obj, name, H5T_NATIVE_INT64, v, file);
}

int pl_h5_attr_get_double(hid_t obj, const char *name, double *v, const char *file)
{
    return attr_read(obj, name, H5T_NATIVE_DOUBLE, v, file);
}

int pl_h5_attr_get_string(hid_t obj, const char *name, char **v, const char *file)
{
    int rc = PL_OK;
    hid_t t = -1;
    char *s = NULL;
    *v = NULL;
    H5W(t = H5Tcopy(H5T_C_S1), "%s: HDF5 failed to copy a type", file);
    H5W(H5Tset_size(t, H5T_VARIABLE), "%s: HDF5 failed to set a string type", file);
    H5W(H5Tset_cset(t, H5T_CSET_UTF8), "%s: HDF5 failed to set a string type", file);
    PL_CALL_GOTO(attr_read(obj, name, t, &s, file), out, rc);
    *v = strdup(s ? s : "");
    if (s) H5free_memory(s);
    if (!*v) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
out:
    close_id(t, H5Tclose);
    return rc;
}

hid_t pl_h5_complex_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 2 * sizeof(double));
    if (t < 0) return t;
    if (H5Tinsert(t, "r", 0, H5T_NATIVE_DOUBLE) < 0 || H5Tinsert(t, "i", sizeof(double), H5T_NATIVE_DOUBLE) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}
