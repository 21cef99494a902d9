#!/usr/bin/python3
"""Runs an ONNX model that `octet export --onnx` wrote on a test set and
compares it with octet's int8 runtime on the same quantized model: top-1 of
each, how often their predictions agree, and how far their logits differ.

    PYTHONPATH=build/python /usr/bin/python3 python/tools/onnx_agreement.py r20.int8.octet r20.int8.onnx \\
        --data .data/cifar-10-batches-bin [--limit N] [--json FILE]

The ONNX model runs on onnxruntime where it is installed (the GPU machine),
else on npm's onnxruntime-node where tools/setup.sh test installed it into .ort/
(python/tests/ort_peer.py), else on onnx's ReferenceEvaluator (onnx 1.13 or later), else on the operator
evaluator of octet's tests (python/tests/qdq_reference.py)."""

import argparse
import json
import pathlib
import sys

import numpy as np

import octet


def onnx_runner(path, level):
    """(name of the engine, function images -> float logits)."""
    try:
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path), providers=onnxruntime.get_available_providers())
        return f"onnxruntime {onnxruntime.__version__} ({session.get_providers()[0]})", lambda x: session.run(
            ["logits"], {"input": x}
        )[0]
    except ImportError:
        pass
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
    import ort_peer

    if not ort_peer.missing():
        return f"onnxruntime-node {ort_peer.version()} (CPU, graph optimization {level})", lambda x: ort_peer.run(
            path, {"input": x}, level=level
        )[0]
    import onnx

    model = onnx.load(str(path))
    try:
        from onnx.reference import ReferenceEvaluator

        evaluator = ReferenceEvaluator(model)
        return f"onnx {onnx.__version__} ReferenceEvaluator", lambda x: evaluator.run(["logits"], {"input": x})[0]
    except ImportError:
        import qdq_reference

        return "octet's test evaluator (qdq_reference)", lambda x: qdq_reference.run(model, {"input": x})["logits"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("quantized", help="quantized model (.octet)")
    parser.add_argument("onnx", help="its ONNX export")
    parser.add_argument("--data", help="dataset folder (default: the dataset's Debian folder)")
    parser.add_argument("--limit", type=int, default=0, help="first N test images (0: all)")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--json", help="write the results as JSON to this file")
    parser.add_argument(
        "--level",
        default="all",
        choices=["disabled", "basic", "extended", "all"],
        help="onnxruntime-node's graph optimization level (default all, ORT's own default)",
    )
    args = parser.parse_args()

    model = octet.load_quantized(args.quantized)
    images, labels = octet.load_dataset(model.dataset, args.data, "test")
    if args.limit:
        images, labels = images[: args.limit], labels[: args.limit]
    engine, run_onnx = onnx_runner(args.onnx, args.level)
    onnx_logits, octet_logits = [], []
    for first in range(0, len(labels), args.batch):
        x = octet.normalize(images[first : first + args.batch], model.mean, model.std)
        onnx_logits.append(run_onnx(x))
        octet_logits.append(model.predict(x, dequantize=True))
    onnx_logits, octet_logits = np.concatenate(onnx_logits), np.concatenate(octet_logits)
    difference = np.abs(onnx_logits - octet_logits)
    results = {
        "engine": engine,
        "images": int(len(labels)),
        "onnx_top1": octet.top1(onnx_logits, labels),
        "octet_int8_top1": octet.top1(octet_logits, labels),
        "agreement": 100.0 * float(np.mean(onnx_logits.argmax(1) == octet_logits.argmax(1))),
        "logits_differing": 100.0 * float(np.mean(np.any(difference > 1e-5 * np.abs(octet_logits).max(), axis=1))),
        "max_logit_difference": float(difference.max()),
        "mean_logit_difference": float(difference.mean()),
        "largest_logit": float(np.abs(octet_logits).max()),
    }
    for key, value in results.items():
        print(f"{key}: {value:.6g}" if isinstance(value, float) else f"{key}: {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
