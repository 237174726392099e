/* pl_config_cutoff.c — the [model] keys of the phonon cut-off
 * (docs/config.md; the search and the warning: app/cutoff.c):
 * max_phonons = auto with max_phonons_start, max_phonons_limit and
 * max_phonons_tol, and cutoff_warn. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pl_config.h"
#include "pl_error.h"

#define BAD(sec, key, ...) PL_CFG_BAD(cfg, sec, key, __VA_ARGS__)

static const char *const search_keys[] = {"max_phonons_start", "max_phonons_limit", "max_phonons_tol"};
#define NSEARCH (sizeof search_keys / sizeof search_keys[0])

int pl_config_cutoff_key_used(const pl_config *cfg, const char *key)
{
    for (size_t i = 0; i < NSEARCH; i++)
        if (!strcmp(key, search_keys[i])) return cfg->model.max_phonons_auto;
    return 1;
}

/* A [sweep] of the cut-off search: refused (the search is a single solve's). */
static int check_sweep(const pl_config *cfg)
{
    const pl_sweep_cfg *sw = &cfg->sweep;
    for (int k = 0; k < sw->nkeys; k++) {
        if (!strcmp(sw->key[k], "max_phonons") && strstr(sw->values[k], "auto"))
            BAD("sweep", sw->key[k], "auto searches the cut-off in a single solve; a sweep needs numbers");
        for (size_t i = 0; i < NSEARCH; i++)
            if (!strcmp(sw->key[k], search_keys[i]))
                BAD("sweep", sw->key[k], "only [model] max_phonons = auto uses it, and a sweep cannot search the cut-off");
    }
    return PL_OK;
}

int pl_config_check_cutoff(pl_config *cfg)
{
    pl_model_cfg *m = &cfg->model;
    if (m->max_phonons == PL_MAX_PHONONS_AUTO) m->max_phonons_auto = 1;
    PL_CALL(check_sweep(cfg));
    if (!m->max_phonons_auto) {
        for (size_t i = 0; i < NSEARCH; i++)
            if (pl_config_is_set(cfg, "model", search_keys[i]))
                BAD("model", search_keys[i], "only max_phonons = auto uses it (max_phonons = %d)", m->max_phonons);
    } else {
        if (m->max_phonons_start < 0) BAD("model", "max_phonons_start", "must be >= 0 (got %d)", m->max_phonons_start);
        if (m->max_phonons_limit <= m->max_phonons_start)
            BAD("model", "max_phonons_limit", "must be > max_phonons_start = %d (got %d)", m->max_phonons_start,
                m->max_phonons_limit);
        if (!(m->max_phonons_tol > 0))
            BAD("model", "max_phonons_tol", "must be > 0 (an energy change; got %g)", m->max_phonons_tol);
        if (cfg->sweep.nkeys > 0)
            BAD("model", "max_phonons", "auto searches the cut-off in a single solve; a [sweep] needs a number");
        if (cfg->solver.which != PL_WHICH_SMALLEST)
            BAD("model", "max_phonons", "auto follows the ground-state energy: it needs [solver] which = smallest "
                "(got %s)", pl_config_enum_name("solver", "which", cfg->solver.which));
        if (cfg->solver.method == PL_METHOD_CHEBFD)
            BAD("model", "max_phonons", "auto runs a Lanczos solve per cut-off; [solver] method = chebfd needs a number");
    }
    if (!(m->cutoff_warn > 0 && m->cutoff_warn <= 1))
        BAD("model", "cutoff_warn", "must be in (0, 1], a weight (got %g)", m->cutoff_warn);
    return PL_OK;
}
