#!/usr/bin/env bash
# Install the Debian/Ubuntu packages pjds-lanczos needs, only those missing.
# Usage: tools/setup-deps.sh   (uses sudo when not root)
set -euo pipefail
pkgs=(build-essential cmake pkg-config
      libopenmpi-dev openmpi-bin
      libhdf5-dev hdf5-tools
      liblapacke-dev libopenblas-dev
      libinih-dev libmumps-dev
      clang libclang-rt-14-dev libomp-14-dev
      python3-numpy python3-scipy python3-h5py python3-matplotlib
      python3-petsc4py-real python3-pandas python3-natsort  # these three: HDF5 layout tests (tests/h5matrix)
      python3-pip python3-venv python3-setuptools python3-wheel)  # the Python package (python/, tests/python)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Producers of HDF5 matrix layouts for tests/h5matrix/layouts.py (anndata's .h5ad, h5sparse), from PyPI
# into /usr/local: --no-deps with pinned versions that work with Debian's numpy 1.24, scipy and h5py
# (letting pip resolve anndata's dependencies replaces them with numpy 2, which breaks petsc4py);
# the tests skip these producers when the install fails (no network)
if ! /usr/bin/python3 -c "import anndata, h5sparse" 2>/dev/null; then
  echo "setup: installing (pip) anndata h5sparse" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO /usr/bin/python3 -m pip install -q --break-system-packages --no-deps \
    anndata==0.11.4 h5sparse==0.1.0 array-api-compat==1.16.0 \
    || echo "setup: pip install of anndata/h5sparse failed; their layout tests are skipped" >&2
fi

# Optional: peer solvers for bench/nonsym_peer.py (SLEPc/PETSc Python bindings). Not needed by the
# build or the tests, so CI skips it; enable with PJDS_BENCH_DEPS=1 bash tools/setup-deps.sh
if [ "${PJDS_BENCH_DEPS:-0}" = 1 ]; then
  bench_pkgs=(python3-slepc4py-real python3-petsc4py-real)
  bench_missing=()
  for p in "${bench_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || bench_missing+=("$p")
  done
  if ((${#bench_missing[@]})); then
    echo "setup: installing (bench) ${bench_missing[*]}" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${bench_missing[@]}" >/dev/null
  fi
fi

# A real single-node Slurm for tests/slurm (the job scripts of configs/slurm/ run unchanged against
# it): munge and Slurm's daemons and clients.  The test starts its own daemons with a generated
# configuration in a temporary directory; without them it reports skipped.
slurm_pkgs=(munge slurmctld slurmd slurm-client)
slurm_missing=()
for p in "${slurm_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || slurm_missing+=("$p")
done
if ((${#slurm_missing[@]})); then
  echo "setup: installing (tests/slurm) ${slurm_missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${slurm_missing[@]}" >/dev/null \
    || echo "setup: Slurm packages did not install; tests/slurm reports skipped" >&2
fi

# Readers of the result files for tests/app/check_describe.py (xarray through h5netcdf: the dimension
# scales of docs/formats.md "Self-description"); the test reports skipped without them.
py_pkgs=(python3-xarray python3-h5netcdf)
py_missing=()
for p in "${py_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || py_missing+=("$p")
done
if ((${#py_missing[@]})); then
  echo "setup: installing (tests) ${py_missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${py_missing[@]}" >/dev/null \
    || echo "setup: python3-xarray/python3-h5netcdf did not install; tests/app describe checks report skipped" >&2
fi

# Optional: cuDSS, NVIDIA's sparse direct solver (the GPU factorisation of [solver] factorization = cudss,
# factor/fact_cudss.c), from PyPI's nvidia-cudss-cu13 wheel into /usr/local's dist-packages (its
# nvidia/cu13/{include,lib}), where factor/cudss.cmake looks for it; the build then compiles the back-end
# in.  Only with a CUDA 13 toolkit (nvcc); 161 MB, so PJDS_NO_CUDSS=1 skips it.  A failed install is a
# warning: the build goes on without cuDSS and says so.
if [ "${PJDS_NO_CUDSS:-0}" != 1 ] && { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; }; then
  if ! ls /usr/local/lib/python3*/dist-packages/nvidia/cu13/lib/libcudss.so.* >/dev/null 2>&1; then
    echo "setup: installing (pip) nvidia-cudss-cu13 (optional GPU factorisation)" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO /usr/bin/python3 -m pip install -q --break-system-packages --no-deps nvidia-cudss-cu13==1.0.0.35 \
      || echo "setup: warning: pip install of nvidia-cudss-cu13 failed; the build goes on without cuDSS" >&2
  fi
fi
