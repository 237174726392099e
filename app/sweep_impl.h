/* sweep_impl.h — the points of a [sweep] (sweep_points.c) and the sweep
 * result file (io/pl_sweepfile.h), shared by cmd_sweep.c and cmd_merge.c.
 * Private to app/. */
#ifndef PL_SWEEP_IMPL_H
#define PL_SWEEP_IMPL_H

#include "app.h"

typedef struct sweep_def {
    int nkeys;
    char key[PL_SWEEP_MAX_KEYS][32];
    const char *words[PL_SWEEP_MAX_KEYS]; /* enum keys: "site|normal"; NULL: numeric */
    int structural[PL_SWEEP_MAX_KEYS];    /* changing it rebuilds the operator        */
    int npoints;
    char (*text)[64];   /* npoints x nkeys value texts, as set into [model]  */
    double *num;        /* npoints x nkeys values (enum: the word's index)    */
    int combine;        /* PL_COMBINE_GRID or PL_COMBINE_ZIP                  */
    char *definition;   /* the resolved sweep definition (hashed, compared)   */
    char hash[17];      /* pl_hash_text(definition)                           */
} sweep_def;

/* Expand ctx->cfg's [sweep] into points and check every point's
 * configuration (pl_config_check).  PL_ERR_INPUT with one line naming the
 * [sweep] key: an empty list, a zero step, an empty range, unequal zip
 * lengths, a value the key's own check refuses.  Not collective (every rank
 * computes the same). */
int sweep_def_build(const pl_config *cfg, sweep_def *d);
void sweep_def_free(sweep_def *d);
/* The configuration of point p: a deep copy of base with the point's values
 * set and no [sweep] (free with pl_config_destroy). */
int sweep_point_config(const pl_config *base, const sweep_def *d, int p, pl_config *out);
/* --points: NULL = all; "A-B" (0-based, inclusive); "auto": this Slurm
 * array task's contiguous share (SLURM_ARRAY_TASK_ID with
 * SLURM_ARRAY_TASK_COUNT, or _MIN and _MAX).  *lo > *hi: an empty share.
 * PL_ERR_INPUT for a bad specification. */
int sweep_select(const char *spec, int npoints, int *lo, int *hi);
/* "coupling=0.5, hubbard_u=2" of point p into buf. */
const char *sweep_point_label(const sweep_def *d, int p, char *buf, size_t len);

#endif
