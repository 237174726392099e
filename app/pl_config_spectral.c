/* pl_config_spectral.c — the [spectral] keys (docs/config.md): which keys an
 * operator uses, and their checks in pl_config_check (the electron
 * operators' momentum, site, spin and band; docs/models.md "Single-particle
 * spectral function"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pl_config.h"
#include "pl_error.h"

static int electron(const pl_spectral_cfg *q)
{
    return q->op == PL_SPEC_ELECTRON_REMOVAL || q->op == PL_SPEC_ELECTRON_ADDITION;
}

int pl_config_spectral_key_used(const pl_config *cfg, const char *key)
{
    const int el = electron(&cfg->spectral), local = pl_config_is_set(cfg, "spectral", "site");
    if (!strcmp(key, "spin")) return el;
    if (!strcmp(key, "site")) return el && local;
    if (!strcmp(key, "momentum")) return !(el && local);
    return 1;
}

#define BAD(key, ...) PL_CFG_BAD(cfg, "spectral", key, __VA_ARGS__)

/* the electron operators on a generated model: momentum or site, the band */
static int check_electron(pl_config *cfg)
{
    pl_spectral_cfg *q = &cfg->spectral;
    const pl_model_cfg *m = &cfg->model;
    const int L = m->sites;
    const int chain = m->lattice == HH_LATTICE_CHAIN;
    const int translation = chain ? m->boundary == 0 /* periodic */ : m->lat.translation;
    const char *lname = chain ? "chain" : hh_lattice_kind_name(m->lattice);
    const char *why = m->lattice == HH_LATTICE_BONDS ? "" : " with an open boundary";
    if (q->local) {
        if (pl_config_is_set(cfg, "spectral", "momentum"))
            BAD("site", "give momentum or site, not both (site: the local spectral function)");
        if (q->site != PL_SPECTRAL_ALL && q->site >= L)
            BAD("site", "must be in 0..%d (sites - 1) or all (got %d)", L - 1, q->site);
    } else {
        if (!translation && pl_config_is_set(cfg, "spectral", "momentum"))
            BAD("momentum", "a momentum on a lattice without translation symmetry (lattice = %s%s); give site = "
                "0..%d or all instead (the local spectral function)", lname, why, L - 1);
        if (!translation)
            BAD("site", "lattice = %s%s has no translation symmetry, so no momenta: give site = 0..%d or all (the "
                "local spectral function)", lname, why, L - 1);
        if (q->momentum != PL_SPECTRAL_ALL && q->momentum >= L)
            BAD("momentum", "must be in 0..%d (sites - 1) or all (got %d)", L - 1, q->momentum);
    }
    const int n = q->spin ? m->n_down : m->n_up;
    const char *s = q->spin ? "down" : "up";
    if (q->op == PL_SPEC_ELECTRON_REMOVAL && n == 0)
        BAD("operator", "electron_removal of %s electron from an empty band ([model] n_%s = 0)", q->spin ? "a down" : "an up", s);
    if (q->op == PL_SPEC_ELECTRON_ADDITION && n >= L)
        BAD("operator", "electron_addition of %s electron into a full band ([model] n_%s = %d = sites)",
            q->spin ? "a down" : "an up", s, n);
    return PL_OK;
}

int pl_config_check_spectral(pl_config *cfg)
{
    pl_spectral_cfg *q = &cfg->spectral;
    const int hh = cfg->model.type == PL_MODEL_HOLSTEIN_HUBBARD;
    if (q->steps < 1 || q->steps > 100000) BAD("steps", "must be in 1..100000 (got %d)", q->steps);
    if (!(q->broadening > 0) || !isfinite(q->broadening)) BAD("broadening", "must be > 0 (got %g)", q->broadening);
    if (q->points < 1 || q->points > 10000000) BAD("points", "must be in 1..10000000 (got %d)", q->points);
    if (!(q->omega_max > q->omega_min) || !isfinite(q->omega_min) || !isfinite(q->omega_max))
        BAD("omega_max", "must be > omega_min (got %g <= %g)", q->omega_max, q->omega_min);
    q->local = electron(q) && pl_config_is_set(cfg, "spectral", "site");
    if (electron(q)) return hh ? check_electron(cfg) : PL_OK;
    if (q->momentum == PL_SPECTRAL_ALL)
        BAD("momentum", "all needs operator = electron_removal or electron_addition (the others take one momentum)");
    if (pl_config_is_set(cfg, "spectral", "spin")) BAD("spin", "is used by electron_removal and electron_addition only");
    if (pl_config_is_set(cfg, "spectral", "site")) BAD("site", "is used by electron_removal and electron_addition only");
    if (hh && (q->momentum < 0 || q->momentum >= cfg->model.sites))
        BAD("momentum", "must be in 0..%d (sites - 1; q = 2 pi momentum / sites) (got %d)", cfg->model.sites - 1,
            q->momentum);
    if (hh && cfg->model.lattice != HH_LATTICE_CHAIN && !cfg->model.lat.translation && q->momentum != 0)
        BAD("momentum", "%d: a momentum on a lattice without translation symmetry (lattice = %s%s; only momentum = 0, "
            "the uniform sum, is defined)", q->momentum, hh_lattice_kind_name(cfg->model.lattice),
            cfg->model.lattice == HH_LATTICE_BONDS ? "" : " with an open boundary");
    return PL_OK;
}
