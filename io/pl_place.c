/* pl_place.c — final placement of a temporary output file (pl_place.h):
 * rename(2) to replace, renameat2(RENAME_NOREPLACE) or link + unlink to
 * never replace a file that appeared during the run. */
#define _GNU_SOURCE
#include "pl_place.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pl_error.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) through the
 * system call (glibc has a wrapper only since 2.28); -1 with errno ENOSYS
 * where the system has none. */
static int rename_noreplace(const char *from, const char *to)
{
    if (getenv("PJDS_TEST_PLACE_LINK")) { /* test hook: the fallback below */
        errno = ENOSYS;
        return -1;
    }
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
#else
    (void)from, (void)to;
    errno = ENOSYS;
    return -1;
#endif
}

/* errno of a call that the file system (or kernel, or a seccomp filter)
 * does not support, as opposed to a real failure */
static int unsupported(int e) { return e == EINVAL || e == ENOSYS || e == ENOTSUP || e == EOPNOTSUPP || e == EPERM; }

static int refused(const char *tmp, const char *path)
{
    return PL_ERROR(PL_ERR_INPUT,
                    "%s: output file appeared while this run was working (another run with the same output?); it "
                    "is not replaced (use --overwrite to replace it); this run's result is kept as %s",
                    path, tmp);
}

int pl_place_file(const char *tmp, const char *path, int replace)
{
    PL_CHECK(tmp && path && tmp[0] && path[0], PL_ERR_ARG, "pl_place_file: no file name");
    /* test hook: a second run that finished first */
    const char *hook = getenv("PJDS_TEST_BEFORE_PLACE");
    if (hook && hook[0]) {
        int fd = open(hook, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            static const char text[] = "written by the test hook PJDS_TEST_BEFORE_PLACE\n";
            ssize_t w = write(fd, text, sizeof text - 1);
            (void)w;
            close(fd);
        }
    }
    if (replace) {
        PL_CHECK(rename(tmp, path) == 0, PL_ERR_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
        return PL_OK;
    }
    if (rename_noreplace(tmp, path) == 0) return PL_OK;
    int e = errno;
    if (e == EEXIST) return refused(tmp, path);
    PL_CHECK(unsupported(e), PL_ERR_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(e));
    /* no RENAME_NOREPLACE here: a hard link fails just as atomically */
    if (link(tmp, path) == 0) {
        if (unlink(tmp) != 0)
            pl_warn("%s is in place, but its temporary name %s could not be removed: %s", path, tmp, strerror(errno));
        return PL_OK;
    }
    e = errno;
    if (e == EEXIST) return refused(tmp, path);
    PL_CHECK(unsupported(e) || e == EMLINK, PL_ERR_IO, "%s: cannot link %s into place: %s", path, tmp, strerror(e));
    /* neither (a file system without hard links): check, then rename */
    if (access(path, F_OK) == 0) return refused(tmp, path);
    PL_CHECK(rename(tmp, path) == 0, PL_ERR_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
    return PL_OK;
}
