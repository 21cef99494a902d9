"""`octet export`'s two targets of the zoo ResNet-20 in ONNX Runtime (CPU,
npm's onnxruntime-node through tools/ort_run.mjs; python/tests/ort_peer.py):

- the default export is the faithful one, byte for byte, and its structure
  (nodes, their inputs, outputs and attributes, initializers' names, types and
  shapes; not the values, which calibration sets) is the one octet wrote
  before the onnxruntime target existed (STRUCTURE_SHA256);
- ORT's optimized graph of `--target onnxruntime` has no float convolution
  left (every Conv is a QLinearConv, every residual Add a QLinearAdd) and no
  DequantizeLinear (nothing in float between its int8 kernels);
- ORT's top-1 on CIFAR-10 test images agrees with octet's int8 runtime
  (`octet predict` on the same normalised inputs) for each target, printed,
  above a floor;
- so too for the zoo MobileNetV2 quantized with the defaults, whose 16-bit
  residual streams --target onnxruntime writes at 8 bits.

usage: onnxruntime_targets.py OCTET_BINARY SOURCE_DIR CIFAR10_DIR [--images N] [--quantized FILE]
(N: the first N test images, default 1000; 10000 for the whole test set;
FILE: a quantized ResNet-20 to export, default two quantized here with
--method max --weight-rounding nearest --calib-samples 128, for speed, with
signed and with unsigned activations, and the MobileNetV2; the structure is
checked on the signed ResNet-20).
Exit 77 (skip) without CIFAR-10, numpy and python's onnx (Debian's
/usr/bin/python3 has both), node or onnxruntime-node, or an octet built
without the ONNX library."""

import argparse
import collections
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx

    MISSING = None
except ImportError as e:
    MISSING = f"{e} (Debian's python3-numpy and python3-onnx)"

SKIP = 77
# Of the default export's structure, for ResNet-20 quantized as below with signed
# activations: written by octet before --target existed (commit cc6aab3), then
# with the faithful Gemm's float bias (2026-12-06: ORT fused a QGemm that saturates).
STRUCTURE_SHA256 = "1a058e772af0dac6ba0596c4e695a95e0da53748999dc69302b02bed341180e6"
# Top-1 agreement with octet's int8 runtime, measured with onnxruntime-node
# 1.30.0 on an AVX2 CPU without VNNI (AMD EPYC), the first 1000 CIFAR-10 test
# images: faithful 0.999, onnxruntime 0.983. The onnxruntime target rounds
# where octet does not (interop/onnx_export.h), so its floor is lower.
AGREEMENT_FLOOR = {"faithful": 0.995, "onnxruntime": 0.97}
CIFAR_RECORD = 1 + 3 * 32 * 32


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: status {r.returncode}: {' '.join(map(str, args))}\n{r.stderr[-2000:]}")
    return r.stdout


def structure_sha256(model):
    """The graph without its numbers: what the export decides, not what calibration does."""

    def attribute(a):
        return [a.name, list(a.ints), a.i, round(a.f, 6)]

    def value(v):
        dims = v.type.tensor_type.shape.dim
        return [v.name, v.type.tensor_type.elem_type, [d.dim_param or d.dim_value for d in dims]]

    g = model.graph
    structure = {
        "ir": model.ir_version,
        "opsets": [[o.domain, o.version] for o in model.opset_import],
        "metadata": [p.key for p in model.metadata_props],
        "nodes": [[n.op_type, n.name, list(n.input), list(n.output), [attribute(a) for a in n.attribute]]
                  for n in g.node],
        "initializers": [[t.name, t.data_type, list(t.dims)] for t in g.initializer],
        "inputs": [value(v) for v in g.input],
        "outputs": [value(v) for v in g.output],
    }
    return hashlib.sha256(json.dumps(structure).encode()).hexdigest()


def cifar10_test(folder, count, mean, std):
    """The first `count` test images normalised as float32 N x 3 x 32 x 32, and their labels."""
    records = np.fromfile(pathlib.Path(folder) / "test_batch.bin", dtype=np.uint8).reshape(-1, CIFAR_RECORD)[:count]
    pixels = records[:, 1:].reshape(-1, 3, 32, 32).astype(np.float32) / np.float32(255)
    mean = np.asarray(mean, np.float32).reshape(1, 3, 1, 1)
    std = np.asarray(std, np.float32).reshape(1, 3, 1, 1)
    return np.ascontiguousarray((pixels - mean) / std, dtype=np.float32), records[:, 0].astype(np.int64)


