/* pl_describe.h — result files that describe themselves (docs/formats.md,
 * "Self-description"): HDF5 dimension scales for every dataset axis, so
 * that netCDF readers (xarray with h5netcdf or netCDF4) name the dimensions;
 * `units` and `description` attributes on the datasets the project writes;
 * provenance attributes of the root group (time, program commit, host,
 * absolute input paths, a checksum of an input matrix file).
 *
 * Not collective: the one process that writes the file calls these. */
#ifndef PL_DESCRIBE_H
#define PL_DESCRIBE_H

#include <hdf5.h>

/* Every dataset of the open file `file` (name `fname` for messages) that
 * is not itself a dimension scale gets a dimension scale on each axis
 * (the root-level datasets named in pl_describe.c's table: eigenpair, row,
 * cycle, ...; an axis the table does not name gets "<path>_<axis>"),
 * created in the root group when missing: with the index values 0..n-1
 * (a coordinate) up to PL_DESCRIBE_COORD_MAX elements, above that a
 * dimension without values (netCDF's convention; no storage is
 * allocated).  A scale name already taken with another length gets the
 * suffix _<n>.  Datasets in the table also get `units` (energies in
 * `energy_units`) and `description` unless they have them; scales = 0:
 * only these attributes (a file that other files link to: netCDF readers
 * resolve a scale's reference in the file they opened).  Idempotent.
 * PL_ERR_HDF5 naming the file and the object on failure. */
#define PL_DESCRIBE_COORD_MAX 1048576
int pl_h5_describe(hid_t file, const char *energy_units, int scales, const char *fname);

/* Root attributes: created_utc (ISO 8601), program_commit (the build's git
 * commit, "unknown" outside a checkout), host, config_file_absolute (the
 * absolute path of config_path, "" when NULL), and where matrix_path is
 * not NULL: matrix_file_absolute, matrix_file_bytes and matrix_file_crc32
 * (zlib's CRC-32 of the whole file, 8 hex digits; read once, linear in the
 * file size).  PL_ERR_HDF5 / PL_ERR_IO naming the file on failure. */
int pl_h5_provenance(hid_t file, const char *config_path, const char *matrix_path, const char *fname);

#endif
