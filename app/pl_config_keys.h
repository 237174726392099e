/* pl_config_keys.h — the key table of the configuration file, shared by the
 * files of pl_config (parsing and checks in pl_config.c, the dump in
 * pl_config_dump.c).  Internal to app/. */
#ifndef PL_CONFIG_KEYS_H
#define PL_CONFIG_KEYS_H

#include <stddef.h>

#include "pl_config.h"

/* KT_I64_AUTO: a non-negative integer or the word auto, stored as
 * PL_SORT_WINDOW_AUTO (-1; the only key of the kind is [spmv] sort_window);
 * KT_INT_AUTO: the same in an int, auto stored as PL_MAX_RESTARTS_AUTO (-1;
 * [solver] max_restarts) */
/* KT_DBL_OPT: a finite double, NaN (the default) = not set, left out of the
 * dump; KT_RANGE: two finite doubles "a, b" in a double[2], NaN = not set */
/* KT_CPLX_OPT: "a", "a+bi", "a-bi" or "bi" (j for i too) into a double[2]
 * (real, imaginary: two adjacent doubles), NaN = not set
 * KT_INT_ALL: a non-negative integer or the word all, stored as PL_SPECTRAL_ALL (-1; [spectral] momentum, site) */
enum kt { KT_INT, KT_I64, KT_U64, KT_DBL, KT_BOOL, KT_ENUM, KT_STR, KT_I64_AUTO, KT_INT_AUTO, KT_DBL_OPT, KT_RANGE,
          KT_CPLX_OPT, KT_INT_ALL };

typedef struct key_desc {
    const char *section, *key;
    enum kt type;
    size_t offset, size; /* size for strings */
    const char *words;   /* enum: "a|b|c", value = index */
    int required_hh;     /* required when [model] type = holstein-hubbard */
    int required_h5;     /* required when [model] type = hdf5 */
} key_desc;

extern const key_desc pl_cfg_keys[];
extern const size_t pl_cfg_nkeys;
/* The index of [section] key in pl_cfg_keys, or -1. */
int pl_cfg_find_key(const char *section, const char *key);
/* Whether the key matters for this configuration (dumped, checked). */
int pl_cfg_key_used(const pl_config *cfg, const key_desc *k);

#endif
