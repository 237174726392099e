/* sweep_points.c — the points of a [sweep] (docs/operations.md, "Sweeps"): each key's
 * values from a list "0.0, 0.5, 1.0" or a range "start:stop:step" (stop
 * included when a step lands on it within 1e-9 relative; range values are
 * rounded to 15 significant digits, so 0:1:0.1 gives 0.3, not
 * 0.30000000000000004), combined as a grid (Cartesian product, the first key
 * varies slowest) or zipped (lock-step), every point's configuration checked
 * before anything runs; and the --points selection of a job array. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "sweep_impl.h"

/* The section of a sweep key: [model], or [solver] for target. */
static const char *key_section(const char *key) { return strcmp(key, "target") ? "model" : "solver"; }

/* Keys that change the matrix's structure (or its size): a new operator.
 * target: a new factorisation on the same analysis (cmd_sweep.c). */
static int is_structural(const pl_config *cfg, const char *key)
{
    if (!strcmp(key, "target")) return 0;
    static const char *const value_keys[] = {"hopping", "hubbard_u", "phonon_frequency", "coupling"};
    if (cfg->model.type != PL_MODEL_HOLSTEIN_HUBBARD) return 1; /* only the Hamiltonian has value terms */
    for (size_t i = 0; i < sizeof value_keys / sizeof value_keys[0]; i++)
        if (!strcmp(key, value_keys[i])) return 0;
    return 1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

/* The values of one key: vals (malloc'ed, *count of them, 64 chars each). */
static int expand_key(const pl_config *cfg, int k, char (**vals)[64], int *count)
{
    const pl_sweep_cfg *sw = &cfg->sweep;
    char where[1200], buf[2048];
    pl_config_where(cfg, "sweep", sw->key[k], where, sizeof where);
    snprintf(buf, sizeof buf, "%s", sw->values[k]);
    char *s = trim(buf);
    *vals = NULL;
    *count = 0;
    PL_CHECK(s[0], PL_ERR_INPUT, "%s: empty list of values", where);
    if (strchr(s, ':')) { /* start:stop:step */
        char *a = s, *b = strchr(a, ':'), *c = b ? strchr(b + 1, ':') : NULL;
        PL_CHECK(b && c && !strchr(c + 1, ':'), PL_ERR_INPUT, "%s: '%s' is not a range start:stop:step", where, s);
        *b++ = 0;
        *c++ = 0;
        PL_CHECK(!pl_config_enum_words("model", sw->key[k]), PL_ERR_INPUT,
                 "%s: a range needs a numeric key; list the words instead", where);
        double v[3];
        char *parts[3] = {trim(a), trim(b), trim(c)};
        for (int i = 0; i < 3; i++) {
            char *end = NULL;
            v[i] = strtod(parts[i], &end);
            PL_CHECK(parts[i][0] && end && !*end && isfinite(v[i]), PL_ERR_INPUT,
                     "%s: range %s:%s:%s: '%s' is not a finite number", where, parts[0], parts[1], parts[2], parts[i]);
        }
        PL_CHECK(v[2] != 0.0, PL_ERR_INPUT, "%s: range %s:%s:%s: the step is zero", where, parts[0], parts[1], parts[2]);
        double q = (v[1] - v[0]) / v[2];
        PL_CHECK(q > -1e-9, PL_ERR_INPUT, "%s: range %s:%s:%s is empty (the step goes away from stop)", where, parts[0],
                 parts[1], parts[2]);
        PL_CHECK(q < 1e6, PL_ERR_INPUT, "%s: range %s:%s:%s has more than a million values", where, parts[0], parts[1],
                 parts[2]);
        int n = (int)floor(q + 1e-9) + 1;
        *vals = calloc((size_t)n, sizeof **vals);
        PL_CHECK(*vals, PL_ERR_MEM, "out of host memory");
        for (int i = 0; i < n; i++) {
            double x = v[0] + (double)i * v[2];
            /* stop itself when the step lands on it within 1e-9 relative */
            if (fabs(x - v[1]) <= 1e-9 * fmax(fabs(v[1]), fabs(v[2]))) x = v[1];
            snprintf((*vals)[i], 64, "%.15g", x);
            double y = strtod((*vals)[i], NULL);
            if (y == 0.0) snprintf((*vals)[i], 64, "0"); /* no -0 */
        }
        *count = n;
        return PL_OK;
    }
    int n = 1;
    for (const char *p = s; *p; p++) n += *p == ',';
    *vals = calloc((size_t)n, sizeof **vals);
    PL_CHECK(*vals, PL_ERR_MEM, "out of host memory");
    char *save = NULL, *tok = s;
    for (int i = 0; i < n; i++) {
        char *end = strchr(tok, ',');
        if (end) *end = 0;
        char *t = trim(tok);
        if (!t[0] || strlen(t) >= 64) {
            free(*vals);
            *vals = NULL;
            return PL_ERROR(PL_ERR_INPUT, "%s: value %d of the list is %s", where, i + 1, t[0] ? "too long" : "empty");
        }
        snprintf((*vals)[i], 64, "%s", t);
        tok = end ? end + 1 : tok + strlen(tok);
    }
    (void)save;
    *count = n;
    return PL_OK;
}

/* The numeric value of a key's text (enum: the word's index). */
static double numeric(const char *words, const char *t)
{
    if (!words) return strtod(t, NULL);
    int idx = 0;
    for (const char *w = words; *w; idx++) {
        size_t n = strcspn(w, "|");
        if (strlen(t) == n && !strncmp(t, w, n)) return idx;
        w += n + (w[n] == '|');
    }
    return NAN;
}

/* The definition that hashes a sweep: the result-deciding configuration
 * without the swept keys' base values, then the expanded [sweep]. */
static int make_definition(const pl_config *cfg, sweep_def *d)
{
    char *base = pl_config_result_text(cfg, 0);
    PL_CHECK(base, PL_ERR_MEM, "out of host memory");
    size_t cap = strlen(base) + 256 + (size_t)d->npoints * (size_t)d->nkeys * 66;
    char *out = malloc(cap), *o = out;
    if (!out) {
        free(base);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    char section[32] = "";
    for (char *line = base; *line;) {
        size_t n = strcspn(line, "\n");
        if (line[0] == '[') sscanf(line, "[%31[^]]", section);
        int skip = 0;
        for (int k = 0; k < d->nkeys; k++) {
            size_t kl = strlen(d->key[k]);
            if (!strcmp(section, key_section(d->key[k])) && !strncmp(line, d->key[k], kl) &&
                !strncmp(line + kl, " = ", 3))
                skip = 1;
        }
        if (!skip) {
            memcpy(o, line, n);
            o += n;
            *o++ = '\n';
        }
        line += n + (line[n] == '\n');
    }
    o += sprintf(o, "\n[sweep]\ncombine = %s\n", d->combine == PL_COMBINE_ZIP ? "zip" : "grid");
    int nvals[PL_SWEEP_MAX_KEYS];
    (void)nvals;
    for (int k = 0; k < d->nkeys; k++) {
        o += sprintf(o, "%s =", d->key[k]);
        /* the distinct values in order of first appearance along the points */
        for (int p = 0; p < d->npoints; p++) {
            int seen = 0;
            for (int q = 0; q < p && !seen; q++)
                seen = !strcmp(d->text[(size_t)q * d->nkeys + k], d->text[(size_t)p * d->nkeys + k]);
            if (!seen || d->combine == PL_COMBINE_ZIP) o += sprintf(o, " %s", d->text[(size_t)p * d->nkeys + k]);
        }
        *o++ = '\n';
    }
    *o = 0;
    free(base);
    d->definition = out;
    pl_hash_text(out, d->hash);
    return PL_OK;
}

int sweep_def_build(const pl_config *cfg, sweep_def *d)
{
    memset(d, 0, sizeof *d);
    const pl_sweep_cfg *sw = &cfg->sweep;
    char (*vals[PL_SWEEP_MAX_KEYS])[64] = {0};
    int cnt[PL_SWEEP_MAX_KEYS] = {0}, rc = PL_OK;
    char where[1200];
    d->nkeys = sw->nkeys;
    d->combine = sw->combine;
    for (int k = 0; k < sw->nkeys; k++) {
        snprintf(d->key[k], sizeof d->key[k], "%s", sw->key[k]);
        d->words[k] = pl_config_enum_words(key_section(sw->key[k]), sw->key[k]);
        d->structural[k] = is_structural(cfg, sw->key[k]);
        PL_CALL_GOTO(expand_key(cfg, k, &vals[k], &cnt[k]), out, rc);
    }
    int64_t P = 1;
    for (int k = 0; k < sw->nkeys; k++) {
        if (d->combine == PL_COMBINE_ZIP && cnt[k] != cnt[0]) {
            rc = PL_ERROR(PL_ERR_INPUT, "%s: combine = zip needs lists of equal length: %s has %d values, %s has %d",
                          pl_config_where(cfg, "sweep", sw->key[k], where, sizeof where), sw->key[0], cnt[0],
                          sw->key[k], cnt[k]);
            goto out;
        }
        if (d->combine == PL_COMBINE_GRID) P *= cnt[k];
        PL_CHECK_GOTO(P <= 1000000, PL_ERR_INPUT, out, rc, "%s: the sweep has more than a million points",
                      pl_config_where(cfg, "sweep", sw->key[k], where, sizeof where));
    }
    if (d->combine == PL_COMBINE_ZIP) P = cnt[0];
    d->npoints = (int)P;
    d->text = calloc((size_t)P * (size_t)d->nkeys + 1, sizeof *d->text);
    d->num = calloc((size_t)P * (size_t)d->nkeys + 1, sizeof *d->num);
    PL_CHECK_GOTO(d->text && d->num, PL_ERR_MEM, out, rc, "out of host memory");
    for (int64_t p = 0; p < P; p++) {
        int64_t r = p;
        for (int k = d->nkeys - 1; k >= 0; k--) { /* the last key varies fastest */
            int i = d->combine == PL_COMBINE_ZIP ? (int)p : (int)(r % cnt[k]);
            if (d->combine == PL_COMBINE_GRID) r /= cnt[k];
            memcpy(d->text[p * d->nkeys + k], vals[k][i], 64);
            d->num[p * d->nkeys + k] = numeric(d->words[k], vals[k][i]);
        }
    }
    /* every point's configuration must pass the checks a single solve makes */
    for (int p = 0; p < d->npoints; p++) {
        pl_config pc;
        int e = sweep_point_config(cfg, d, p, &pc);
        if (e == PL_OK) e = pl_config_check(&pc);
        pl_config_destroy(&pc);
        if (e != PL_OK) {
            char msg[1024], lab[600];
            snprintf(msg, sizeof msg, "%s", pl_error_message());
            pl_error_clear();
            int k = 0; /* name the first key of the point's values that the message mentions */
            for (int j = 0; j < d->nkeys; j++)
                if (strstr(msg, d->key[j])) k = j;
            rc = PL_ERROR(e, "%s: point %d (%s) is refused: %s",
                          pl_config_where(cfg, "sweep", d->key[k], where, sizeof where), p,
                          sweep_point_label(d, p, lab, sizeof lab), msg);
            goto out;
        }
    }
    PL_CALL_GOTO(make_definition(cfg, d), out, rc);
out:
    for (int k = 0; k < PL_SWEEP_MAX_KEYS; k++) free(vals[k]);
    if (rc != PL_OK) sweep_def_free(d);
    return rc;
}

void sweep_def_free(sweep_def *d)
{
    free(d->text);
    free(d->num);
    free(d->definition);
    memset(d, 0, sizeof *d);
}

int sweep_point_config(const pl_config *base, const sweep_def *d, int p, pl_config *out)
{
    PL_CALL(pl_config_copy(out, base));
    out->sweep.nkeys = 0;
    for (int k = 0; k < d->nkeys; k++) {
        int e = pl_config_set_value(out, key_section(d->key[k]), d->key[k], d->text[(size_t)p * d->nkeys + k]);
        if (e) {
            pl_config_destroy(out);
            return e;
        }
    }
    /* what pl_config_check derives from the keys (the lattice of [model]
     * lattice, lx, ..., and its sites) is the point's own */
    if (out->model.type == PL_MODEL_HOLSTEIN_HUBBARD && out->model.lattice != HH_LATTICE_CHAIN) {
        int e = pl_config_check(out);
        if (e) {
            pl_config_destroy(out);
            return e;
        }
    }
    return PL_OK;
}

const char *sweep_point_label(const sweep_def *d, int p, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (int k = 0; k < d->nkeys && o < len; k++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s=%s", k ? ", " : "", d->key[k], d->text[(size_t)p * d->nkeys + k]);
    return buf;
}

static int env_int(const char *name, long *v)
{
    const char *s = getenv(name);
    char *end = NULL;
    if (!s || !s[0]) return 0;
    *v = strtol(s, &end, 10);
    return end && !*end;
}

int sweep_select(const char *spec, int npoints, int *lo, int *hi)
{
    *lo = 0;
    *hi = npoints - 1;
    if (!spec) return PL_OK;
    if (!strcmp(spec, "auto")) {
        long id = 0, count = 0, mn = 0, mx = 0;
        PL_CHECK(env_int("SLURM_ARRAY_TASK_ID", &id), PL_ERR_INPUT,
                 "--points auto: SLURM_ARRAY_TASK_ID is not set (not a Slurm job array task?); give --points A-B");
        int have_min = env_int("SLURM_ARRAY_TASK_MIN", &mn);
        if (!env_int("SLURM_ARRAY_TASK_COUNT", &count)) {
            PL_CHECK(have_min && env_int("SLURM_ARRAY_TASK_MAX", &mx), PL_ERR_INPUT,
                     "--points auto: needs SLURM_ARRAY_TASK_COUNT, or SLURM_ARRAY_TASK_MIN and _MAX");
            count = mx - mn + 1;
        }
        long t = id - mn;
        PL_CHECK(count >= 1 && t >= 0 && t < count, PL_ERR_INPUT,
                 "--points auto: task %ld is outside the array (min %ld, %ld tasks)", id, mn, count);
        *lo = (int)((int64_t)npoints * t / count);
        *hi = (int)((int64_t)npoints * (t + 1) / count) - 1;
        return PL_OK;
    }
    long a = -1, b = -1;
    char *end = NULL;
    a = strtol(spec, &end, 10);
    if (end && *end == '-') b = strtol(end + 1, &end, 10);
    else b = a;
    PL_CHECK(end && !*end && end != spec && a >= 0 && b >= a, PL_ERR_INPUT,
             "--points %s: expected A-B with 0 <= A <= B (point indices, inclusive), A, or auto", spec);
    PL_CHECK(b < npoints, PL_ERR_INPUT, "--points %s: the sweep has %d points (0..%d)", spec, npoints, npoints - 1);
    *lo = (int)a;
    *hi = (int)b;
    return PL_OK;
}
