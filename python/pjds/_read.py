"""_read.py -- pjds.read: a result file of pjds-lanczos (solve, spectral, dos,
a sweep; docs/formats.md) as a dict of NumPy arrays with the attributes, or as
an xarray.Dataset through h5netcdf (the files carry dimension scales)."""
import os

import numpy as np


class Result(dict):
    """The datasets of a result file by path ("eigenvalues",
    "convergence/ritz_values", "observables/norm", "points/0003/eigenvalues",
    ...) as NumPy arrays; .attrs: the root group's attributes, and
    .group_attrs: each other group's attributes by its path."""

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.attrs = {}
        self.group_attrs = {}

    def __repr__(self):
        return f"<pjds.Result {self.path}: {', '.join(self)}>"


def _value(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.generic):
        return v.item()
    return v


def _is_scale(ds):
    cls = ds.attrs.get("CLASS")
    return (cls.decode() if isinstance(cls, bytes) else cls) == "DIMENSION_SCALE"


def _walk(group, prefix, out, scales):
    for name in group:  # item access follows the external links of a sweep's unfinished file
        obj = group[name]
        path = prefix + name
        if hasattr(obj, "keys"):
            out.group_attrs[path] = {k: _value(v) for k, v in obj.attrs.items()}
            _walk(obj, path + "/", out, scales)
        elif scales or not _is_scale(obj):
            out[path] = obj[()]


def read(file, group=None, xarray=False, scales=False):
    """The result file as a pjds.Result (a dict of NumPy arrays by dataset path,
    with .attrs and .group_attrs), or with xarray=True as an xarray.Dataset
    (xarray.open_dataset(file, engine="h5netcdf", group=group), loaded into
    memory and the file closed).  group: only that group ("observables", "dos",
    "points/0002", ...).  scales: also the dimension-scale datasets (eigenpair,
    row, cycle, ...: the index values 0 .. n - 1).  Complex datasets (a
    nonsymmetric problem) come as complex128."""
    if not os.path.exists(file):
        raise FileNotFoundError(f"pjds.read: {file}: no such file")
    if xarray:
        import xarray as xr
        with xr.open_dataset(file, engine="h5netcdf", group=group) as ds:
            return ds.load()
    import h5py
    try:
        f = h5py.File(file, "r")
    except OSError as e:
        raise ValueError(f"pjds.read: {file}: not an HDF5 file ({e})") from None
    with f:
        g = f[group] if group else f
        out = Result(file)
        out.attrs = {k: _value(v) for k, v in g.attrs.items()}
        _walk(g, "", out, scales)
    return out
