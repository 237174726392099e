/* fuzz_ini.c — libFuzzer harness of the configuration path:
 * the input is an INI text, optionally followed by a line "--set" and one
 * override "section.key=value" per line.  It goes through what `solve`
 * does with a config file: pl_config_read, pl_config_set, pl_config_check,
 * the resolved dump and the result text.  Every call must return PL_OK or
 * PL_ERR_INPUT (exit status 0 or 2 of the program); anything else aborts,
 * and so does every sanitizer report (the harness is built with
 * -fsanitize=fuzzer,address,undefined; tests/fuzz/CMakeLists.txt).
 * The config file is written to /dev/shm (memory) because the reader takes
 * a path (it reports file:line positions). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_config.h"
#include "pl_error.h"

static char path[256];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/pjds_fuzz_ini_%d.ini", dir, (int)getpid());
    pl_log_init(1, 0); /* quiet: warnings of odd configs are not findings */
    return 0;
}

static void check(int rc, const char *what)
{
    if (rc == PL_OK || rc == PL_ERR_INPUT) return;
    fprintf(stderr, "fuzz_ini: %s returned %s (%d): %s\n", what, pl_error_name(rc), rc, pl_error_message());
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* split at the first "\n--set\n" */
    size_t cut = size;
    static const char mark[] = "\n--set\n";
    for (size_t i = 0; i + sizeof mark - 1 <= size; i++)
        if (!memcmp(data + i, mark, sizeof mark - 1)) {
            cut = i;
            break;
        }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (cut && fwrite(data, 1, cut, f) != cut) abort();
    if (fclose(f)) abort();

    pl_config cfg;
    pl_config_defaults(&cfg);
    int rc = pl_config_read(&cfg, path);
    check(rc, "pl_config_read");
    size_t p = cut < size ? cut + sizeof mark - 1 : size;
    while (rc == PL_OK && p < size) {
        size_t e = p;
        while (e < size && data[e] != '\n') e++;
        char *line = strndup((const char *)data + p, e - p); /* stops at an embedded NUL, as argv does */
        if (!line) abort();
        rc = pl_config_set(&cfg, line);
        check(rc, "pl_config_set");
        free(line);
        p = e + 1;
    }
    if (rc == PL_OK) {
        rc = pl_config_check(&cfg);
        check(rc, "pl_config_check");
    }
    if (rc == PL_OK) {
        char *d = pl_config_dump_string(&cfg);
        char *t = pl_config_result_text(&cfg, 1);
        if (!d || !t) abort();
        free(d);
        free(t);
    }
    pl_error_clear();
    pl_config_destroy(&cfg);
    unlink(path);
    return 0;
}
