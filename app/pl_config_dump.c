/* pl_config_dump.c — the configuration written back as text: the resolved
 * file (every used key, defaults included) that result files record, the
 * part of it that decides a result, and the names of enum values. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_config_keys.h"

const char *pl_config_enum_name(const char *section, const char *key, int value)
{
    int i = pl_cfg_find_key(section, key);
    if (i < 0 || pl_cfg_keys[i].type != KT_ENUM) return "?";
    static _Thread_local char ring[8][64]; /* several names may be used in one printf */
    static _Thread_local int next;
    char *buf = ring[next++ & 7];
    const size_t buflen = sizeof ring[0];
    const char *w = pl_cfg_keys[i].words;
    for (int idx = 0; *w; idx++) {
        const char *bar = strchr(w, '|');
        size_t n = bar ? (size_t)(bar - w) : strlen(w);
        if (idx == value) {
            snprintf(buf, buflen, "%.*s", (int)n, w);
            return buf;
        }
        if (!bar) break;
        w = bar + 1;
    }
    return "?";
}

void pl_config_dump(const pl_config *cfg, FILE *f)
{
    const char *last = "";
    for (size_t i = 0; i < pl_cfg_nkeys; i++) {
        const key_desc *k = &pl_cfg_keys[i];
        if (!pl_cfg_key_used(cfg, k)) continue;
        if (cfg->model.type != PL_MODEL_HDF5 && !strcmp(k->section, "matrix")) continue;
        if (strcmp(last, k->section)) {
            fprintf(f, "%s[%s]\n", last[0] ? "\n" : "", k->section);
            last = k->section;
        }
        if (!strcmp(k->section, "sweep") && strcmp(last, "sweep")) { /* the swept keys first */
            fprintf(f, "\n[sweep]\n");
            last = k->section;
            for (int j = 0; j < cfg->sweep.nkeys; j++) fprintf(f, "%s = %s\n", cfg->sweep.key[j], cfg->sweep.values[j]);
        }
        const char *field = (const char *)cfg + k->offset;
        fprintf(f, "%s = ", k->key);
        switch (k->type) {
        case KT_INT: fprintf(f, "%d\n", *(const int *)field); break;
        case KT_INT_AUTO:
        case KT_INT_ALL:
            /* max_phonons = auto stays auto once `solve` resolved it (app/cutoff.c) */
            if (*(const int *)field == -1 ||
                (field == (const char *)&cfg->model.max_phonons && cfg->model.max_phonons_auto))
                fprintf(f, k->type == KT_INT_AUTO ? "auto\n" : "all\n");
            else fprintf(f, "%d\n", *(const int *)field);
            break;
        case KT_I64: fprintf(f, "%lld\n", (long long)*(const int64_t *)field); break;
        case KT_I64_AUTO:
            if (*(const int64_t *)field == PL_SORT_WINDOW_AUTO) fprintf(f, "auto\n");
            else fprintf(f, "%lld\n", (long long)*(const int64_t *)field);
            break;
        case KT_U64: fprintf(f, "%llu\n", (unsigned long long)*(const uint64_t *)field); break;
        case KT_DBL_OPT:
        case KT_DBL: fprintf(f, "%.17g\n", *(const double *)field); break;
        case KT_RANGE: fprintf(f, "%.17g, %.17g\n", ((const double *)field)[0], ((const double *)field)[1]); break;
        case KT_CPLX_OPT:
            if (((const double *)field)[1] == 0.0) fprintf(f, "%.17g\n", ((const double *)field)[0]);
            else fprintf(f, "%.17g%+.17gi\n", ((const double *)field)[0], ((const double *)field)[1]);
            break;
        case KT_BOOL: fprintf(f, "%s\n", *(const int *)field ? "true" : "false"); break;
        case KT_ENUM: fprintf(f, "%s\n", pl_config_enum_name(k->section, k->key, *(const int *)field)); break;
        case KT_STR: fprintf(f, "%s\n", field); break;
        }
    }
}

char *pl_config_dump_string(const pl_config *cfg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    pl_config_dump(cfg, f);
    fclose(f);
    return buf;
}

const char *pl_config_enum_words(const char *section, const char *key)
{
    int i = pl_cfg_find_key(section, key);
    return i >= 0 && pl_cfg_keys[i].type == KT_ENUM ? pl_cfg_keys[i].words : NULL;
}

char *pl_config_result_text(const pl_config *cfg, int with_sweep)
{
    char *full = pl_config_dump_string(cfg);
    if (!full) return NULL;
    /* keep the sections that decide a result; drop spmv and output */
    char *out = malloc(strlen(full) + 1), *o = out;
    if (!out) {
        free(full);
        return NULL;
    }
    int keep = 0;
    for (char *line = full; *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
        if (line[0] == '[')
            keep = !strncmp(line, "[model]", 7) || !strncmp(line, "[matrix]", 8) || !strncmp(line, "[solver]", 8) ||
                   (with_sweep && !strncmp(line, "[sweep]", 7));
        /* warm_start changes the SpMV count, never the result beyond the tolerance */
        if (keep && strncmp(line, "warm_start =", 12) && !(n == 1 && o == out)) {
            memcpy(o, line, n);
            o += n;
        }
        line += n;
    }
    *o = 0;
    free(full);
    return out;
}
