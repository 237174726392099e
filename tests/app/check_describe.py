#!/usr/bin/python3
"""Self-describing result files (issue 29, Deliver 3; docs/formats.md "Self-description"):
xarray.open_dataset(file, engine="h5netcdf") names every dimension (no phony_dim_N), the energies carry units
and descriptions, and the provenance attributes are present and right.

  solve       quickstart with eigenvectors: eigenpair, row, cycle (+ observables: phonons, distance); units 't';
              created_utc (parsable, within the run), program_commit, host, config_file_absolute (absolute, the
              config); with PJDS_DESCRIBE_COORD_MAX below N the row dimension has no values (netCDF's dimension
              without a variable) and the file is not larger by 8 N bytes
  import      an exported matrix solved from its file: matrix_file_absolute, matrix_file_bytes and
              matrix_file_crc32 equal the file's own size and zlib CRC-32; units 'matrix units'
  dos_spec    dos (dos_energy, moment) and spectral (omega, spectral_part, spectral_step) files
  sweep       a 2-key sweep file: the sweep group's point and eigenpair dimensions; a point group (an external
              link to the point's own file) still opens

usage: check_describe.py CASE     (env PJDS_BIN, PJDS_SRC).  77 = skipped: no xarray/h5netcdf."""
import datetime
import os
import subprocess
import sys
import tempfile
import zlib

try:
    import h5py
    import numpy as np
    import xarray as xr
    import h5netcdf  # noqa: F401
except ImportError as e:
    print(f"skipped: {e} (python3-xarray python3-h5netcdf, installed by tools/setup-deps.sh)")
    sys.exit(77)

BIN, SRC = os.environ["PJDS_BIN"], os.environ["PJDS_SRC"]
FAIL = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAIL.append(what)


def run(args, env=None):
    e = dict(os.environ, **(env or {}))
    r = subprocess.run([BIN] + args + ["--quiet", "--overwrite", "--set", "spmv.backend=cpu"], capture_output=True,
                       text=True, env=e)
    check(r.returncode == 0, f"{args[0]} exit 0 ({r.stderr.strip()[-300:]})")
    return r


def named(ds, want, where):
    dims = dict(ds.sizes)
    check(not any(k.startswith("phony_dim") for k in dims) and all(w in dims for w in want),
          f"{where}: dimensions {dims} include {want}, no phony_dim")


