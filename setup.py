"""Builds the pip package `octet` (pyproject.toml holds its metadata) with
octet's CMake: the extension _octet and the `octet` command line, which the
CMake component python_package installs into the wheel's octet/ and
octet/bin/; setuptools adds python/octet/*.py.

    pip install .                                   # or: python3 -m build --wheel --no-isolation

Environment:
  OCTET_BUILD_DIR   a configured build tree to package instead (its targets
                    are brought up to date first: nothing to do when built)
  OCTET_CMAKE_ARGS  extra options for the default build, e.g. -DOCTET_WITH_TORCH=ON

The default build, in build-wheel/: Release, without LibTorch and without the
test suite, through ccache where it is installed. setuptools' own files go
inside the build tree too (build/ is octet's usual build folder)."""

import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import ExecError, SetupError

SOURCE_DIR = os.path.dirname(os.path.abspath(__file__))
REUSED_BUILD_DIR = os.environ.get("OCTET_BUILD_DIR", "")
BUILD_DIR = os.path.abspath(REUSED_BUILD_DIR or os.path.join(SOURCE_DIR, "build-wheel"))
SETUPTOOLS_DIR = os.path.join(BUILD_DIR, "setuptools")


def project_version():
    """The one version: the root CMakeLists.txt's project(octet VERSION x.y.z)."""
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt")) as f:
        match = re.search(r"^project\(octet VERSION ([0-9.]+)", f.read(), re.MULTILINE)
    if not match:
        raise SetupError("octet: no project(octet VERSION ...) line in CMakeLists.txt")
    return match.group(1)


def run(command, failure):
    print("octet:", shlex.join(command), flush=True)
    environment = dict(os.environ, CCACHE_BASEDIR=SOURCE_DIR)
    if subprocess.run(command, env=environment).returncode != 0:
        raise ExecError(f"octet: {failure} (the output above says why)")


def require_program(name, package):
    if shutil.which(name) is None:
        raise SetupError(f"octet: building the package needs {name}: apt-get install {package}")


class CMakeBuild(build_ext):
    """Builds the CMake targets and installs the package's component into build_lib."""

    def build_extension(self, ext):
        require_program("cmake", "cmake")
        if REUSED_BUILD_DIR:
            if not os.path.exists(os.path.join(BUILD_DIR, "CMakeCache.txt")):
                raise SetupError(f"octet: OCTET_BUILD_DIR={REUSED_BUILD_DIR} is not a configured CMake build tree")
        else:
            self.configure()
        run(["cmake", "--build", BUILD_DIR, "--target", "octet_python", "octet"],
            f"building octet's Python module and command line in {BUILD_DIR} failed: where the target "
            "octet_python is unknown, the configuration said why the module is not built")
        package_root = os.path.abspath(self.build_lib)
        # build_lib outlives the build: octet-torch must not stay from a configuration that had it.
        shutil.rmtree(os.path.join(package_root, "octet", "bin"), ignore_errors=True)
        run(["cmake", "--install", BUILD_DIR, "--component", "python_package", "--prefix", package_root],
            f"installing the package's files from {BUILD_DIR} failed")
        self.check_installed(ext, package_root)

    def configure(self):
        require_program("ninja", "ninja-build")
        options = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DOCTET_WITH_TORCH=OFF", "-DBUILD_TESTING=OFF",
                   "-DOCTET_PYTHON_MODULE_REQUIRED=ON", f"-DPython_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):
            options += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
        options += shlex.split(os.environ.get("OCTET_CMAKE_ARGS", ""))
        run(["cmake", "-S", SOURCE_DIR, "-B", BUILD_DIR] + options,
            "configuring octet failed (with pybind11-dev, python3-dev and numpy missing it names them)")

    def check_installed(self, ext, package_root):
        extension = self.get_ext_fullpath(ext.name)
        if not os.path.exists(extension):
            found = sorted(os.listdir(os.path.dirname(extension)))
            raise SetupError(f"octet: {BUILD_DIR} holds no {os.path.basename(extension)} for this Python "
                             f"({sys.executable}; found {found}): configure it with -DPython_EXECUTABLE={sys.executable}")
        if not os.access(os.path.join(package_root, "octet", "bin", "octet"), os.X_OK):
            raise SetupError(f"octet: {BUILD_DIR} installed no octet/bin/octet")


os.makedirs(SETUPTOOLS_DIR, exist_ok=True)
setup(
    version=project_version(),
    ext_modules=[Extension("octet._octet", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": SETUPTOOLS_DIR}, "egg_info": {"egg_base": SETUPTOOLS_DIR}},
)
