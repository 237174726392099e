/* pl_h5util.h — small checked HDF5 helpers for the checkpoint and sweep
 * files (app/checkpoint.c, io/pl_sweepfile.c): whole datasets, hyperslab
 * rows, scalar attributes.  Every HDF5 return code is checked.  Writing
 * fails with PL_ERR_HDF5 naming the file and the object; reading a dataset
 * or attribute that is missing or of the wrong shape or type is
 * PL_ERR_INPUT with one line "FILE: dataset NAME: what is wrong" (these
 * files come from users' runs).  HDF5's own error printing is switched off
 * by pl_h5_quiet().  Not collective: one process does the I/O. */
#ifndef PL_H5UTIL_H
#define PL_H5UTIL_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

void pl_h5_quiet(void);
/* A file that HDF5 could not close (its last writes failed: disk full, a
 * file size limit) stays open inside the library, whose exit handler then
 * crashes closing it again.  Writers mark that here; main() leaves through
 * _exit() after MPI_Finalize when it is set.  Can't fail. */
void pl_h5_mark_unclean(void);
int pl_h5_unclean(void);
/* Create and write a whole 1-D or 2-D dataset (dims[rank]); zero-size allowed. */
int pl_h5_write(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data,
                const char *file);
/* Create an empty 2-D float64 dataset rows x cols (filled later by rows). */
int pl_h5_create_2d(hid_t loc, const char *name, hsize_t rows, hsize_t cols, const char *file);
/* Write/read row r, columns [c0, c0 + n) of a 2-D float64 dataset. */
int pl_h5_row_write(hid_t loc, const char *name, hsize_t r, hsize_t c0, hsize_t n, const double *data,
                    const char *file);
int pl_h5_row_read(hid_t loc, const char *name, hsize_t r, hsize_t c0, hsize_t n, double *data, const char *file);
/* The shape of a dataset: rank (1 or 2) and dims; PL_ERR_INPUT when missing. */
int pl_h5_shape(hid_t loc, const char *name, int *rank, hsize_t dims[2], const char *file);
/* Read a whole dataset of `count` elements (its size must be count). */
int pl_h5_read(hid_t loc, const char *name, hid_t memtype, size_t count, void *data, const char *file);
/* Scalar attributes of an object (a group or the file's root). */
int pl_h5_attr_int(hid_t obj, const char *name, int64_t v, const char *file);
int pl_h5_attr_double(hid_t obj, const char *name, double v, const char *file);
int pl_h5_attr_string(hid_t obj, const char *name, const char *v, const char *file);
int pl_h5_attr_get_int(hid_t obj, const char *name, int64_t *v, const char *file);
int pl_h5_attr_get_double(hid_t obj, const char *name, double *v, const char *file);
/* *v malloc'ed (free it). */
int pl_h5_attr_get_string(hid_t obj, const char *name, char **v, const char *file);
/* The compound {float64 r, i} that h5py reads as complex128; close it with H5Tclose.  < 0 on failure. */
hid_t pl_h5_complex_type(void);
/* Whether a link exists (missing intermediate groups: no).  Can't fail. */
int pl_h5_exists(hid_t loc, const char *name);

#endif
