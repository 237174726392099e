"""_lib.py -- libpjds through ctypes: finding and loading the shared library,
the C structs and prototypes of include/pjds/pjds.h, errors as Python
exceptions carrying the library's message, and MPI started (and finalised at
exit) by the library when nobody else did."""
import atexit
import ctypes
import ctypes.util
import glob
import os
import subprocess
import threading
import weakref

# ---- status codes and exceptions ------------------------------------------
OK, ERR_INPUT, ERR_ARG, ERR_MPI, ERR_CUDA, ERR_MEM, ERR_OVERFLOW, ERR_LAPACK, ERR_NOTSUP, ERR_INTERNAL = range(10)


class PjdsError(RuntimeError):
    """A failed libpjds call: str(e) is the library's message (pjds_last_error),
    e.status the pjds_status code, e.status_name its name ("input", ...)."""

    def __init__(self, status, status_name, message):
        super().__init__(message)
        self.status = status
        self.status_name = status_name


class PjdsInputError(PjdsError, ValueError):
    """PJDS_ERR_INPUT or PJDS_ERR_ARG: bad data, options or arguments."""


class PjdsNotSupportedError(PjdsError, NotImplementedError):
    """PJDS_ERR_NOTSUP: not built into this library (e.g. CUDA in a CPU build)."""


class PjdsMemoryError(PjdsError, MemoryError):
    """PJDS_ERR_MEM: out of host or device memory."""


_ERROR_CLASS = {ERR_INPUT: PjdsInputError, ERR_ARG: PjdsInputError, ERR_NOTSUP: PjdsNotSupportedError,
                ERR_MEM: PjdsMemoryError}

# ---- the C structs (pjds.h); each ends in spare bytes, so that a newer library
# that appends fields (pjds.h: "fields may be added at their end") writes into
# memory of ours -------------------------------------------------------------
_SPARE = ("_spare", ctypes.c_char * 256)


class MatrixOptions(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int), ("symmetry", ctypes.c_int), ("device", ctypes.c_int), _SPARE]


class HHParams(ctypes.Structure):
    _fields_ = [("sites", ctypes.c_int), ("n_up", ctypes.c_int), ("n_down", ctypes.c_int),
                ("hopping", ctypes.c_double), ("hubbard_u", ctypes.c_double),
                ("phonon_frequency", ctypes.c_double), ("coupling", ctypes.c_double),
                ("max_phonons", ctypes.c_int), ("phonon_basis", ctypes.c_int), ("boundary", ctypes.c_int), _SPARE]


class MatrixInfo(ctypes.Structure):
    _fields_ = [("n_rows", ctypes.c_int64), ("row0", ctypes.c_int64), ("n_local", ctypes.c_int64),
                ("nnz", ctypes.c_int64), ("symmetric", ctypes.c_int), ("backend", ctypes.c_int), _SPARE]


class SolveOptions(ctypes.Structure):
    _fields_ = [("method", ctypes.c_int), ("which", ctypes.c_int), ("nev", ctypes.c_int), ("tol", ctypes.c_double),
                ("ncv", ctypes.c_int), ("max_restarts", ctypes.c_int), ("seed", ctypes.c_uint64),
                ("want_vectors", ctypes.c_int), ("verify", ctypes.c_int), ("reorth", ctypes.c_int),
                ("verify_probability", ctypes.c_double), _SPARE]  # (since 0.2.0)


class ResultInfo(ctypes.Structure):
    _fields_ = [("nev", ctypes.c_int), ("nconv", ctypes.c_int), ("reason", ctypes.c_int), ("method", ctypes.c_int),
                ("is_complex", ctypes.c_int), ("ncv", ctypes.c_int), ("restarts", ctypes.c_int),
                ("iterations", ctypes.c_int64), ("has_vectors", ctypes.c_int), ("row0", ctypes.c_int64),
                ("n_local", ctypes.c_int64), ("verify_searches", ctypes.c_int), ("verify_missed", ctypes.c_int),
                ("verify_bound", ctypes.c_double), _SPARE]  # (the verify_* since 0.2.0)


BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
BACKEND_NAMES = {v: k for k, v in BACKENDS.items()}
SYMMETRY_CHECK, SYMMETRIC, NONSYMMETRIC = 0, 1, 2
METHOD_AUTO, METHOD_LANCZOS, METHOD_KRYLOV_SCHUR = 0, 1, 2
(WHICH_SMALLEST, WHICH_LARGEST, WHICH_LARGEST_MAGNITUDE, WHICH_SMALLEST_REAL, WHICH_LARGEST_REAL,
 WHICH_LARGEST_IMAGINARY) = range(6)
RESTARTS_AUTO = -1
STOP_CONVERGED = 1
COMM_WORLD, COMM_SELF = 0, 1

_P = ctypes.POINTER
_vp = ctypes.c_void_p


# ---- finding the library ----------------------------------------------------
def _recorded_build_dirs():
    """Build folders recorded when the package was installed from a checkout."""
    try:
        from . import _install_paths
    except ImportError:  # not installed: used from the checkout (PYTHONPATH=python)
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        return [], src if os.path.exists(os.path.join(src, "include", "pjds", "pjds.h")) else None
    return list(_install_paths.BUILD_DIRS), _install_paths.SOURCE_DIR


def _pkg_config_libdir():
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "pjds"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def candidates():
    """Where libpjds is looked for, in order: $PJDS_LIBRARY; the build folder named
    at install time ($PJDS_BUILD_DIR then), then the checkout's build*/ folders,
    newest first; the install prefix (pkg-config's libdir, then the loader's
    search path through ldconfig)."""
    env = os.environ.get("PJDS_LIBRARY")
    if env:
        return [env]  # asked for explicitly: nothing else
    found = []
    dirs, src = _recorded_build_dirs()
    for d in dirs:
        found += sorted(glob.glob(os.path.join(d, "api", "libpjds.so*")), key=len)[:1]
    if src:
        libs = glob.glob(os.path.join(src, "build*", "api", "libpjds.so"))
        found += sorted(libs, key=lambda p: -os.path.getmtime(p))
    libdir = _pkg_config_libdir()
    if libdir and os.path.exists(os.path.join(libdir, "libpjds.so")):
        found.append(os.path.join(libdir, "libpjds.so"))
    name = ctypes.util.find_library("pjds")
    if name:
        found.append(name)
    seen, out = set(), []
    for p in found:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def _declare(lib):
    c_int, c_i64, c_dbl, c_char_p = ctypes.c_int, ctypes.c_int64, ctypes.c_double, ctypes.c_char_p
    comm_t = {4: ctypes.c_int32, 8: ctypes.c_void_p}[lib.pjds_mpi_comm_bytes()]
    protos = {
        "pjds_last_error": (c_char_p, []),
        "pjds_status_name": (c_char_p, [c_int]),
        "pjds_version": (c_char_p, []),
        "pjds_set_verbosity": (None, [c_int]),
        "pjds_matrix_options_init": (None, [_P(MatrixOptions)]),
        "pjds_matrix_create_csr": (c_int, [comm_t, c_i64, c_i64, c_i64, c_i64, _vp, _vp, _vp, _P(MatrixOptions),
                                           _P(_vp)]),
        "pjds_hh_params_init": (None, [_P(HHParams)]),
        "pjds_matrix_create_hh": (c_int, [comm_t, _P(HHParams), _P(MatrixOptions), _P(_vp)]),
        "pjds_matrix_get_info": (c_int, [_vp, _P(MatrixInfo)]),
        "pjds_matrix_free": (None, [_P(_vp)]),
        "pjds_solve_options_init": (None, [_P(SolveOptions)]),
        "pjds_solve": (c_int, [_vp, _P(SolveOptions), _P(_vp)]),
        "pjds_stop_reason_name": (c_char_p, [c_int]),
        "pjds_result_get_info": (c_int, [_vp, _P(ResultInfo)]),
        "pjds_result_eigenvalues": (c_int, [_vp, _vp, _vp]),
        "pjds_result_residuals": (c_int, [_vp, _vp]),
        "pjds_result_eigenvector": (c_int, [_vp, c_int, _vp, _vp]),
        "pjds_result_free": (None, [_P(_vp)]),
        "pjds_mpi_init": (c_int, [_P(c_int)]),
        "pjds_mpi_finalize": (c_int, []),
        "pjds_mpi_comm": (c_int, [c_int, _P(comm_t)]),
        "pjds_mpi_comm_rank_size": (c_int, [comm_t, _P(c_int), _P(c_int)]),
        "pjds_result_eigenvector_all": (c_int, [_vp, comm_t, c_int, _vp, _vp]),
    }
    for name, (res, args) in protos.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return comm_t


