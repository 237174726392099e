#!/usr/bin/env bash
# install_venv.sh VENV PACKAGE_DIR BUILD_DIR -- the ctest fixture of tests/python: a virtual
# environment with the system's packages (numpy, scipy, h5py, xarray from apt) and pjds installed
# into it by pip, offline (--no-build-isolation --no-index: Debian's setuptools and wheel), from a
# copy of python/ in the build folder (pip's in-tree build would write into the source tree),
# recording the checkout and BUILD_DIR as the place of libpjds (python/setup.py).
set -euo pipefail
venv=$1 pkg=$2 build=$3
src=$(cd "$pkg/.." && pwd)
py=${PJDS_PYTHON:-/usr/bin/python3}
[ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv" \
  || { echo "python.install: '$py -m venv' failed (python3-venv missing? bash tools/setup-deps.sh)" >&2; exit 1; }
# the base interpreter's packages may live outside what --system-site-packages passes on (a user
# site, a pip prefix of another distribution): name their folders in a .pth of the venv
site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$py" - > "$site/pjds-base-packages.pth" <<'PY'
import importlib.util, os
seen = []
for m in ("numpy", "scipy", "h5py", "xarray", "h5netcdf", "cupy", "cupyx", "mpi4py"):
    s = importlib.util.find_spec(m)
    if s and s.origin:
        d = os.path.dirname(os.path.dirname(s.origin))
        if d not in seen:
            seen.append(d)
print("\n".join(seen))
PY
copy="$venv/pkg-src"
rm -rf "$copy"
mkdir -p "$copy"
cp -r "$pkg/pyproject.toml" "$pkg/setup.py" "$pkg/README.md" "$pkg/pjds" "$copy/"
PJDS_SOURCE_DIR=$src PJDS_BUILD_DIR=$build "$venv/bin/python" -m pip install -q --no-build-isolation --no-index \
  --no-deps --no-cache-dir --force-reinstall "$copy"
"$venv/bin/python" -c "import pjds, sys; print('pjds', pjds.__version__, 'from', pjds.__file__)"
