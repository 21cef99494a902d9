"""ONNX Runtime as a peer, for the tests and by hand: runs tools/ort_run.mjs
(node + npm's onnxruntime-node, which tools/setup.sh test installs into
.ort/) on numpy arrays, and lists the op types of the graph ORT optimized.

    /usr/bin/python3 python/tests/ort_peer.py MODEL.onnx [--level all]

prints the optimized graph's node op types, one line each with its count
(a domain other than ONNX's own as a prefix, e.g. com.microsoft:QLinearConv).
Exit status 3 when ORT is not installed (the reason on standard error)."""

import collections
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

SOURCE_DIR = pathlib.Path(os.environ.get("OCTET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SCRIPT = SOURCE_DIR / "tools" / "ort_run.mjs"
ORT_DIR = pathlib.Path(os.environ.get("OCTET_ORT_DIR", SOURCE_DIR / ".ort"))


def missing():
    """Why ORT cannot run here (a sentence), or None."""
    if not shutil.which("node"):
        return "node is not installed (ONNX Runtime runs from npm's onnxruntime-node)"
    if not (ORT_DIR / "node_modules" / "onnxruntime-node" / "package.json").exists():
        return f"onnxruntime-node is not installed in {ORT_DIR} (tools/setup.sh test installs it with npm)"
    return None


def version():
    package = ORT_DIR / "node_modules" / "onnxruntime-node" / "package.json"
    return json.loads(package.read_text())["version"]


def _node(model, args):
    environment = dict(os.environ, OCTET_ORT_DIR=str(ORT_DIR))
    result = subprocess.run(["node", str(SCRIPT), str(model), *args], capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        raise RuntimeError(f"ort_run.mjs on {model} failed ({result.returncode}): {result.stderr.strip()}")
    return json.loads(result.stdout.splitlines()[-1])


def run(model, inputs, level="all"):
    """The model's outputs (a list of arrays) on `inputs`, a list of arrays in
    the model's input order or a dict by input name."""
    with tempfile.TemporaryDirectory(prefix="ort_peer_") as folder:
        folder = pathlib.Path(folder)
        items = inputs.items() if isinstance(inputs, dict) else enumerate(inputs)
        args = ["--out", str(folder / "out"), "--level", level]
        for key, array in items:
            file = folder / f"input_{len(args)}.npy"
            np.save(file, np.ascontiguousarray(array))
            args += ["--input", f"{key}={file}" if isinstance(inputs, dict) else str(file)]
        summary = _node(model, args)
        return [np.load(output["file"]) for output in summary["outputs"]]


def optimized_op_types(model, level="all"):
    """The op types of the nodes of the graph ORT runs after optimizing at
    `level` (disabled, basic, extended, all), in graph order; a domain other
    than ONNX's own prefixes its op type ("com.microsoft:QLinearConv")."""
    import onnx

    with tempfile.TemporaryDirectory(prefix="ort_peer_") as folder:
        saved = pathlib.Path(folder) / "optimized.onnx"
        _node(model, ["--optimized", str(saved), "--level", level])
        graph = onnx.load(str(saved)).graph
        return [f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type for n in graph.node]


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--level", default="all", choices=["disabled", "basic", "extended", "all"])
    args = parser.parse_args()
    why = missing()
    if why:
        print(f"ort_peer: {why}", file=sys.stderr)
        return 3
    counts = collections.Counter(optimized_op_types(args.model, args.level))
    print(f"ONNX Runtime {version()}, level {args.level}: {sum(counts.values())} nodes")
    for op, count in sorted(counts.items()):
        print(f"{count:5d}  {op}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
