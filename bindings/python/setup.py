"""Packages dpmu/ with the extension module dpmu._dpmu that the CMake build compiled.

The module is built by CMake (bindings/CMakeLists.txt, target dpmu_python, when pybind11 is found)
into <build>/bindings/python/. This script copies it into the package, so that

    bash scripts/build.sh
    /usr/bin/python3 -m pip install --no-build-isolation bindings/python

works offline. <build> is $DPMU_BUILD_DIR, else the repository's build/ directory.
"""

import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def find_module():
    build = os.environ.get("DPMU_BUILD_DIR") or os.path.join(HERE, "..", "..", "build")
    found = sorted(glob.glob(os.path.join(build, "bindings", "python", "_dpmu*.so")))
    if not found:
        raise SystemExit(
            f"dpmu: no extension module _dpmu*.so in {os.path.join(build, 'bindings', 'python')}: build dpmu first "
            "(bash scripts/build.sh; needs pybind11-dev), or set DPMU_BUILD_DIR to its CMake build directory")
    return found[-1]


class BuildWithModule(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "dpmu")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(find_module(), target)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(packages=["dpmu"], cmdclass={"build_py": BuildWithModule}, distclass=BinaryDistribution)
