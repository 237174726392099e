/* cutoff.h — the phonon cut-off of `solve` (cutoff.c; docs/models.md
 * "Phonon cut-off"): the search of [model] max_phonons = auto and the check
 * of the eigenvectors' weight at n = M.  Private to app/. */
#ifndef PL_APP_CUTOFF_H
#define PL_APP_CUTOFF_H

#include "app.h"
#include "hh.h"

struct pl_spectrum;
struct pl_backend;

typedef struct app_cutoff {
    /* the search (max_phonons = auto): one entry per cut-off solved */
    int searched;        /* 1: max_phonons was auto                         */
    int n, cap;
    int *M;              /* the cut-offs, start, start + 1, ...             */
    double *E0;          /* the lowest eigenvalue at each                   */
    double *rows;        /* N at each                                       */
    int converged;       /* the last step changed E0 by < max_phonons_tol   */
    int start, limit;    /* [model] max_phonons_start, max_phonons_limit    */
    double tol;          /* [model] max_phonons_tol                         */
    char stopped[600];   /* why it stopped: "tolerance", "limit", or what   */
                         /* did not fit (the memory plan's line)            */
    /* the check of the returned eigenvectors */
    int checked;         /* observables were computed                       */
    int max_phonons;     /* M                                               */
    double weight;       /* the ground state's P(n = M)                     */
    int vector;          /* the ground state's eigenpair (0)                */
    double threshold;    /* [model] cutoff_warn                             */
    int exceeded;        /* weight > threshold (and M > 0): warned          */
} app_cutoff;

/* Refuse max_phonons = auto in a command other than `solve` (one line,
 * PL_ERR_INPUT).  Can't fail otherwise. */
int app_cutoff_command(const app_ctx *ctx, const char *cmd);
/* [model] max_phonons = auto: solve the lowest eigenvalue at M = start,
 * start + 1, ... until it changes by less than max_phonons_tol, M reaches
 * max_phonons_limit or the memory plan refuses the next M; then set
 * ctx->cfg.model.max_phonons to the last M solved.  *be: the backend (made
 * here when NULL; kept for the final solve).  Nothing when max_phonons is
 * a number.  Collective. */
int app_cutoff_search(app_ctx *ctx, struct pl_backend **be, app_cutoff *c);
/* The weight at n = M of the ground state's phonon distribution (the
 * first eigenvector of which = smallest; no check for another which)
 * against [model] cutoff_warn: one warning line on stderr (rank 0) when it
 * exceeds it and M > 0.  Can't fail. */
void app_cutoff_check(const app_ctx *ctx, const hh_obs *obs, app_cutoff *c);
/* Rank 0: the attributes cutoff_* and the group /max_phonons_search. */
int app_cutoff_write(const app_cutoff *c, struct pl_spectrum *sp);
void app_cutoff_free(app_cutoff *c);

#endif
