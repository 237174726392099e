"""pjds: Python calls into libpjds, the eigensolver of pjds-lanczos (pJDS SpMV,
thick-restart Lanczos, Krylov-Schur) on the CPU or a GPU, under MPI.

    import pjds, scipy.io
    A = scipy.io.mmread("lund_a.mtx").tocsr()
    w, v = pjds.eigsh(A, k=4, which="SA")          # as scipy.sparse.linalg.eigsh
    H = pjds.holstein_hubbard(sites=4, n_up=2, n_down=2, max_phonons=6, hubbard_u=4, coupling=0.5)
    w = H.eigsh(k=4, which="SA", return_eigenvectors=False)
    r = pjds.read("quickstart.h5")                   # a result file: dict of NumPy arrays

The library is found through $PJDS_LIBRARY, the build folder of the checkout the
package was installed from, or the install prefix (pkg-config, ldconfig): see
pjds.library_candidates().  MPI: the library starts it when nobody did (a single
rank in a plain python3; under mpirun, every rank runs the script)."""
from ._lib import PjdsError, PjdsInputError, PjdsMemoryError, PjdsNotSupportedError
from ._lib import candidates as library_candidates
from ._lib import library_path
from ._linalg import NoConvergence, eigs, eigsh
from ._operator import Operator, holstein_hubbard, operator
from ._read import Result, read

__version__ = "0.2.0"


def library_version():
    """The version of the loaded libpjds (pjds_version)."""
    from . import _lib
    return _lib.lib().pjds_version().decode()


def set_verbosity(level):
    """The library's progress lines on stderr: 0 none (default), 1 info, 2 debug."""
    from . import _lib
    _lib.lib().pjds_set_verbosity(int(level))


def mpi_rank_size(comm="world"):
    """(rank, size) of this process in comm ('world', 'self' or an mpi4py communicator)."""
    from . import _lib
    return _lib.rank_size(_lib.comm(comm))


__all__ = ["eigsh", "eigs", "holstein_hubbard", "operator", "Operator", "read", "Result", "PjdsError",
           "PjdsInputError", "PjdsMemoryError", "PjdsNotSupportedError", "NoConvergence", "library_path",
           "library_candidates", "library_version", "set_verbosity", "mpi_rank_size"]
