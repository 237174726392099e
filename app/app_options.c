/* app_options.c — the config file translated into the option structs of the
 * layers below (hh_params, bs_params, pl_op_options), and their input errors
 * given the place in the config file that set the parameter. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "pl_error.h"

void app_hh_params(const pl_model_cfg *m, hh_params *p)
{
    *p = (hh_params){.sites = m->sites,
                     .n_up = m->n_up,
                     .n_down = m->n_down,
                     .hopping = m->hopping,
                     .hubbard_u = m->hubbard_u,
                     .phonon_frequency = m->phonon_frequency,
                     .coupling = m->coupling,
                     .max_phonons = m->max_phonons,
                     .phonon_basis = m->phonon_basis,
                     .boundary = m->boundary,
                     .lattice = m->lattice == HH_LATTICE_CHAIN ? NULL : &m->lat};
}

void app_bs_params(const pl_model_cfg *m, bs_params *p)
{
    *p = (bs_params){.nx = m->nx,
                     .ny = m->ny,
                     .nz = m->nz,
                     .block_size = m->block_size,
                     .stencil = m->stencil,
                     .convection = m->convection,
                     .shift = m->shift,
                     .corner = m->corner,
                     .rotation = m->rotation,
                     .seed = m->seed};
}

void app_op_options(const pl_spmv_cfg *s, pl_op_options *o)
{
    pl_op_options_defaults(o);
    o->chunk_height = s->chunk_height;
    o->sort_window = s->sort_window;
    o->exchange = s->exchange;
    o->transport = s->transport;
    o->precision = s->precision;
    o->format = s->format;
    o->blocks = s->blocks;
}

/* The layers below name the parameter at the start of an input error
 * ("sites: 1: need 2 .. 64"); the message then gets the file, line and
 * section of that key ("x.ini:3: [model] sites: 1: need 2 .. 64").  A
 * message that starts with no key of the section is given fallback_key's
 * place (NULL: the config file's path).  Other codes pass unchanged. */
int app_param_error(const pl_config *cfg, const char *section, const char *fallback_key, int rc)
{
    if (rc != PL_ERR_INPUT) return rc;
    char msg[1024], key[64], where[1200];
    snprintf(msg, sizeof msg, "%s", pl_error_message());
    size_t n = strspn(msg, "abcdefghijklmnopqrstuvwxyz_");
    if (n > 0 && n < sizeof key) {
        memcpy(key, msg, n);
        key[n] = '\0';
    }
    const int leading = n > 0 && n < sizeof key && pl_config_key_exists(section, key);
    pl_error_clear();
    if (!leading && !fallback_key) return PL_ERROR(rc, "%s: %s", cfg->path, msg);
    if (leading) return PL_ERROR(rc, "%s%s", pl_config_where(cfg, section, key, where, sizeof where), msg + n);
    return PL_ERROR(rc, "%s: %s", pl_config_where(cfg, section, fallback_key, where, sizeof where), msg);
}
