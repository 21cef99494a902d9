#!/usr/bin/env bash
# `octet bench infer` on the zoo LeNet-5 (CPU backend, batches 1 and 3, two
# timed runs): the JSON names the machine and model, has an int8 and a float
# row per batch whose images/s and speed-ups follow from their latencies, and
# per-node MACs (what the TOPS figures divide by) that are LeNet-5's exact
# counts, and its largest conv's TOPS; the text names the CPU. No timing is
# asserted. Its bad options are among tests/cli/bad_inputs.sh's cases.
#   bench_infer.sh OCTET_BINARY SOURCE_DIR ONNX_LIBRARY
#     ONNX_LIBRARY: yes if octet was built with the ONNX library (else ONNX
#     Runtime cannot be timed and a note says why); exit 77: no Fashion-MNIST
#     for calibration, skipped
# $PYTHON (default python3; the standard library only) reads the JSON.
set -uo pipefail
octet=$1
source_dir=$2
onnx_library=$3
# shellcheck source=tests/bench/bench_script_setup.sh
source "$(dirname "$0")/bench_script_setup.sh"
bench=("$octet" bench infer --checkpoint "$source_dir/models/zoo/lenet5_fmnist.octet" --threads 1)

"${bench[@]}" --backend cpu --batch 1,3 --iterations 2 --warmup 0 --layers --json "$dir/bench.json" >"$dir/bench.txt" 2>&1 ||
  fail "bench infer exited with status $?: $(tail -n 5 "$dir/bench.txt")"
"$python" - "$dir/bench.json" "$dir/bench.txt" <<'PY' || fail "bench.json / bench.txt"
import json, math, os, sys
bench = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
assert (bench["model"], bench["dataset"], bench["threads"]) == ("lenet5", "fashion-mnist", 1), bench
model_name = "unknown CPU"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name") and line.partition(":")[2].strip():
        model_name = line.partition(":")[2].strip()
        break
cores = os.cpu_count()
cpu = f"{model_name}, {cores} {'core' if cores == 1 else 'cores'}"
assert bench["cpu"] == cpu, (bench["cpu"], cpu)
assert bench["gpu"] is None, bench["gpu"]
assert "CPU: " + cpu + "\n" in text and "GPU: " not in text, text[:400]
for batch in (1, 3):
    rows = [r for r in bench["results"] if r["batch"] == batch]
    int8 = [r for r in rows if r["precision"] == "int8"]
    floats = [r for r in rows if r["precision"] == "float32"]
    assert [r["backend"] for r in int8] == ["cpu"], rows
    assert len(floats) == 1 and floats[0]["backend"] in ("libtorch-cpu", "octet-float-cpu"), rows
    for r in rows:
        assert 0 < r["fastest_ms"] <= r["latency_ms"], r
        assert f"{r['latency_ms']:12.4f} {r['fastest_ms']:10.4f}" in text, (r, text)
        assert math.isclose(r["images_per_second"], batch * 1000 / r["latency_ms"], rel_tol=1e-9), r
    (speedup,) = [s for s in bench["speedups"] if s["batch"] == batch]
    assert speedup["peer"] == floats[0]["backend"] + " float32", speedup
    ratio = floats[0]["latency_ms"] / int8[0]["latency_ms"]
    assert math.isclose(speedup["over_peer"]["cpu"], ratio, rel_tol=1e-9), (speedup, ratio)
    assert f"batch {batch}\n" in text, text
    # LeNet-5 per image: conv1 28x28x6 outputs of 5x5x1, conv2 10x10x16 of 5x5x6, fc 400-120-84-10.
    (report,) = [l for l in bench["layers"] if l["batch"] == batch and l["backend"] == "cpu"]
    macs = {l["name"]: l["macs"] for l in report["layers"] if l["macs"] > 0}
    expected = {"conv1": 117600, "conv2": 240000, "fc1": 48000, "fc2": 10080, "fc3": 840}
    assert macs == {k: v * batch for k, v in expected.items()}, (batch, macs)
    for l in report["layers"]:
        assert l["milliseconds"] >= 0 and (l["macs"] == 0 or l["tops"] > 0), l
    # LeNet-5's largest conv is conv2, alone: its line and entry repeat its row of the node table.
    (conv2,) = [l for l in report["layers"] if l["name"] == "conv2"]
    (largest,) = [e for e in bench["largest_conv"] if e["batch"] == batch]
    assert largest == {"batch": batch, "backend": "cpu", "node": "conv2", "macs": conv2["macs"],
                       "milliseconds": conv2["milliseconds"], "tops": conv2["tops"]}, (largest, conv2)
    assert math.isclose(conv2["tops"], 2 * conv2["macs"] / (conv2["milliseconds"] * 1e9), rel_tol=1e-9), conv2
    assert f"cpu batch {batch}: largest conv conv2, {conv2['macs'] / 1e6:.1f} MMACs in " in text, text
