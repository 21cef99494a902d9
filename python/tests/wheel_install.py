"""The pip package end to end, without compiling octet again (ctest
python_wheel_install): builds a wheel from a built tree (OCTET_BUILD_DIR)
with the README's `python3 -m build --wheel --no-isolation`, installs it into
a fresh venv in a temporary folder, and there, away from the source tree,
runs `octet --version` and the example notebook's code cells
(python/examples/quantize_lenet.ipynb, its own assertions included). Checks
that the command line, octet.__version__ and the wheel agree on the version,
that octet is imported from the venv and that each int8 model agrees with
the float one on over 90% of the test images.

    python3 python/tests/wheel_install.py SOURCE_DIR BUILD_DIR

Skips (status 77, the reason on stdout) where this Python lacks venv, pip,
setuptools, wheel or build."""

import importlib.util
import json
import os
import re
import site
import subprocess
import sys
import tempfile

NOTEBOOK = os.path.join("python", "examples", "quantize_lenet.ipynb")
NEEDED = {"ensurepip": "python3-venv", "pip": "python3-pip", "setuptools": "python3-setuptools", "wheel": "python3-wheel",
          "build": "python3-build"}


def run_notebook_cells(notebook):
    """Inside the venv: executes the notebook's code cells in one namespace (IPython's %
    lines left out, plots drawn nowhere) and prints what the driver checks as JSON."""
    os.environ["MPLBACKEND"] = "Agg"
    with open(notebook) as f:
        cells = [cell for cell in json.load(f)["cells"] if cell["cell_type"] == "code"]
    namespace = {"__name__": "__main__"}
    for cell in cells:
        source = "".join(line for line in cell["source"] if not line.startswith("%"))
        exec(compile(source, notebook, "exec"), namespace)
    octet, reports = namespace["octet"], namespace["reports"]
    agreements = {label: report["agreement"] for label, report in reports.items()}
    print(json.dumps({"version": octet.__version__, "file": octet.__file__, "agreement": agreements}))


def see_enclosing_venv(venv_python):
    """Where this Python is itself a venv's (pip PyTorch machines: numpy and
    torch are installed there), the new venv's --system-site-packages reach
    only the base interpreter's: a .pth file adds this venv's packages, so that
    pip finds the wheel's dependencies without an index."""
    if sys.prefix == sys.base_prefix:
        return
    purelib = subprocess.run([venv_python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    with open(os.path.join(purelib, "enclosing_venv.pth"), "w") as f:
        f.write("\n".join(site.getsitepackages()) + "\n")


def check(source_dir, build_dir):
    missing = [package for module, package in NEEDED.items() if importlib.util.find_spec(module) is None]
    if missing:
        print(f"SKIP: {sys.executable} lacks {' '.join(missing)} (apt-get install them); the wheel was not built")
        return 77
    with tempfile.TemporaryDirectory(prefix="octet-wheel-") as folder:
        def run(*command, **options):
            print("+", " ".join(command), flush=True)
            return subprocess.run(command, check=True, cwd=folder, **options)

        build_environment = dict(os.environ, OCTET_BUILD_DIR=build_dir)
        run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", "dist", source_dir,
            env=build_environment)
        (wheel,) = os.listdir(os.path.join(folder, "dist"))
        wheel_version = wheel.split("-")[1]
        run(sys.executable, "-m", "venv", "--system-site-packages", "venv")
        bin_dir = os.path.join(folder, "venv", "bin")
        see_enclosing_venv(os.path.join(bin_dir, "python"))
        run(os.path.join(bin_dir, "python"), "-m", "pip", "install", "--no-index", "--quiet", os.path.join("dist", wheel))
        # The venv's `octet`, not the build tree's: only the entry point names it.
        version_line = run(os.path.join(bin_dir, "octet"), "--version", stdout=subprocess.PIPE, text=True).stdout
        cli_version = re.fullmatch(r"octet (\S+)\n", version_line)
        notebook_environment = dict(os.environ, OCTET_SOURCE_DIR=source_dir)
        notebook_environment.pop("PYTHONPATH", None)
        result = run(os.path.join(bin_dir, "python"), os.path.abspath(__file__), "--notebook",
                     os.path.join(source_dir, NOTEBOOK), env=notebook_environment, stdout=subprocess.PIPE, text=True)
        print(result.stdout, end="")
        summary = json.loads(result.stdout.splitlines()[-1])
        print(f"wheel {wheel}, `octet --version`: {version_line.strip()}, octet.__version__ {summary['version']}")
        assert cli_version and cli_version.group(1) == summary["version"] == wheel_version, (version_line, summary)
        assert summary["file"].startswith(os.path.join(folder, "venv")), f"octet imported from {summary['file']}"
        # Chance is 10%; the notebook's entropy model agrees on about 94%, its max model on 99.5%.
        for label, agreement in summary["agreement"].items():
            assert agreement > 90.0, f"{label}: int8 agrees with float on only {agreement:.2f}% of the test images"
    print("the wheel installs and runs the notebook from a venv")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--notebook":
        run_notebook_cells(sys.argv[2])
    else:
        sys.exit(check(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])))
