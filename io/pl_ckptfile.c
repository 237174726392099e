/* pl_ckptfile.c — the HDF5 checkpoint file (pl_ckptfile.h). */
#define _POSIX_C_SOURCE 200809L
#include "pl_ckptfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_build.h"
#include "pl_hash.h"
#include "pl_error.h"

#define CKPT_FORMAT "pjds-lanczos checkpoint"
#define CKPT_VERSION 2 /* 2: the Lanczos state holds the omega recurrence's seeds and expected couplings */

static const char *const meta_names[] = {"point", "ranks", "rows", "method", "nev", "ncv", "which", "nvec", "hist_nev"};

static int64_t *meta_field(pl_ckpt_header *h, int i)
{
    int64_t *p[] = {&h->point, &h->ranks, &h->rows, &h->method, &h->nev, &h->ncv, &h->which, &h->nvec, &h->hist_nev};
    return p[i];
}

static void tmp_name(const char *path, char *tmp, size_t len) { snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid()); }

static int write_all(hid_t f, const char *tmp, const pl_ckpt_header *h, const pl_ckpt_arrays *a)
{
    PL_CALL(pl_h5_attr_string(f, "format", CKPT_FORMAT, tmp));
    PL_CALL(pl_h5_attr_int(f, "format_version", CKPT_VERSION, tmp));
    PL_CALL(pl_h5_attr_string(f, "program_version", PL_VERSION, tmp));
    char hash[17];
    pl_hash_text(h->config, hash);
    PL_CALL(pl_h5_attr_string(f, "config_hash", hash, tmp));
    PL_CALL(pl_h5_attr_string(f, "config", h->config, tmp));
    PL_CALL(pl_h5_attr_string(f, "sweep_hash", h->sweep_hash, tmp));
    pl_ckpt_header hc = *h;
    for (size_t i = 0; i < sizeof meta_names / sizeof meta_names[0]; i++)
        PL_CALL(pl_h5_attr_int(f, meta_names[i], *meta_field(&hc, (int)i), tmp));
    hsize_t d[2] = {(hsize_t)h->nint, 0};
    PL_CALL(pl_h5_write(f, "/state/ints", H5T_NATIVE_INT64, 1, d, a->ints, tmp));
    d[0] = (hsize_t)h->ndbl;
    PL_CALL(pl_h5_write(f, "/state/dbl", H5T_NATIVE_DOUBLE, 1, d, a->dbl, tmp));
    d[0] = (hsize_t)h->nhist;
    PL_CALL(pl_h5_write(f, "/history/iterations", H5T_NATIVE_INT64, 1, d, a->hist_iterations, tmp));
    d[1] = (hsize_t)h->hist_nev;
    PL_CALL(pl_h5_write(f, "/history/ritz", H5T_NATIVE_DOUBLE, 2, d, a->hist_ritz, tmp));
    PL_CALL(pl_h5_write(f, "/history/resid", H5T_NATIVE_DOUBLE, 2, d, a->hist_resid, tmp));
    if (h->has_imag) PL_CALL(pl_h5_write(f, "/history/ritz_imag", H5T_NATIVE_DOUBLE, 2, d, a->hist_ritz_imag, tmp));
    PL_CALL(pl_h5_create_2d(f, "/basis", (hsize_t)h->nvec, (hsize_t)h->rows, tmp));
    return PL_OK;
}

int pl_ckptfile_create(const char *path, const pl_ckpt_header *h, const pl_ckpt_arrays *a, hid_t *f)
{
    char tmp[1300];
    tmp_name(path, tmp, sizeof tmp);
    pl_h5_quiet();
    *f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    PL_CHECK(*f >= 0, PL_ERR_IO, "%s: cannot create the checkpoint file", tmp);
    int rc = write_all(*f, tmp, h, a);
    if (rc != PL_OK) {
        H5Fclose(*f);
        *f = -1;
        unlink(tmp);
    }
    return rc;
}

int pl_ckptfile_write_rows(hid_t f, const char *path, int64_t j, int64_t row0, int64_t n, const double *x)
{
    char tmp[1300];
    tmp_name(path, tmp, sizeof tmp);
    return pl_h5_row_write(f, "/basis", (hsize_t)j, (hsize_t)row0, (hsize_t)n, x, tmp);
}

int pl_ckptfile_commit(hid_t f, const char *path, int ok)
{
    char tmp[1300];
    tmp_name(path, tmp, sizeof tmp);
    int rc = PL_OK;
    if (f >= 0 && H5Fclose(f) < 0) rc = PL_ERROR(PL_ERR_HDF5, "%s: HDF5 failed to close the file", tmp);
    if (ok && rc == PL_OK && rename(tmp, path) != 0)
        rc = PL_ERROR(PL_ERR_IO, "%s: cannot rename the checkpoint into place", path);
    if (!ok || rc != PL_OK) unlink(tmp);
    return rc;
}