assert bench["imma_tiles"] == [], "no cuda-imma tiles on --backend cpu"
PY

# --onnxruntime: octet's QDQ exports (both targets) timed by ONNX Runtime beside the int8 CPU
# backend, or a note saying why not (no ONNX library, no node, or onnxruntime-node not in .ort/).
"${bench[@]}" --backend cpu --batch 2 --iterations 2 --warmup 0 --onnxruntime --json "$dir/ort.json" >"$dir/ort.txt" 2>&1 ||
  fail "bench infer --onnxruntime exited with status $?: $(tail -n 5 "$dir/ort.txt")"
"$python" - "$dir/ort.json" "$dir/ort.txt" "$source_dir" "$onnx_library" <<'PY' || fail "ort.json / ort.txt"
import json, math, os, shutil, sys
bench = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
installed = shutil.which("node") and os.path.isdir(os.path.join(sys.argv[3], ".ort/node_modules/onnxruntime-node"))
ort = [r for r in bench["results"] if r["backend"].startswith("onnxruntime-cpu")]
# ORT's threads wait as OpenMP's do: both sleep under OMP_WAIT_POLICY=passive (ort_run.mjs --sleep-idle).
spin = os.environ.get("OMP_WAIT_POLICY", "").lower() != "passive"
assert bench["idle_threads_spin"] is spin, bench["idle_threads_spin"]
assert ("idle threads: spin (" if spin else "idle threads: sleep (OMP_WAIT_POLICY=passive; ONNX Runtime's too)") in text
if sys.argv[4] != "yes":
    assert ort == [] and "note: this octet was built without the ONNX library: ONNX Runtime int8 is not measured" in text, text
    sys.exit(0)
if not installed:
    assert ort == [] and "note: ONNX Runtime not measured: " in text, text
    sys.exit(0)
rows = ["onnxruntime-cpu/faithful", "onnxruntime-cpu/onnxruntime"]
assert [(r["backend"], r["precision"], r["batch"]) for r in ort] == [(row, "int8", 2) for row in rows], ort
assert all(0 < r["fastest_ms"] <= r["latency_ms"] for r in ort), ort
assert bench["onnxruntime"].count(".") == 2, bench["onnxruntime"]
(cpu,) = [r for r in bench["results"] if r["backend"] == "cpu"]
(speedup,) = bench["speedups"]
for r in ort:
    ratio = r["latency_ms"] / cpu["latency_ms"]
    assert math.isclose(speedup["cpu_int8_over_onnxruntime"][r["backend"] + " int8"], ratio, rel_tol=1e-9), speedup
    assert f"CPU: int8 (cpu) is {ratio:.2f}x {r['backend']} int8" in text, text
assert "onnxruntime_int8_over_float32" not in speedup, "no --onnx: no float32 row to compare with"
PY

finish "bench infer: JSON and text well-formed, MACs exact, ONNX Runtime beside it"
