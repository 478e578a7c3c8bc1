"""Build of the Python package dpmu: CMake compiles the extension module dpmu._dpmu from this repository.

From a checkout (nothing else built, nothing downloaded; needs cmake >= 3.25, a C++20 compiler, the
Python headers, pybind11 and the core's header-only libraries: Eigen, Boost.Math, Random123,
nlohmann-json; scripts/setup-deps.sh installs them):

    /usr/bin/python3 -m pip wheel --no-build-isolation --no-deps bindings/python -w dist
    /usr/bin/python3 -m venv --system-site-packages venv
    venv/bin/pip install --no-deps --no-index dist/dpmu-*.whl

The build runs CMake on the repository (the CMakeLists.txt two directories up) with
-DDPMU_PACKAGE_ONLY=ON -DCMAKE_BUILD_TYPE=Release and builds the target dpmu_python only: the core, the
ledger, the release API and the module, linked statically (no oneTBB, HDF5, yaml-cpp, fmt, libcsv or
CLI11), so the module needs only the C++ runtime. Environment variables:

    DPMU_WHEEL_BUILD_DIR  where setuptools and CMake build (default: bindings/python/build, ignored by
                          git); give a directory of its own to each concurrent build of one checkout
    DPMU_CMAKE_ARGS       more CMake arguments (split as by a shell), e.g. "-DDPMU_WERROR=ON"
    DPMU_BUILD_DIR        a CMake build directory of dpmu that already built the module
                          (<dir>/bindings/python/_dpmu*.so): copy that module instead of building one
                          (ctest bindings.python_test does this)

ccache is used when it is on the PATH (as scripts/build.sh does), Ninja when it is installed.
"""

import glob
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.normpath(os.path.join(HERE, "..", ".."))
# setuptools' build directory (build/lib, build/temp with the CMake tree, build/bdist) and the
# egg-info, all in one place: a concurrent build of the same checkout sets DPMU_WHEEL_BUILD_DIR.
BUILD_BASE = os.path.abspath(os.environ.get("DPMU_WHEEL_BUILD_DIR") or os.path.join(HERE, "build"))


def fail(message: str):
    raise SystemExit(f"dpmu: {message}")


def module_in(build_dir: str) -> str:
    """The module that CMake built in build_dir (this interpreter's suffix when there are several)."""
    found = sorted(glob.glob(os.path.join(build_dir, "bindings", "python", "_dpmu*.so")))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    exact = [f for f in found if f.endswith(suffix)]
    if not found:
        return ""
    return (exact or found)[-1]


def cmake_arguments(build_dir: str) -> list:
    args = ["-DDPMU_PACKAGE_ONLY=ON", "-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={sys.executable}"]
    fresh = not os.path.exists(os.path.join(build_dir, "CMakeCache.txt"))
    if fresh and not os.environ.get("CMAKE_GENERATOR") and shutil.which("ninja"):
        args += ["-G", "Ninja"]
    if fresh and not os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER") and shutil.which("ccache"):
        args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    try:  # pybind11's CMake files where pip's pybind11 keeps them (Debian's are found by CMake as well)
        import pybind11
        args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
    except (ImportError, AttributeError):
        pass
    return args + shlex.split(os.environ.get("DPMU_CMAKE_ARGS", ""))


def run(command: list):
    print("dpmu:", " ".join(shlex.quote(c) for c in command), file=sys.stderr, flush=True)
    try:
        subprocess.run(command, check=True)
    except FileNotFoundError:
        fail(f"{command[0]} was not found: building the wheel needs CMake >= 3.25 (apt-get install cmake)")
    except subprocess.CalledProcessError as e:
        fail(f"{' '.join(command[:2])}... failed (exit status {e.returncode}); see CMake's output above")


class CMakeExtension(Extension):
    """An extension module that CMake builds (no sources for setuptools)."""

    def __init__(self, name: str):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Runs CMake on the repository and copies the module it built into the package."""

    def build_extension(self, ext):
        target = os.path.abspath(self.get_ext_fullpath(ext.name))
        prebuilt = os.environ.get("DPMU_BUILD_DIR")
        if prebuilt:
            module = module_in(prebuilt)
            if not module:
                fail(f"DPMU_BUILD_DIR is set but {os.path.join(prebuilt, 'bindings', 'python')} has no _dpmu*.so: "
                     "build dpmu there first (bash scripts/build.sh; needs pybind11-dev), or unset DPMU_BUILD_DIR "
                     "to let this build run CMake itself")
        else:
            module = self.cmake_build()
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(module, target)
        os.chmod(target, 0o755)

    def cmake_build(self) -> str:
        cmakelists = os.path.join(REPOSITORY, "CMakeLists.txt")
        if not os.path.isfile(cmakelists) or "DPMU_PACKAGE_ONLY" not in open(cmakelists, encoding="utf-8").read():
            fail(f"no dpmu CMakeLists.txt in {REPOSITORY}: the package is built from a dpmu checkout "
                 "(pip wheel --no-build-isolation bindings/python, which builds in place), or set DPMU_BUILD_DIR "
                 "to a CMake build directory of dpmu with the module built")
        build_dir = os.path.join(os.path.abspath(self.build_temp), "cmake")
        os.makedirs(build_dir, exist_ok=True)
        run(["cmake", "-S", REPOSITORY, "-B", build_dir] + cmake_arguments(build_dir))
        parallel = [] if os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") else \
            ["--parallel", str(self.parallel or os.cpu_count() or 1)]
        run(["cmake", "--build", build_dir, "--target", "dpmu_python"] + parallel)
        module = module_in(build_dir)
        if not module:
            fail(f"CMake did not build the module in {os.path.join(build_dir, 'bindings', 'python')}")
        return module

os.makedirs(BUILD_BASE, exist_ok=True)  # egg_info needs its egg_base to exist
setup(
    packages=["dpmu"],
    ext_modules=[CMakeExtension("dpmu._dpmu")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
    zip_safe=False,
)
