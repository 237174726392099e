/* pl_spectrum.h — the HDF5 result file of a solve (schema in
 * docs/formats.md, "HDF5 result schema").
 *
 * The file is written by one process (rank 0) to a temporary name in the
 * same directory, "<path>.tmp.<pid>", and moved to <path> by
 * pl_spectrum_commit only when complete, so a killed or failed run never
 * leaves a half-written <path>.  Any failure removes the temporary file
 * (pl_spectrum_abort), except a refused placement (pl_spectrum_commit).  Nothing here is collective: the caller gathers the
 * eigenvector pieces of other ranks and passes them to
 * pl_spectrum_vectors_write one contiguous row range at a time.
 *
 * Every HDF5 return code is checked; a failure is PL_ERR_HDF5 (PL_ERR_IO for
 * the rename, PL_ERR_INPUT for a file that appeared meanwhile) with a
 * message naming the file and the object. */
#ifndef PL_SPECTRUM_H
#define PL_SPECTRUM_H

#include <stdint.h>

typedef struct pl_spectrum pl_spectrum; /* opaque writer */

/* Create the temporary file for `path`; an existing temporary of the same
 * name is truncated.  Whether `path` may be replaced is the caller's check
 * (app_check_output_path).  Fails with PL_ERR_HDF5 or PL_ERR_IO. */
int pl_spectrum_create(const char *path, pl_spectrum **sp);

/* /eigenvalues and /residual_norms, nev float64 each. */
int pl_spectrum_write_results(pl_spectrum *sp, int nev, const double *eigenvalues, const double *residual_norms);

/* Nonsymmetric problems: /eigenvalues complex (HDF5 compound of float64
 * fields "r" and "i", read by h5py as complex128) from re[], im[];
 * /residual_norms float64. */
int pl_spectrum_write_results_complex(pl_spectrum *sp, int nev, const double *re, const double *im,
                                      const double *residual_norms);
/* As pl_spectrum_write_history with complex /convergence/ritz_values
 * (ritz_imag NULL: float64, the same as pl_spectrum_write_history). */
int pl_spectrum_write_history_complex(pl_spectrum *sp, int nrows, int nev, const int64_t *iterations, const double *ritz,
                                      const double *ritz_imag, const double *resid);

/* /convergence/iterations (int64, nrows), /convergence/ritz_values and
 * /convergence/residual_estimates (float64, nrows x nev, row-major): one row
 * per Lanczos cycle. */
int pl_spectrum_write_history(pl_spectrum *sp, int nrows, int nev, const int64_t *iterations, const double *ritz,
                              const double *resid);

/* Attributes of the root group (scalar int64, float64, or a variable-length
 * UTF-8 string). */
int pl_spectrum_attr_int(pl_spectrum *sp, const char *name, int64_t value);
int pl_spectrum_attr_double(pl_spectrum *sp, const char *name, double value);
int pl_spectrum_attr_string(pl_spectrum *sp, const char *name, const char *value);

/* Create /eigenvectors, float64 nev x N (row i = eigenvector i in the
 * original basis), then write rows [row0, row0 + count) of eigenvector i.
 * The writer refuses vectors in a permuted basis: the caller passes
 * original_basis = 1 to confirm it un-permuted them (PL_ERR_ARG otherwise). */
int pl_spectrum_vectors_create(pl_spectrum *sp, int nev, int64_t N);
/* is_complex = 1: /eigenvectors of the complex compound type, written by
 * pl_spectrum_vectors_write_complex from interleaved (re, im) pairs. */
int pl_spectrum_vectors_create2(pl_spectrum *sp, int nev, int64_t N, int is_complex);
int pl_spectrum_vectors_write_complex(pl_spectrum *sp, int i, int64_t row0, int64_t count, const double *xri,
                                      int original_basis);
int pl_spectrum_vectors_write(pl_spectrum *sp, int i, int64_t row0, int64_t count, const double *x, int original_basis);

/* /group/name, float64 of rank 1..3 with dims (row-major data); the group
 * (one level, e.g. "observables") is created when missing. */
int pl_spectrum_write_array(pl_spectrum *sp, const char *group, const char *name, int rank, const int64_t *dims,
                            const double *data);
/* Attributes of an existing group /group (float64 or string). */
int pl_spectrum_group_attr_double(pl_spectrum *sp, const char *group, const char *name, double value);
int pl_spectrum_group_attr_string(pl_spectrum *sp, const char *group, const char *name, const char *value);

/* Self-description (pl_describe.h): the unit of the energies ("t" for a
 * Holstein-Hubbard model; default "matrix units") that pl_spectrum_commit
 * writes as the `units` of the energy datasets when it attaches the
 * dimension scales (scales = 1, the default) and descriptions to every
 * dataset. */
void pl_spectrum_set_units(pl_spectrum *sp, const char *energy_units, int scales);
/* Provenance attributes of the root group (pl_h5_provenance): time, commit,
 * host, absolute config path; matrix_sum (an input matrix file's finished
 * checksum, or NULL): its absolute path, size and CRC-32. */
struct pl_file_sum;
int pl_spectrum_provenance(pl_spectrum *sp, const char *config_path, const struct pl_file_sum *matrix_sum);

/* Close the file and move it to its final path (pl_place_file): replace =
 * 1 (--overwrite) renames over an existing file; replace = 0 never replaces
 * one that appeared since the caller's check, and then fails with
 * PL_ERR_INPUT, one line naming the path and the temporary name, under
 * which the complete result is kept.  On any other failure the temporary
 * file is removed.  Frees the writer and sets *sp = NULL in all cases. */
int pl_spectrum_commit(pl_spectrum **sp, int replace);
/* Close and remove the temporary file; accepts NULL.  Can't fail. */
void pl_spectrum_abort(pl_spectrum **sp);
/* The temporary file name (for messages and tests). */
const char *pl_spectrum_tmp_path(const pl_spectrum *sp);

#endif