static int read_header(hid_t f, const char *p, pl_ckpt_header *h)
{
    char *fmt = NULL;
    int64_t ver = 0;
    if (pl_h5_attr_get_string(f, "format", &fmt, p) != PL_OK || strcmp(fmt, CKPT_FORMAT)) {
        free(fmt);
        pl_error_clear();
        return PL_ERROR(PL_ERR_INPUT, "%s: not a pjds-lanczos checkpoint (no format = '%s')", p, CKPT_FORMAT);
    }
    free(fmt);
    PL_CALL(pl_h5_attr_get_int(f, "format_version", &ver, p));
    PL_CHECK(ver == CKPT_VERSION, PL_ERR_INPUT, "%s: checkpoint format version %lld, this program reads %d", p,
             (long long)ver, CKPT_VERSION);
    PL_CALL(pl_h5_attr_get_string(f, "config", &h->config, p));
    PL_CALL(pl_h5_attr_get_string(f, "sweep_hash", &h->sweep_hash, p));
    for (size_t i = 0; i < sizeof meta_names / sizeof meta_names[0]; i++)
        PL_CALL(pl_h5_attr_get_int(f, meta_names[i], meta_field(h, (int)i), p));
    int rk;
    hsize_t d[2];
    PL_CALL(pl_h5_shape(f, "/state/ints", &rk, d, p));
    h->nint = (int64_t)d[0];
    PL_CALL(pl_h5_shape(f, "/state/dbl", &rk, d, p));
    h->ndbl = (int64_t)d[0];
    PL_CALL(pl_h5_shape(f, "/history/iterations", &rk, d, p));
    h->nhist = (int64_t)d[0];
    h->has_imag = pl_h5_exists(f, "/history/ritz_imag");
    PL_CHECK(h->nvec >= 1 && h->nvec <= h->ncv + 1 && h->nint <= 64 && h->hist_nev >= 0 && h->hist_nev < 100000 &&
                 h->rows >= 1,
             PL_ERR_INPUT, "%s: inconsistent sizes (nvec %lld, ncv %lld, %lld ints, N %lld)", p, (long long)h->nvec,
             (long long)h->ncv, (long long)h->nint, (long long)h->rows);
    PL_CALL(pl_h5_shape(f, "/basis", &rk, d, p));
    PL_CHECK(rk == 2 && d[0] == (hsize_t)h->nvec && d[1] == (hsize_t)h->rows, PL_ERR_INPUT,
             "%s: dataset /basis is not %lld x %lld", p, (long long)h->nvec, (long long)h->rows);
    return PL_OK;
}

int pl_ckptfile_open(const char *path, pl_ckpt_header *h, hid_t *f)
{
    memset(h, 0, sizeof *h);
    pl_h5_quiet();
    *f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    PL_CHECK(*f >= 0, PL_ERR_INPUT, "%s: cannot open the checkpoint (not an HDF5 file?)", path);
    int rc = read_header(*f, path, h);
    if (rc != PL_OK) {
        H5Fclose(*f);
        *f = -1;
        pl_ckpt_header_free(h);
    }
    return rc;
}

int pl_ckptfile_read_arrays(hid_t f, const char *p, const pl_ckpt_header *h, pl_ckpt_arrays *a)
{
    size_t nh = (size_t)h->nhist * (size_t)h->hist_nev;
    PL_CALL(pl_h5_read(f, "/state/ints", H5T_NATIVE_INT64, (size_t)h->nint, a->ints, p));
    PL_CALL(pl_h5_read(f, "/state/dbl", H5T_NATIVE_DOUBLE, (size_t)h->ndbl, a->dbl, p));
    PL_CALL(pl_h5_read(f, "/history/iterations", H5T_NATIVE_INT64, (size_t)h->nhist, a->hist_iterations, p));
    PL_CALL(pl_h5_read(f, "/history/ritz", H5T_NATIVE_DOUBLE, nh, a->hist_ritz, p));
    PL_CALL(pl_h5_read(f, "/history/resid", H5T_NATIVE_DOUBLE, nh, a->hist_resid, p));
    if (h->has_imag) PL_CALL(pl_h5_read(f, "/history/ritz_imag", H5T_NATIVE_DOUBLE, nh, a->hist_ritz_imag, p));
    return PL_OK;
}

int pl_ckptfile_read_rows(hid_t f, const char *path, int64_t j, int64_t row0, int64_t n, double *x)
{
    return pl_h5_row_read(f, "/basis", (hsize_t)j, (hsize_t)row0, (hsize_t)n, x, path);
}

void pl_ckpt_header_free(pl_ckpt_header *h)
{
    free(h->config);
    free(h->sweep_hash);
    h->config = h->sweep_hash = NULL;
}
