/* pl_place.h — moving a complete temporary output file to its final name
 * (the last step of every result writer: pl_spectrum_commit for solve,
 * spectral and dos, pl_sweepfile_write for sweeps and merge, pl_h5m_write
 * for export).
 *
 * Without --overwrite the output path was checked to be free when the run
 * started, but another run may have written it since (two runs started
 * together with the same [output] file).  Then the placement must not
 * replace that file: renameat2(RENAME_NOREPLACE) where the file system has
 * it, else link(2) + unlink(2) (both fail atomically when the name exists);
 * only where neither exists (no hard links either) a check just before
 * rename(2), which leaves a window of microseconds instead of the run.
 *
 * Not collective; one process (rank 0) writes every output file. */
#ifndef PL_PLACE_H
#define PL_PLACE_H

/* Move the complete file `tmp` to `path` (same directory).
 * replace = 1 (--overwrite, or a file this run placed itself before):
 * rename(2), an existing `path` is replaced atomically.
 * replace = 0: an existing `path` is never replaced; then `tmp` is kept
 * and the error is PL_ERR_INPUT (exit status 2) with one line naming
 * `path` and `tmp`.  Any other failure is PL_ERR_IO; `tmp` is left where it
 * is in every failure (the caller removes it unless the error is
 * PL_ERR_INPUT).
 * Test hooks (environment): PJDS_TEST_BEFORE_PLACE=FILE creates FILE (when
 * missing) just before the placement, as another run finishing first
 * would (tests/app/output_race.sh); PJDS_TEST_PLACE_LINK=1 skips
 * renameat2, so that the link + unlink path runs (tests/app/test_place.c). */
int pl_place_file(const char *tmp, const char *path, int replace);

#endif