def case_solve(d):
    h5 = os.path.join(d, "q.h5")
    ini = os.path.join(SRC, "configs", "quickstart.ini")
    t0 = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    run(["solve", ini, "--set", "output.eigenvectors=true", "--set", f"output.file={h5}"])
    ds = xr.open_dataset(h5, engine="h5netcdf")
    named(ds, ["eigenpair", "row", "cycle"], "solve root")
    check(ds["eigenvectors"].dims == ("eigenpair", "row"), f"eigenvectors dims {ds['eigenvectors'].dims}")
    check(ds["eigenvalues"].attrs.get("units") == "t" and "description" in ds["eigenvalues"].attrs,
          f"eigenvalues units/description {dict(ds['eigenvalues'].attrs)}")
    ob = xr.open_dataset(h5, engine="h5netcdf", group="observables")
    named(ob, ["eigenpair", "phonons", "distance"], "observables")
    a = ds.attrs
    created = datetime.datetime.strptime(a.get("created_utc", ""), "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc)
    now = datetime.datetime.now(datetime.timezone.utc)
    check(t0 - datetime.timedelta(seconds=1) <= created <= now, f"created_utc {a.get('created_utc')} within the run")
    commit = subprocess.run(["git", "-C", SRC, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    c = a.get("program_commit", "")
    # the build records the checkout's commit when it builds (cmake/pl_commit.cmake), "-dirty" with
    # tracked changes; the suite runs right after the build, so it is the checkout's HEAD now
    head = commit.stdout.strip() if commit.returncode == 0 else ""
    base = c[:-len("-dirty")] if c.endswith("-dirty") else c
    check(c == "unknown" if not head else base == head,
          f"program_commit {c!r} (checkout now at {head or 'none'})")
    check(a.get("host") == os.uname().nodename.split(".")[0] or a.get("host") == os.uname().nodename,
          f"host {a.get('host')!r}")
    check(a.get("config_file_absolute") == os.path.realpath(ini), f"config_file_absolute {a.get('config_file_absolute')}")
    ds.close()
    # a dimension without values where N exceeds the coordinate limit
    h5b = os.path.join(d, "q2.h5")
    run(["solve", ini, "--set", "output.eigenvectors=true", "--set", f"output.file={h5b}"],
        env={"PJDS_DESCRIBE_COORD_MAX": "100"})
    ds = xr.open_dataset(h5b, engine="h5netcdf")
    n = ds.sizes.get("row", 0)
    check(n == 7560 and "row" not in ds.coords, f"row: a dimension of {n} without values (coords {list(ds.coords)})")
    check("eigenpair" in ds.coords, "eigenpair keeps its values (a coordinate)")
    sa, sb = os.path.getsize(h5), os.path.getsize(h5b)
    check(sa - sb >= 8 * 7560 - 4096, f"the file without row values is smaller by about 8 N bytes ({sa} - {sb})")
    ds.close()


def case_import(d):
    m, h5 = os.path.join(d, "m.h5"), os.path.join(d, "i.h5")
    r = subprocess.run([BIN, "export", os.path.join(SRC, "configs", "quickstart.ini"), m, "--set",
                        "model.max_phonons=3", "--quiet"], capture_output=True, text=True)
    check(r.returncode == 0, f"export exit 0 ({r.stderr.strip()[-200:]})")
    rel = os.path.relpath(m)
    run(["solve", os.path.join(SRC, "configs", "import.ini"), "--set", f"matrix.file={rel}", "--set",
         f"output.file={h5}"])
    with open(m, "rb") as f:
        data = f.read()
    with h5py.File(h5, "r") as f:
        a = dict(f.attrs)
        u = f["eigenvalues"].attrs.get("units")
    check(a.get("matrix_file_absolute") == os.path.realpath(m), f"matrix_file_absolute {a.get('matrix_file_absolute')}"
          f" (given as {rel})")
    check(int(a.get("matrix_file_bytes", -1)) == len(data), f"matrix_file_bytes {a.get('matrix_file_bytes')}")
    check(a.get("matrix_file_crc32") == "%08x" % (zlib.crc32(data) & 0xffffffff),
          f"matrix_file_crc32 {a.get('matrix_file_crc32')} = zlib's {zlib.crc32(data) & 0xffffffff:08x}")
    check(u == "matrix units", f"an imported matrix's energies in 'matrix units' ({u!r})")


def case_dos_spec(d):
    ini = os.path.join(SRC, "configs", "quickstart.ini")
    h5 = os.path.join(d, "d.h5")
    run(["dos", ini, "--set", f"output.file={h5}"])
    ds = xr.open_dataset(h5, engine="h5netcdf", group="dos")
    named(ds, ["dos_energy", "moment"], "dos")
    check(ds["density"].attrs.get("units") == "1/(t)", f"density units {ds['density'].attrs.get('units')!r}")
    root = xr.open_dataset(h5, engine="h5netcdf")
    check("created_utc" in root.attrs and "program_commit" in root.attrs, "dos file: provenance attributes")
    h5s = os.path.join(d, "s.h5")
    run(["spectral", ini, "--set", f"output.file={h5s}"])
    sp = xr.open_dataset(h5s, engine="h5netcdf", group="spectral")
    named(sp, ["omega", "spectral_part", "spectral_step"], "spectral")


def case_sweep(d):
    h5 = os.path.join(d, "sw.h5")
    run(["solve", os.path.join(SRC, "tests", "sweep", "hh_sweep.ini"), "--set", f"output.file={h5}"])
    ds = xr.open_dataset(h5, engine="h5netcdf", group="sweep")
    named(ds, ["point", "eigenpair"], "sweep group")
    check(ds["eigenvalues"].dims == ("point", "eigenpair") and ds["coupling"].dims == ("point",),
          f"sweep dims {ds['eigenvalues'].dims}, {ds['coupling'].dims}")
    root = xr.open_dataset(h5, engine="h5netcdf")
    check("created_utc" in root.attrs, "sweep file: created_utc")
    cfg = os.path.realpath(os.path.join(SRC, "tests", "sweep", "hh_sweep.ini"))
    check(root.attrs.get("config_file_absolute") == cfg,
          f"sweep file: config_file_absolute {root.attrs.get('config_file_absolute')!r}, expected {cfg}")
    g = xr.open_dataset(h5, engine="h5netcdf", group="points/0004", phony_dims="sort")
    ev = np.asarray(g["eigenvalues"])
    check(ev.shape == (4,) and np.allclose(ev, np.asarray(ds["eigenvalues"])[4]),
          "a point group (external link) opens and holds the point's eigenvalues")


with tempfile.TemporaryDirectory() as d:
    os.chdir(d)
    {"solve": case_solve, "import": case_import, "dos_spec": case_dos_spec, "sweep": case_sweep}[sys.argv[1]](d)
print("FAILED: " + "; ".join(FAIL) if FAIL else "all checks passed")
sys.exit(1 if FAIL else 0)
