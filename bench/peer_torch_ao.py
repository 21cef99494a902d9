#!/usr/bin/python3
"""PyTorch's own int8 on the same network as octet, as the peer to compare with.

Reads an octet checkpoint (safetensors, read with numpy), builds the same
network as a torch.nn.Module from the graph in its metadata, quantizes it with
torch.ao's eager-mode post-training recipe (fuse conv+bn(+relu), QuantStub /
DeQuantStub, FloatFunctional adds, the engine's default qconfig, calibration on
the same 1024 evenly spaced training images octet calibrates on, convert), then
prints its int8 and float top-1, their agreement and its speed (ms per batch,
images/s, float32 against int8) next to octet's, which it gets by running
`octet quantize`, `octet eval --json` and `octet bench infer --json`. Both
tools' quantize times are measured in the same run: torch.ao's from fusing to
convert (its calibration pass included, reading the dataset not), octet's as
the wall time of `octet quantize` (loading included) with its phase breakdown.
`--quantize-only` measures just those.

Needs the Debian torch (1.13, engine onednn; fbgemm and x86 are not built) and
numpy, nothing else. Run with /usr/bin/python3:

  bench/peer_torch_ao.py --checkpoint models/zoo/lenet5_fmnist.octet --octet build/tools/octet
"""

import argparse
import gzip
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.ao import quantization as tq

DEFAULT_DATA = {"fashion-mnist": "/usr/share/datasets/fashion-mnist", "mnist": None, "cifar10": None}
CALIBRATION_SAMPLES = 1024  # octet's default (octet quantize --calib-samples)


# ------------------------------------------------------------- checkpoint

def read_safetensors(path):
    """Tensors (float32 numpy arrays) and metadata of a safetensors file."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        sys.exit(f"{path}: not a safetensors file (too short)")
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len])
    data = blob[8 + header_len:]
    dtypes = {"F32": np.float32, "I32": np.int32, "I8": np.int8, "F64": np.float64, "I64": np.int64, "U8": np.uint8}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        if info["dtype"] not in dtypes:
            sys.exit(f"{path}: tensor {name} has dtype {info['dtype']}, which this reader does not know")
        array = np.frombuffer(data[begin:end], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
        tensors[name] = array.copy()
    return tensors, header.get("__metadata__", {})


def read_checkpoint(path):
    tensors, meta = read_safetensors(path)
    if meta.get("format") != "octet-checkpoint":
        sys.exit(f"{path}: not an octet checkpoint (format {meta.get('format')!r})")
    return {
        "tensors": tensors,
        "graph": json.loads(meta["graph"]),
        "mean": json.loads(meta["mean"]),
        "std": json.loads(meta["std"]),
        "dataset": meta["dataset"],
        "model": meta.get("model", "?"),
    }


# ------------------------------------------------------------------ datasets

def read_cifar10(data_dir, split):
    files = ["test_batch.bin"] if split == "test" else [f"data_batch_{i}.bin" for i in range(1, 6)]
    images, labels = [], []
    for name in files:
        raw = np.fromfile(os.path.join(data_dir, name), dtype=np.uint8)
        if raw.size % 3073:
            sys.exit(f"{name}: size {raw.size} is not a multiple of 3073-byte records")
        records = raw.reshape(-1, 3073)
        labels.append(records[:, 0].astype(np.int64))
        images.append(records[:, 1:].reshape(-1, 3, 32, 32))
    return np.concatenate(images), np.concatenate(labels)


def read_idx(path):
    """An IDX file, gzip-compressed or not (the .gz is tried when the plain file is missing)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if raw[:2] != b"\x00\x00" or raw[2] != 0x08:
        sys.exit(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * raw[3], raw[4:4 + 4 * raw[3]])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * raw[3]).reshape(dims)


def read_idx_dataset(data_dir, split):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte"))
    return images[:, None, :, :], labels.astype(np.int64)


def read_dataset(name, data_dir, split):
    return read_cifar10(data_dir, split) if name == "cifar10" else read_idx_dataset(data_dir, split)


def normalize(pixels, mean, std):
    """(pixel / 255 - mean[c]) / std[c] in float32, as octet's normalized_images."""
    x = pixels.astype(np.float32) / np.float32(255)
    mean = np.asarray(mean, dtype=np.float32).reshape(1, -1, 1, 1)
    std = np.asarray(std, dtype=np.float32).reshape(1, -1, 1, 1)
    return torch.from_numpy(np.ascontiguousarray((x - mean) / std))


