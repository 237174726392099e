/* pl_ckptfile.h — the HDF5 checkpoint file of one solve (docs/formats.md,
 * "Checkpoint file"): the header attributes, the solver state
 * (/state/ints, /state/dbl), the convergence history (/history/...) and the
 * basis /basis (nvec x N float64, original row order, written and read one
 * row range of one vector at a time).  The file is written under a
 * temporary name and renamed into place by pl_ckptfile_commit, so a kill
 * while writing keeps the previous checkpoint.  What the state arrays mean
 * is the solver's (lanczos/); this module only stores them.  Reading a
 * file that is not a checkpoint of this format, or whose sizes do not fit
 * together, is PL_ERR_INPUT naming the file and what is wrong.  Rank 0
 * only; not collective. */
#ifndef PL_CKPTFILE_H
#define PL_CKPTFILE_H

#include <stdint.h>

#include "pl_h5util.h"

typedef struct pl_ckpt_header {
    char *config;            /* the configuration that decides the result (INI text) */
    char *sweep_hash;        /* "" for a single solve                                */
    int64_t point;           /* sweep point, -1 for a single solve                   */
    int64_t ranks, rows;     /* ranks that wrote it; N                               */
    int64_t method, nev, ncv, which, nvec, hist_nev; /* the solver's (lz_state)      */
    int64_t nint, ndbl, nhist, has_imag;             /* sizes of the stored arrays   */
} pl_ckpt_header;

/* The state and history arrays of a checkpoint (sizes in the header). */
typedef struct pl_ckpt_arrays {
    int64_t *ints;
    double *dbl;
    int64_t *hist_iterations;
    double *hist_ritz, *hist_resid, *hist_ritz_imag; /* hist_ritz_imag only with has_imag */
} pl_ckpt_arrays;

/* Create "<path>.tmp.<pid>" with the header, the arrays and an empty
 * /basis; *f is the open file.  PL_ERR_IO or PL_ERR_HDF5. */
int pl_ckptfile_create(const char *path, const pl_ckpt_header *h, const pl_ckpt_arrays *a, hid_t *f);
/* Write rows [row0, row0 + n) of basis vector j. */
int pl_ckptfile_write_rows(hid_t f, const char *path, int64_t j, int64_t row0, int64_t n, const double *x);
/* Close and rename into place (ok = 1), or close and remove the temporary
 * file (ok = 0: after a failure).  Returns the error of closing or renaming. */
int pl_ckptfile_commit(hid_t f, const char *path, int ok);

/* Open a checkpoint and read and check its header (*h: free with
 * pl_ckpt_header_free).  PL_ERR_INPUT when it is not a readable checkpoint
 * of this format or its sizes do not fit together. */
int pl_ckptfile_open(const char *path, pl_ckpt_header *h, hid_t *f);
/* Read the arrays (allocated by the caller from the header's sizes). */
int pl_ckptfile_read_arrays(hid_t f, const char *path, const pl_ckpt_header *h, pl_ckpt_arrays *a);
/* Read rows [row0, row0 + n) of basis vector j. */
int pl_ckptfile_read_rows(hid_t f, const char *path, int64_t j, int64_t row0, int64_t n, double *x);
void pl_ckpt_header_free(pl_ckpt_header *h);

#endif
