/* pl_config_lattice.c — the [model] lattice keys (docs/config.md; the
 * lattice itself: hamiltonian/lattice.c): which keys a lattice uses, and the
 * lattice resolved from them by pl_config_check. */
#include <stdio.h>
#include <string.h>

#include "pl_config.h"
#include "pl_error.h"

int pl_config_lattice_key_used(const pl_config *cfg, const char *key)
{
    const int kind = cfg->model.lattice;
    const int grid = kind == HH_LATTICE_LADDER || kind == HH_LATTICE_SQUARE || kind == HH_LATTICE_TRIANGULAR;
    if (!strcmp(key, "lattice")) return kind != HH_LATTICE_CHAIN;
    if (!strcmp(key, "boundary")) return kind != HH_LATTICE_BONDS; /* the default of boundary_x, boundary_y */
    if (!strcmp(key, "lx") || !strcmp(key, "boundary_x")) return grid;
    if (!strcmp(key, "ly") || !strcmp(key, "boundary_y")) return grid && kind != HH_LATTICE_LADDER;
    if (!strcmp(key, "bonds")) return kind == HH_LATTICE_BONDS;
    return 1;
}

#define BAD(key, ...) PL_CFG_BAD(cfg, "model", key, __VA_ARGS__)

int pl_config_resolve_lattice(pl_config *cfg)
{
    pl_model_cfg *m = &cfg->model;
    static const char *const lkeys[] = {"lx", "ly", "boundary_x", "boundary_y", "bonds", "boundary"};
    for (size_t i = 0; i < sizeof lkeys / sizeof lkeys[0]; i++)
        if (pl_config_is_set(cfg, "model", lkeys[i]) && !pl_config_lattice_key_used(cfg, lkeys[i]))
            BAD(lkeys[i], "not used by lattice = %s", hh_lattice_kind_name(m->lattice));
    if (m->lattice == HH_LATTICE_CHAIN) return PL_OK; /* the chain of sites and boundary (hh.c) */
    if (!pl_config_is_set(cfg, "model", "boundary_x")) m->boundary_x = m->boundary;
    if (!pl_config_is_set(cfg, "model", "boundary_y")) m->boundary_y = m->boundary;
    const int given = pl_config_is_set(cfg, "model", "sites");
    hh_lattice_opts o = {.kind = m->lattice, .sites = given && m->lattice == HH_LATTICE_BONDS ? m->sites : 0,
                         .lx = m->lx, .ly = m->ly, .boundary_x = m->boundary_x, .boundary_y = m->boundary_y,
                         .bonds = m->bonds};
    int rc = hh_lattice_build(&o, &m->lat);
    if (rc == PL_ERR_INPUT) { /* "lx: ..." from lattice.c: the message gets the place of its key */
        char msg[360], key[32] = "lattice";
        snprintf(msg, sizeof msg, "%s", pl_error_message());
        size_t n = strspn(msg, "abcdefghijklmnopqrstuvwxyz_");
        const char *rest = msg;
        if (n > 0 && n < sizeof key && msg[n] == ':') {
            snprintf(key, sizeof key, "%.*s", (int)n, msg);
            if (pl_config_key_exists("model", key)) rest = msg + n + (msg[n + 1] == ' ' ? 2 : 1);
            else snprintf(key, sizeof key, "lattice");
        }
        pl_error_clear();
        BAD(key, "%s", rest);
    }
    PL_CALL(rc);
    if (given && m->sites != m->lat.sites)
        BAD("sites", "%d, but lattice = %s has %d sites", m->sites, hh_lattice_kind_name(m->lattice), m->lat.sites);
    m->sites = m->lat.sites;
    return PL_OK;
}
