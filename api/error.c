/* error.c — the status codes and messages of the public API, the library's
 * version and verbosity.  Internal functions record a message with
 * pl_error_set (core/pl_error.h); every public function hands its code to
 * api_status, which keeps the message per thread for pjds_last_error. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api_impl.h"
#include "pl_build.h"

static _Thread_local char g_msg[1024];
static int g_verbosity = 0;

const char *pjds_last_error(void) { return g_msg; }

const char *pjds_status_name(pjds_status s)
{
    static const char *const names[] = {"ok",       "input",    "argument", "mpi",           "cuda",
                                        "memory",   "overflow", "lapack",   "not supported", "internal"};
    return (int)s >= 0 && (int)s < (int)(sizeof names / sizeof names[0]) ? names[s] : "unknown";
}

const char *pjds_version(void) { return PL_VERSION; }

void pjds_set_verbosity(int level) { g_verbosity = level < 0 ? 0 : level > 2 ? 2 : level; }

void api_log_init(MPI_Comm comm)
{
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) rank = 0;
    pl_log_init(rank, g_verbosity);
}

static pjds_status status_of(int rc)
{
    switch (rc) {
    case PL_OK: return PJDS_OK;
    case PL_ERR_INPUT: return PJDS_ERR_INPUT;
    case PL_ERR_ARG: return PJDS_ERR_ARG;
    case PL_ERR_MPI: return PJDS_ERR_MPI;
    case PL_ERR_CUDA: return PJDS_ERR_CUDA;
    case PL_ERR_MEM: return PJDS_ERR_MEM;
    case PL_ERR_OVERFLOW: return PJDS_ERR_OVERFLOW;
    case PL_ERR_LAPACK: return PJDS_ERR_LAPACK;
    case PL_ERR_NOTSUP: return PJDS_ERR_NOTSUP;
    default: return PJDS_ERR_INTERNAL; /* PL_ERR_IO, PL_ERR_HDF5: no files below the API */
    }
}

pjds_status api_status(int rc)
{
    if (rc == PL_OK) return PJDS_OK;
    const char *m = pl_error_message();
    snprintf(g_msg, sizeof g_msg, "%s", m && m[0] ? m : pl_error_name(rc));
    pl_error_clear();
    return status_of(rc);
}

pjds_status api_fail(pjds_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_msg, sizeof g_msg, fmt, ap);
    va_end(ap);
    return s;
}

int api_agree(MPI_Comm comm, int rc)
{
    int rank = 0, size = 1, who, first = INT_MAX;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return rc ? rc : PL_ERROR(PL_ERR_MPI, "MPI_Comm_rank failed");
    who = rc ? rank : INT_MAX;
    if (MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return rc ? rc : PL_ERROR(PL_ERR_MPI, "MPI_Allreduce failed");
    if (first == INT_MAX) return PL_OK;
    struct {
        int code;
        char msg[900];
    } m = {rc, ""};
    if (rank == first) snprintf(m.msg, sizeof m.msg, "%s", pl_error_message());
    if (MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, comm) != MPI_SUCCESS)
        return rc ? rc : PL_ERROR(PL_ERR_MPI, "MPI_Bcast failed");
    pl_error_clear();
    if (size > 1) return pl_error_set(m.code, __FILE__, __LINE__, __func__, "rank %d: %s", first, m.msg);
    return pl_error_set(m.code, __FILE__, __LINE__, __func__, "%s", m.msg);
}