def check_model(args, quantized, folder, structure, wide=False):
    """The export targets of one quantized model in ONNX Runtime; returns the failures.
    structure: check the default export's structure (the signed model's); wide:
    the model has wide activations, which --target onnxruntime writes at 8 bits."""
    import ort_peer

    failures = []
    folder.mkdir()
    exports = {}
    for target in ("default", "faithful", "onnxruntime"):
        exports[target] = folder / f"{target}.onnx"
        command = [args.octet, "export", "--quantized", quantized, "--onnx", exports[target]]
        r = subprocess.run([str(a) for a in command + ([] if target == "default" else ["--target", target])],
                           capture_output=True, text=True)
        if "built without it" in r.stderr:
            skip("this octet has no ONNX library: " + r.stderr.strip())
        if r.returncode != 0:
            sys.exit(f"FAIL: octet export --target {target}: {r.stderr.strip()}")
        if target == "onnxruntime" and wide and "activations written at 8 bits" not in r.stdout:
            failures.append(f"no wide activation written at 8 bits: {r.stdout.strip()}")

    default = exports["default"].read_bytes()
    if default != exports["faithful"].read_bytes():
        failures.append("the default export differs from --target faithful")
    if structure and structure_sha256(onnx.load_from_string(default)) != STRUCTURE_SHA256:
        failures.append(f"the default export's structure changed: sha256 "
                        f"{structure_sha256(onnx.load_from_string(default))}, was {STRUCTURE_SHA256}")

    exported = onnx.load(str(exports["onnxruntime"]))
    written = collections.Counter(n.op_type for n in exported.graph.node)
    ops = collections.Counter(ort_peer.optimized_op_types(exports["onnxruntime"]))
    print(f"  ONNX Runtime {ort_peer.version()}, optimized graph of --target onnxruntime: "
          + ", ".join(f"{count} {op}" for op, count in sorted(ops.items())))
    float_convs = {op: count for op, count in ops.items() if op.endswith("Conv") and "QLinear" not in op}
    if float_convs:
        failures.append(f"ONNX Runtime keeps float convolutions: {float_convs}")
    if ops["DequantizeLinear"]:  # nothing runs in float between its int8 kernels
        failures.append(f"ONNX Runtime keeps {ops['DequantizeLinear']} DequantizeLinear")
    for op, fused in (("Conv", "QLinearConv"), ("Add", "QLinearAdd")):
        if sum(count for name, count in ops.items() if name.endswith(fused)) != written[op]:
            failures.append(f"{written[op]} {op} written, ORT runs {fused} {ops}")

    metadata = {p.key: p.value for p in exported.metadata_props}
    images, labels = cifar10_test(args.cifar10_dir, args.images, json.loads(metadata["mean"]),
                                  json.loads(metadata["std"]))
    np.save(folder / "images.npy", images)
    np.save(folder / "labels.npy", labels)
    octet_run = json.loads(run(args.octet, "predict", "--quantized", quantized, "--eval-data",
                               folder / "images.npy", "--eval-labels", folder / "labels.npy", "--json", "-"))
    octet_predictions = np.asarray(octet_run["int8_predictions"])
    print(f"  {len(labels)} CIFAR-10 (JPEG copy) test images: octet int8 top-1 {octet_run['int8_top1']:.2f}%")
    for target in ("faithful", "onnxruntime"):
        (logits,) = ort_peer.run(exports[target], [images])
        predictions = logits.argmax(1)
        agreement = float(np.mean(predictions == octet_predictions))
        top1 = 100.0 * float(np.mean(predictions == labels))
        print(f"  ONNX Runtime, --target {target}: top-1 {top1:.2f}%, agreement with octet int8 "
              f"{100 * agreement:.2f}% (floor {100 * AGREEMENT_FLOOR[target]:.1f}%)")
        if agreement < AGREEMENT_FLOOR[target]:
            failures.append(f"--target {target}: agreement {agreement:.4f} < {AGREEMENT_FLOOR[target]}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("octet")
    parser.add_argument("source_dir", type=pathlib.Path)
    parser.add_argument("cifar10_dir", type=pathlib.Path)
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--quantized", type=pathlib.Path)
    args = parser.parse_args()
    if not (args.cifar10_dir / "test_batch.bin").exists():
        skip(f"CIFAR-10 binary files not found in '{args.cifar10_dir}'")
    if MISSING:
        skip(MISSING)
    sys.path.insert(0, str(args.source_dir / "python" / "tests"))
    import ort_peer

    if ort_peer.missing():
        skip(ort_peer.missing())

    failures = []
    with tempfile.TemporaryDirectory(prefix="octet-ort-targets-") as folder:
        folder = pathlib.Path(folder)
        models = {"given": args.quantized} if args.quantized else {}
        for activations in () if args.quantized else ("signed", "unsigned"):
            models[activations] = folder / f"resnet20.{activations}.int8.octet"
            run(args.octet, "quantize", "--checkpoint", args.source_dir / "models" / "zoo" / "resnet20_cifar10.octet",
                "--data", args.cifar10_dir, "--method", "max", "--weight-rounding", "nearest", "--calib-samples", 128,
                "--activations", activations, "-o", models[activations])
        if not args.quantized:  # the zoo MobileNetV2 with the defaults: 16-bit residual streams
            imported = folder / "mobilenet_v2.octet"
            run(args.octet, "import", args.source_dir / "models" / "zoo" / "mobilenet_v2_cifar10.onnx", "--dataset",
                "cifar10", "-o", imported)
            models["wide"] = folder / "mobilenet_v2.int8.octet"
            run(args.octet, "quantize", "--checkpoint", imported, "--data", args.cifar10_dir, "--calib-samples", 128,
                "-o", models["wide"])
        for name, quantized in models.items():
            print({"given": f"{quantized}:", "wide": "MobileNetV2 (zoo), the defaults (wide activations):"}.get(
                name, f"ResNet-20, {name} activations:"))
            failures += check_model(args, quantized, folder / name, structure=name == "signed", wide=name == "wide")
    for failure in failures:
        print("FAIL: " + failure)
    if failures:
        sys.exit(1)
    print("OK: the default export unchanged; --target onnxruntime runs as QLinearConv/QLinearAdd in ONNX Runtime")


if __name__ == "__main__":
    main()
