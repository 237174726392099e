/* pl_sweepfile.h — the HDF5 file of a sweep (docs/formats.md, "Sweep result
 * file"): the summary /sweep/... and one group /points/NNNN per finished
 * point holding everything a single solve writes.
 *
 * Durability (docs/formats.md, "Nothing lost"): the file is only ever replaced by
 * rename(2) of a complete temporary file.  While a sweep runs, each finished
 * point is its own result file "<file>.points/NNNN.h5" (written atomically)
 * and /points/NNNN in the sweep file is an HDF5 external link to it (h5py
 * follows it; the path is relative to the sweep file's directory); after
 * every point the (small) sweep file is rewritten.  At the end of a run the
 * file is rewritten once more with the point groups copied in
 * ("finalised": self-contained) and the per-point files are removed.  A
 * kill at any moment leaves a readable file with every point finished
 * before it.  Rank 0 only; not collective. */
#ifndef PL_SWEEPFILE_H
#define PL_SWEEPFILE_H

#include <stdint.h>

enum pl_point_status { PL_POINT_NOT_RUN = 0, PL_POINT_CONVERGED = 1, PL_POINT_NOT_CONVERGED = 2, PL_POINT_FAILED = 3 };

typedef struct pl_sweep_summary {
    int npoints, nkeys;
    int ncols;             /* eigenvalue columns: nev, or nev + 1 for a nonsymmetric problem  */
    int cplx;              /* eigenvalues complex                                             */
    char (*keys)[32];      /* nkeys swept [model] keys                                        */
    char **words;          /* nkeys: enum words "site|normal" or NULL                          */
    double *values;        /* npoints x nkeys                                                  */
    double *eig_re, *eig_im; /* npoints x ncols (NaN: none); eig_im only when cplx             */
    double *resid;         /* npoints x ncols                                                  */
    int8_t *status;        /* npoints: enum pl_point_status                                    */
    int8_t *rebuilt;       /* npoints: 1 operator rebuilt, 0 values refilled, -1 not run       */
    int64_t *spmvs;        /* npoints: SpMVs of the point's solve (0: not run)                 */
    double *seconds;       /* npoints: solve seconds                                           */
    char *hash;            /* sweep_hash                                                       */
    char *definition;      /* sweep_definition (the text hashed)                               */
    char *config;          /* the whole resolved configuration of the run                      */
    char *config_path;     /* the configuration file as given (written as its absolute path), or NULL */
} pl_sweep_summary;

/* Allocate the arrays for npoints x nkeys and ncols (NaN / 0 / -1 filled). */
int pl_sweep_summary_alloc(pl_sweep_summary *s, int npoints, int nkeys, int ncols, int cplx);
void pl_sweep_summary_free(pl_sweep_summary *s);
/* Widen to ncols columns and complex (NaN padded); no-op when not wider. */
int pl_sweep_summary_widen(pl_sweep_summary *s, int ncols, int cplx);

/* Where point p's group comes from when the file is written: nothing, an
 * external link to the result file `file` (relative to the sweep file's
 * directory), or a copy of object `obj` of file `file`. */
typedef struct pl_point_src {
    int kind;              /* 0 none, 1 link, 2 copy */
    char file[1200];
    char obj[64];
} pl_point_src;

/* Write the sweep file `path` atomically (temporary name, then
 * pl_place_file).  finalised: root attribute finalised = 1 (every group a
 * copy).  replace = 0: an existing `path` (one that appeared since the
 * caller's check) is not replaced: PL_ERR_INPUT, and the complete file is
 * kept under the temporary name named in the message; replace = 1
 * (--overwrite, a resumed file, or this run's own earlier version):
 * rename(2). */
int pl_sweepfile_write(const char *path, const pl_sweep_summary *s, const pl_point_src *src, int finalised,
                       int replace);
/* Read the summary of a sweep file.  PL_ERR_INPUT "FILE: ..." when it is not
 * a readable sweep file.  *finalised from its attribute. */
int pl_sweepfile_read(const char *path, pl_sweep_summary *s, int *finalised);
/* Whether point p's group in the sweep file `path` can be opened (a copy,
 * or a link whose file exists).  Can't fail. */
int pl_sweepfile_has_point(const char *path, int p);
/* "NNNN" for point p (4 digits, more when p >= 10000). */
const char *pl_point_name(int p, char buf[16]);

#endif