class _State:
    lib = None
    path = None
    comm_t = None
    mpi_here = False
    finalized = False
    lock = threading.Lock()
    live = weakref.WeakSet()  # handles to free before MPI_Finalize


def _load():
    tried = []
    for path in candidates():
        try:
            # RTLD_GLOBAL: Open MPI's plugins resolve libmpi's symbols through the global scope
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            lib.pjds_mpi_comm_bytes  # an older libpjds lacks the binding helpers
        except (OSError, AttributeError) as e:
            tried.append(f"{path}: {e}")
            continue
        return lib, path
    where = "; ".join(tried) if tried else "none found"
    raise OSError("pjds: cannot load libpjds (" + where + "). Set PJDS_LIBRARY to the path of libpjds.so, "
                  "build the checkout the package was installed from (bash tools/build.sh), or install the "
                  "library (cmake --install) where pkg-config or ldconfig find it")


def lib():
    """The loaded library, MPI initialised (once per process)."""
    if _State.lib is not None:
        return _State.lib
    with _State.lock:
        if _State.lib is None:
            L, path = _load()
            comm_t = _declare(L)
            here = ctypes.c_int(0)
            _State.lib, _State.path, _State.comm_t = L, path, comm_t
            check(L.pjds_mpi_init(ctypes.byref(here)))
            _State.mpi_here = bool(here.value)
            if _State.mpi_here:
                atexit.register(_finalize)
    return _State.lib


def library_path():
    """The path of the libpjds that is loaded (loading it if needed)."""
    lib()
    return _State.path


def _finalize():
    for h in list(_State.live):
        h.close()
    _State.finalized = True
    _State.lib.pjds_mpi_finalize()


def check(status):
    """Raise the exception of a failed call, with the library's message."""
    if status == OK:
        return
    L = _State.lib
    msg = L.pjds_last_error().decode("utf-8", "replace")
    name = L.pjds_status_name(status).decode()
    raise _ERROR_CLASS.get(status, PjdsError)(status, name, msg)


def register(handle):
    _State.live.add(handle)


def alive():
    """False once MPI was finalised at exit: handles are then left to the OS."""
    return not _State.finalized


def comm(spec):
    """The MPI communicator of spec: None or "world", "self", or an mpi4py
    communicator (its handle).  Returns the ctypes value to pass."""
    L = lib()
    if spec is None or isinstance(spec, str):
        kinds = {None: COMM_WORLD, "world": COMM_WORLD, "self": COMM_SELF}
        if spec not in kinds:
            raise ValueError(f"comm={spec!r}: use 'world', 'self' or an mpi4py communicator")
        c = _State.comm_t()
        check(L.pjds_mpi_comm(kinds[spec], ctypes.byref(c)))
        return c
    try:
        from mpi4py import MPI  # noqa: F401 (only when a communicator object is passed)
        handle = MPI._handleof(spec)
    except Exception as e:  # not an mpi4py communicator
        raise TypeError(f"comm: {type(spec).__name__} is not 'world', 'self' or an mpi4py communicator") from e
    return _State.comm_t(handle)


def rank_size(c):
    r, s = ctypes.c_int(), ctypes.c_int()
    check(lib().pjds_mpi_comm_rank_size(c, ctypes.byref(r), ctypes.byref(s)))
    return r.value, s.value
