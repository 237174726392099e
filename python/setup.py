"""setup.py -- besides pyproject.toml, one step: at install time, record the
checkout this package comes from and its build folder ($PJDS_BUILD_DIR, as
tools/build.sh takes it; relative to the current folder or the checkout) in
pjds/_install_paths.py, so that the installed
package finds the library built there (pjds/_lib.py, candidates())."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# the checkout: python/.. , or $PJDS_SOURCE_DIR for a copy of python/ (the ctest install)
SOURCE = os.environ.get("PJDS_SOURCE_DIR") or os.path.dirname(HERE)


def _build_dirs(source):
    env = os.environ.get("PJDS_BUILD_DIR")
    if not env:
        return []
    for d in (env, os.path.join(source or "", env)):
        if os.path.isdir(d):
            return [os.path.abspath(d)]
    return []


class BuildPyPaths(build_py):
    def run(self):
        super().run()
        source = SOURCE if os.path.exists(os.path.join(SOURCE, "include", "pjds", "pjds.h")) else None
        target = os.path.join(self.build_lib, "pjds", "_install_paths.py")
        with open(target, "w") as f:
            f.write("# written by setup.py at install time\n")
            f.write(f"SOURCE_DIR = {source!r}\nBUILD_DIRS = {_build_dirs(source)!r}\n")


setup(cmdclass={"build_py": BuildPyPaths})