# --------------------------------------------------------- the network

def safe(name):
    return name.replace(".", "_")


class GraphModule(nn.Module):
    """An octet model graph as modules, one per node, run in graph order.

    Conv -> batch norm (-> ReLU) chains are listed in `fusions` for
    fuse_modules; an add whose only consumer is a ReLU becomes add_relu and
    that ReLU an identity, as in torchvision's quantizable ResNet."""

    def __init__(self, graph, tensors):
        super().__init__()
        self.graph = graph
        consumers = [[] for _ in graph]
        for i, node in enumerate(graph):
            for j in node["inputs"]:
                consumers[j].append(i)
        self.last_use = [max(c) if c else -1 for c in consumers]
        self.layers = nn.ModuleDict()
        self.fusions = []
        self.kinds = []
        channels = {}
        fused_relu = set()
        for i, node in enumerate(graph):
            op, name, key = node["op"], node["name"], safe(node["name"])
            source = node["inputs"][0] if node["inputs"] else None
            if op == "input":
                channels[i] = node["channels"]
                self.kinds.append("input")
            elif op == "conv2d":
                conv = nn.Conv2d(channels[source], node["channels"], node["kernel"], node.get("stride", 1),
                                 node.get("padding", 0), node.get("dilation", 1), node.get("groups", 1),
                                 bias=node.get("bias", False))
                conv.weight.data = torch.from_numpy(tensors[name + ".weight"])
                if conv.bias is not None:
                    conv.bias.data = torch.from_numpy(tensors[name + ".bias"])
                self.layers[key] = conv
                channels[i] = node["channels"]
                self.kinds.append("module")
                only = consumers[i][0] if len(consumers[i]) == 1 else None
                if only is not None and graph[only]["op"] == "relu":
                    self.fusions.append([key, safe(graph[only]["name"])])
            elif op == "batch_norm2d":
                bn = nn.BatchNorm2d(channels[source], eps=1e-5)
                for field in ("weight", "bias"):
                    getattr(bn, field).data = torch.from_numpy(tensors[f"{name}.{field}"])
                bn.running_mean.data = torch.from_numpy(tensors[name + ".running_mean"])
                bn.running_var.data = torch.from_numpy(tensors[name + ".running_var"])
                self.layers[key] = bn
                channels[i] = channels[source]
                self.kinds.append("module")
                chain = [safe(graph[source]["name"]), key]
                only = consumers[i][0] if len(consumers[i]) == 1 else None
                if only is not None and graph[only]["op"] == "relu":
                    chain.append(safe(graph[only]["name"]))
                if graph[source]["op"] == "conv2d" and len(consumers[source]) == 1:
                    self.fusions.append(chain)
            elif op == "linear":
                features = int(np.prod(tensors[name + ".weight"].shape[1:]))
                linear = nn.Linear(features, node["channels"], bias=node.get("bias", False))
                linear.weight.data = torch.from_numpy(tensors[name + ".weight"])
                if linear.bias is not None:
                    linear.bias.data = torch.from_numpy(tensors[name + ".bias"])
                self.layers[key] = linear
                channels[i] = node["channels"]
                self.kinds.append("module")
                only = consumers[i][0] if len(consumers[i]) == 1 else None
                if only is not None and graph[only]["op"] == "relu":
                    self.fusions.append([key, safe(graph[only]["name"])])
            elif op == "relu":
                self.layers[key] = nn.Identity() if i in fused_relu else nn.ReLU()
                channels[i] = channels[source]
                self.kinds.append("module")
            elif op == "activation" and node.get("function") == "clip":
                # Clip(0, 6) is ReLU6, which eager mode quantizes on its own (only ReLU fuses into a conv).
                low, high = node.get("alpha", 0.0), node["beta"]
                self.layers[key] = nn.ReLU6() if (low, high) == (0.0, 6.0) else nn.Hardtanh(low, high)
                channels[i] = channels[source]
                self.kinds.append("module")
            elif op == "add":
                only = consumers[i][0] if len(consumers[i]) == 1 else None
                with_relu = only is not None and graph[only]["op"] == "relu"
                if with_relu:
                    fused_relu.add(only)
                self.layers[key] = nn.quantized.FloatFunctional()
                channels[i] = channels[source]
                self.kinds.append("add_relu" if with_relu else "add")
            elif op == "max_pool2d":
                self.layers[key] = nn.MaxPool2d(node["kernel"], node.get("stride", 1))
                channels[i] = channels[source]
                self.kinds.append("module")
            elif op == "avg_pool2d":
                self.layers[key] = nn.AvgPool2d(node["kernel"], node.get("stride", 1))
                channels[i] = channels[source]
                self.kinds.append("module")
            elif op == "global_avg_pool":
                self.layers[key] = nn.AdaptiveAvgPool2d(1)
                channels[i] = channels[source]
                self.kinds.append("module")
            elif op == "flatten":
                self.layers[key] = nn.Flatten(1)
                channels[i] = channels[source]
                self.kinds.append("module")
            elif op == "shortcut_a":
                channels[i] = channels[source] + 2 * node["channels"]
                self.kinds.append("shortcut_a")
            else:
                sys.exit(f"graph node {name}: op {op} is not supported here")
            if node.get("relu"):
                sys.exit(f"graph node {name}: a training graph is expected (no fused ReLU)")
        self.quant = tq.QuantStub()
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        values = [None] * len(self.graph)
        for i, node in enumerate(self.graph):
            kind = self.kinds[i]
            inputs = [values[j] for j in node["inputs"]]
            if kind == "input":
                y = self.quant(x)
            elif kind == "module":
                y = self.layers[safe(node["name"])](inputs[0])
            elif kind == "add":
                y = self.layers[safe(node["name"])].add(inputs[0], inputs[1])
            elif kind == "add_relu":
                y = self.layers[safe(node["name"])].add_relu(inputs[0], inputs[1])
            else:  # shortcut_a: stride-2 subsample, zero channels on each side
                pad = node["channels"]
                y = F.pad(inputs[0][:, :, ::2, ::2], (0, 0, 0, 0, pad, pad))
            values[i] = y
            for j in node["inputs"]:
                if self.last_use[j] == i:
                    values[j] = None
        return self.dequant(values[-1])


