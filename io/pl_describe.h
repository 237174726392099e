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

/* The checksum of an input file, computed in a thread of its own while the
 * run goes on (an imported matrix of gigabytes takes seconds to read
 * again; the write must not wait for it): pl_file_sum_start opens nothing
 * yet and starts the thread (zlib's CRC-32 of the whole file, in 4 MiB
 * pieces); pl_file_sum_finish joins it and returns its status (PL_ERR_IO
 * naming the file).  Finish once per start; a sum never started finishes
 * with PL_OK and path "". */
#include <pthread.h>
typedef struct pl_file_sum {
    char path[4096]; /* absolute path ("" when none) */
    unsigned long crc;
    long long bytes;
    int rc, started;
    pthread_t th;
} pl_file_sum;
int pl_file_sum_start(pl_file_sum *s, const char *path);
int pl_file_sum_finish(pl_file_sum *s);

/* Root attributes: created_utc (ISO 8601), program_commit (the build's git
 * commit, "unknown" outside a checkout), host, config_file_absolute (the
 * absolute path of config_path, "" when NULL), and where sum is not NULL
 * and names a file (finished: pl_file_sum_finish): matrix_file_absolute,
 * matrix_file_bytes and matrix_file_crc32 (8 hex digits).  PL_ERR_HDF5
 * naming the file on failure. */
int pl_h5_provenance(hid_t file, const char *config_path, const pl_file_sum *sum, const char *fname);

#endif
