/* gen_util.h — what the row generators of hamiltonian/ share (private to
 * the folder): progress lines of a long build, transparent huge pages for a
 * fresh large array. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Progress of a long build: thread 0 reports at most once per second after
 * the first two seconds ("<model> <what>: X of Y rows (P %), T s"). */
typedef struct gen_progress {
    double t0, last;
    int64_t done, total;
    const char *model; /* "Hamiltonian", "block-stencil" */
    const char *what;  /* "rows", "row lengths" */
} gen_progress;

/* Count `rows` more rows done (any thread, atomic); thread 0 may print.
 * Can't fail. */
void gen_progress_tick(gen_progress *p, int64_t rows);

/* Ask for transparent huge pages on a large fresh array before its first
 * touch: the page faults of a GB-sized fill otherwise cost more than the
 * computation (Linux with THP "madvise"; advisory, failure is harmless). */
void gen_advise_huge_pages(void *p, size_t bytes);