# ------------------------------------------------------------- measuring

def top1_predictions(model, images, batch=500):
    out = []
    with torch.no_grad():
        for first in range(0, images.shape[0], batch):
            out.append(model(images[first:first + batch]).argmax(1))
    return torch.cat(out)


def median_ms(model, x, iterations, warmup):
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        times = []
        for _ in range(iterations):
            start = time.perf_counter()
            model(x)
            times.append(1000 * (time.perf_counter() - start))
    return float(np.median(times))


def run_octet(args, command):
    """Runs an octet subcommand; returns what it wrote to its --json file."""
    with tempfile.TemporaryDirectory() as tmp:
        json_path = os.path.join(tmp, "out.json")
        full = [args.octet] + command + ["--json", json_path]
        print("$ " + " ".join(full), file=sys.stderr, flush=True)
        subprocess.run(full, check=True, stdout=subprocess.DEVNULL)
        with open(json_path) as f:
            return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="octet float checkpoint (.octet)")
    parser.add_argument("--quantized", help="octet quantized model (default: made here with octet quantize)")
    parser.add_argument("--data", help="dataset folder (default: the dataset's Debian folder)")
    parser.add_argument("--octet", default="build/tools/octet", help="path of the octet binary")
    parser.add_argument("--batch", type=int, default=256, help="batch size of the speed measurement")
    parser.add_argument("--iterations", type=int, default=20, help="timed runs (median reported)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs before timing")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: all cores)")
    parser.add_argument("--limit", type=int, default=0, help="evaluate only the first N test images (0: all)")
    parser.add_argument("--engine", default="onednn", help="torch.backends.quantized.engine")
    parser.add_argument("--no-octet", action="store_true", help="measure torch.ao only")
    parser.add_argument("--quantize-only", action="store_true",
                        help="measure only the quantize times (no test-set evaluation, no inference speed)")
    parser.add_argument("--octet-args", default="",
                        help="extra options for octet quantize, e.g. '--method max --weight-rounding nearest'")
    parser.add_argument("--json", help="write the results as JSON to FILE")
    args = parser.parse_args()

    threads = args.threads or os.cpu_count()
    torch.set_num_threads(threads)
    if args.engine not in torch.backends.quantized.supported_engines:
        sys.exit(f"engine {args.engine} is not in this torch ({torch.backends.quantized.supported_engines})")
    torch.backends.quantized.engine = args.engine

    ckpt = read_checkpoint(args.checkpoint)
    data_dir = args.data or DEFAULT_DATA.get(ckpt["dataset"])
    if not data_dir:
        sys.exit(f"--data DIR is required for dataset {ckpt['dataset']}")
    train_x, _ = read_dataset(ckpt["dataset"], data_dir, "train")
    test_x, test_y = read_dataset(ckpt["dataset"], data_dir, "test")
    if args.quantize_only:
        test_x, test_y = test_x[:1], test_y[:1]
    if args.limit:
        test_x, test_y = test_x[:args.limit], test_y[:args.limit]
    count = min(CALIBRATION_SAMPLES, train_x.shape[0])
    calibration = normalize(train_x[[i * train_x.shape[0] // count for i in range(count)]], ckpt["mean"], ckpt["std"])
    test = normalize(test_x, ckpt["mean"], ckpt["std"])
    labels = torch.from_numpy(test_y)

    float_model = GraphModule(ckpt["graph"], ckpt["tensors"]).eval()

    # torch.ao eager post-training quantization.
    model = GraphModule(ckpt["graph"], ckpt["tensors"]).eval()
    rss_before_mb = peak_rss_mb()
    start, start_cpu = time.perf_counter(), time.process_time()
    if model.fusions:  # none in a network whose convs end in ReLU6 (MobileNetV2)
        model = tq.fuse_modules(model, [["layers." + m for m in chain] for chain in model.fusions])
    model.qconfig = tq.get_default_qconfig(args.engine)
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for first in range(0, calibration.shape[0], 128):
            model(calibration[first:first + 128])
    tq.convert(model, inplace=True)
    torch_ao_quantize_s = time.perf_counter() - start
    torch_ao_quantize_cpu_s = time.process_time() - start_cpu
    torch_ao_memory = {"peak_mb": peak_rss_mb(), "peak_before_mb": rss_before_mb}
    print(f"torch.ao quantize: {torch_ao_quantize_s:.2f} s", file=sys.stderr, flush=True)

    octet_quantize = None
    with tempfile.TemporaryDirectory() as tmp:
        quantized = args.quantized
        if not quantized and not args.no_octet:
            quantized = os.path.join(tmp, "quantized.octet")
            json_path = os.path.join(tmp, "quantize.json")
            command = [args.octet, "quantize", "--checkpoint", args.checkpoint, "-o", quantized, "--data", data_dir,
                       "--json", json_path] + args.octet_args.split()
            print("$ " + " ".join(command), file=sys.stderr, flush=True)
            start = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            octet_quantize = {"wall_s": time.perf_counter() - start}
            with open(json_path) as f:
                report = json.load(f)
            octet_quantize.update({k: report[k] for k in ("phases", "cpu_seconds", "peak_mb")})
        if args.quantize_only:
            print_quantize_times(args, ckpt, count, threads, torch_ao_quantize_s, torch_ao_quantize_cpu_s,
                                 torch_ao_memory, octet_quantize)
            write_json(args, {"model": ckpt["model"], "dataset": ckpt["dataset"], "threads": threads,
                              "calibration_images": count,
                              "torch_ao": {"quantize_s": torch_ao_quantize_s,
                                           "quantize_cpu_s": torch_ao_quantize_cpu_s, **torch_ao_memory},
                              "octet": {"quantize": octet_quantize}})
            return
        report_accuracy_and_speed(args, ckpt, data_dir, quantized, float_model, model, test, labels, count, threads,
                                  torch_ao_quantize_s, torch_ao_quantize_cpu_s, torch_ao_memory, octet_quantize)


def peak_rss_mb():
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def print_quantize_times(args, ckpt, count, threads, torch_ao_s, torch_ao_cpu_s, torch_ao_memory, octet_quantize):
    print(f"{ckpt['model']} on {ckpt['dataset']}: quantize time, {count} calibration images, {threads} threads, "
          f"torch {torch.__version__}")
    print(f"  torch.ao ({args.engine}, HistogramObserver per-channel): {torch_ao_s:8.2f} s wall, "
          f"{torch_ao_cpu_s:.2f} s CPU (fuse, prepare, calibration pass, convert), "
          f"{torch_ao_memory['peak_mb']:.0f} MB peak (this Python process, datasets and float model included; "
          f"{torch_ao_memory['peak_before_mb']:.0f} MB before quantizing)")
    if octet_quantize:
        q = octet_quantize
        options = args.octet_args or "defaults"
        print(f"  octet quantize ({options}): {q['wall_s']:8.2f} s wall, {q['cpu_seconds']:.2f} s CPU, "
              f"{q['peak_mb']:.0f} MB peak; {q['wall_s'] / torch_ao_s:.2f}x torch.ao's wall time, "
              f"{q['cpu_seconds'] / torch_ao_cpu_s:.2f}x its CPU time")
        for phase in q["phases"]:
            print(f"    {phase['name']:20} {phase['seconds']:8.2f} s  {phase['cpu_seconds']:8.2f} s CPU  "
                  f"{phase['peak_mb']:6.0f} MB")


def write_json(args, results):
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(results, f, indent=2)
        os.replace(args.json + ".tmp", args.json)


def report_accuracy_and_speed(args, ckpt, data_dir, quantized, float_model, model, test, labels, count, threads,
                              torch_ao_quantize_s, torch_ao_quantize_cpu_s, torch_ao_memory, octet_quantize):
    float_pred = top1_predictions(float_model, test)
    int8_pred = top1_predictions(model, test)

    x = test[:args.batch] if test.shape[0] >= args.batch else test.repeat((args.batch + test.shape[0] - 1) //
                                                                           test.shape[0], 1, 1, 1)[:args.batch]
    float_ms = median_ms(float_model, x, args.iterations, args.warmup)
    int8_ms = median_ms(model, x, args.iterations, args.warmup)
    peer = {
        "engine": args.engine,
        "quantize_s": torch_ao_quantize_s,
        "quantize_cpu_s": torch_ao_quantize_cpu_s,
        "float_top1": 100.0 * (float_pred == labels).double().mean().item(),
        "int8_top1": 100.0 * (int8_pred == labels).double().mean().item(),
        "agreement": 100.0 * (int8_pred == float_pred).double().mean().item(),
        "float32_ms": float_ms,
        "int8_ms": int8_ms,
    }

    octet = None
    if not args.no_octet:
        data = ["--data", data_dir]
        evaluation = run_octet(args, ["eval", "--checkpoint", args.checkpoint, "--quantized", quantized,
                                      "--no-layers"] + data + (["--limit", str(args.limit)] if args.limit else []))
        bench = run_octet(args, ["bench", "infer", "--checkpoint", args.checkpoint, "--quantized", quantized,
                                 "--backend", "cpu", "--batch", str(args.batch), "--threads", str(threads),
                                 "--iterations", str(args.iterations), "--warmup", str(args.warmup)])
        ms = {r["backend"]: r["latency_ms"] for r in bench["results"]}
        octet = {
            "float_top1": evaluation["float_top1"],
            "int8_top1": evaluation["int8_top1"],
            "agreement": evaluation["agreement"],
            "float32_ms": ms["libtorch-cpu"],
            "int8_ms": ms["cpu"],
            "cpu_kernels": bench["cpu_kernels"],
        }

    images = int(labels.shape[0])
    print(f"{ckpt['model']} on {ckpt['dataset']}: {images} test images, {count} calibration images, "
          f"{threads} threads, batch {args.batch}, torch {torch.__version__}")
    print(f"{'':22} {'float top-1':>11} {'int8 top-1':>11} {'agreement':>10} {'fp32 ms':>9} {'int8 ms':>9} "
          f"{'int8 img/s':>11} {'int8 speed-up':>14}")
    rows = [(f"torch.ao ({args.engine})", peer)] + ([(f"octet ({octet['cpu_kernels']})", octet)] if octet else [])
    for name, r in rows:
        print(f"{name:22} {r['float_top1']:10.2f}% {r['int8_top1']:10.2f}% {r['agreement']:9.2f}% "
              f"{r['float32_ms']:9.2f} {r['int8_ms']:9.2f} {1000 * args.batch / r['int8_ms']:11.0f} "
              f"{r['float32_ms'] / r['int8_ms']:13.2f}x")
    if octet:
        print(f"octet int8 is {peer['int8_ms'] / octet['int8_ms']:.2f}x torch.ao int8 "
              f"(both against LibTorch/PyTorch float32 of the same network, measured in their own processes)")
    print_quantize_times(args, ckpt, count, threads, torch_ao_quantize_s, torch_ao_quantize_cpu_s, torch_ao_memory,
                         octet_quantize)
    write_json(args, {"model": ckpt["model"], "dataset": ckpt["dataset"], "images": images, "threads": threads,
                      "batch": args.batch, "torch_ao": peer, "octet": octet and dict(octet, quantize=octet_quantize)})


if __name__ == "__main__":
    main()
