/* hh_args.h — the model arguments of the measurement tools hh_mf_timing and
 * tests/gpu/kron_timing: L n_up n_down t U w0 g M site|normal periodic|open
 * into *p (argc == 1: *p unchanged, the tool's default model).  Returns 0,
 * or 1 for a wrong argument count.  Tools only: no range checks. */
#ifndef HH_ARGS_H
#define HH_ARGS_H

#include <stdlib.h>
#include <string.h>

#include "hh.h"

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
