/* hh_args.h — Holstein-Hubbard model parameters in the tests and tools:
 * hh_args_model (a model from its numbers), hh_args_describe (one line
 * naming it) and hh_args_parse (the arguments of the measurement tools
 * hh_mf_timing and tests/gpu/kron_timing).  Tests and tools only: no range
 * checks. */
#ifndef HH_ARGS_H
#define HH_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"

static inline hh_params hh_args_model(int L, int nu, int nd, double t, double U, double w0, double g, int M,
                                      int basis, int bc)
{
    hh_params p = {.sites = L, .n_up = nu, .n_down = nd, .hopping = t, .hubbard_u = U, .phonon_frequency = w0,
                   .coupling = g, .max_phonons = M, .phonon_basis = basis, .boundary = bc};
    return p;
}

/* One line naming the model (a static buffer: the caller copies or prints
 * it before the next call). */
static inline const char *hh_args_describe(const hh_params *p)
{
    static char s[200];
    snprintf(s, sizeof s, "L=%d up=%d dn=%d t=%g U=%g w0=%g g=%g M=%d %s %s", p->sites, p->n_up, p->n_down,
             p->hopping, p->hubbard_u, p->phonon_frequency, p->coupling, p->max_phonons,
             p->phonon_basis == PL_PHONON_SITE ? "site" : "normal",
             p->boundary == PL_BOUNDARY_OPEN ? "open" : "periodic");
    return s;
}

/* L n_up n_down t U w0 g M site|normal periodic|open into *p (argc == 1:
 * *p unchanged, the tool's default model).  Returns 0, or 1 for a wrong
 * argument count. */
static inline int hh_args_parse(int argc, char **argv, hh_params *p)
{
    if (argc == 1) return 0;
    if (argc != 11) return 1;
    p->sites = atoi(argv[1]);
    p->n_up = atoi(argv[2]);
    p->n_down = atoi(argv[3]);
    p->hopping = atof(argv[4]);
    p->hubbard_u = atof(argv[5]);
    p->phonon_frequency = atof(argv[6]);
    p->coupling = atof(argv[7]);
    p->max_phonons = atoi(argv[8]);
    p->phonon_basis = strcmp(argv[9], "site") ? PL_PHONON_NORMAL : PL_PHONON_SITE;
    p->boundary = strcmp(argv[10], "open") ? PL_BOUNDARY_PERIODIC : PL_BOUNDARY_OPEN;
    return 0;
}

#endif
