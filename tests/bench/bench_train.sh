#!/usr/bin/env bash
# `octet bench train` on tiny budgets (LeNet-5 on Fashion-MNIST, 300 images,
# 1 epoch, 1 thread): each scenario writes a well-formed CSV, markdown table,
# SVG and JSON with the rows it planned; bad scenarios and options are refused
# with status 1 and nothing written. No timing is asserted.
#   bench_train.sh OCTET_BINARY     (exit 77: no Fashion-MNIST, skipped)
# $PYTHON (default python3; the standard library only) reads the files.
set -uo pipefail
octet=$1
# shellcheck source=tests/bench/bench_script_setup.sh
source "$(dirname "$0")/bench_script_setup.sh"
tiny=(--model lenet5 --dataset fashion-mnist --train-samples 300 --test-samples 500 --epochs 1 --threads 1)

# check_files SCENARIO PYTHON-CHECK: the four files parse (CSV, JSON, SVG as
# XML, markdown with a table), the CSV's header is the JSON's columns and its
# rows the JSON's rows; PYTHON-CHECK then asserts on `rows` (dicts by column).
check_files() {
  local scenario=$1 check=$2 base=$dir/$1/$1
  "$python" - "$base" "$scenario" <<PY || fail "$scenario: files"
import csv, json, sys, xml.etree.ElementTree as ET
base, scenario = sys.argv[1], sys.argv[2]
summary = json.load(open(base + ".json"))
for key in ("scenario", "title", "columns", "rows", "notes", "details"):
    assert key in summary, "JSON has no " + key
assert summary["scenario"] == scenario
with open(base + ".csv") as f:
    table = list(csv.reader(f))
assert table[0] == summary["columns"], (table[0], summary["columns"])
assert len(table) - 1 == len(summary["rows"]), "CSV and JSON rows differ"
rows = [dict(zip(table[0], r)) for r in table[1:]]
svg = ET.parse(base + ".svg").getroot()
assert svg.tag.endswith("svg"), svg.tag
md = open(base + ".md").read()
assert md.startswith("## ") and "| --- |" in md, "markdown has no table"
$check
PY
}

run() { "$octet" bench train "$@" --out "$dir/$1" "${tiny[@]}" >"$dir/stdout" 2>"$dir/stderr" || fail "$*: status $?: $(tail -3 "$dir/stderr")"; }

run workers --max-workers 2
grep -q '^\[3/3\] workers: 2 workers' "$dir/stderr" || fail "workers: no progress line [3/3]"
grep -q '^| workers |' "$dir/stdout" || fail "workers: the table is not printed"
check_files workers '
assert [r["workers"] for r in rows] == ["0", "1", "2"], rows
assert all(float(r["epoch s"]) > 0 and float(r["data s/epoch"]) >= 0 for r in rows)
assert any(n.startswith("best: ") and ("loading-bound" in n or "compute-bound" in n) for n in summary["notes"])'

run optimizers
check_files optimizers '
assert [(r["lr setting"], r["optimizer"]) for r in rows][:5] == [("lab lr 0.1", o) for o in ("sgd", "nesterov", "adagrad", "adadelta", "adam")]
usual = {r["optimizer"]: float(r["lr"]) for r in rows if r["lr setting"] == "usual lr"}
assert usual == {"sgd": 0.1, "nesterov": 0.1, "adagrad": 0.01, "adadelta": 1.0, "adam": 0.001}, usual
assert all(0 <= float(r["test top-1 %"]) <= 100 for r in rows)'

run batchnorm
check_files batchnorm '
assert [r["batch norm"] for r in rows] == ["yes", "no"]
assert int(rows[0]["parameters"]) >= int(rows[1]["parameters"]), "batch norm adds parameters, if any"'

run device
check_files device '
assert [r["device"] for r in rows] == ["cpu", "cuda"]
assert float(rows[0]["s/epoch"]) > 0
assert rows[1]["s/epoch"] or rows[1]["note"].startswith("skipped: "), rows[1]'

run precision --device cpu
check_files precision '
assert [r["lever"] for r in rows] == ["fp32", "tf32", "amp-fp16", "amp-bf16", "channels_last", "cuda-graph"]
for r in rows:
    if r["lever"] in ("tf32", "amp-fp16", "cuda-graph"):
        assert r["note"].startswith("skipped: needs CUDA") and not r["first epoch s"], r
assert float(rows[0]["first epoch s"]) > 0'

run batch-size --batch-sizes 64,128
check_files batch-size '
lr = {(r["lr rule"], r["batch"]): float(r["lr"]) for r in rows}
assert lr == {("fixed lr", "64"): 0.1, ("fixed lr", "128"): 0.1, ("linear scaling + warm-up", "64"): 0.025,
              ("linear scaling + warm-up", "128"): 0.05}, lr
assert [int(r["steps"]) for r in rows] == [5, 3, 5, 3], "300 images in batches of 64 and 128"'

# A diverged run (lr 1e6: loss NaN, written as null) still gives a table.
"$octet" bench train batch-size --batch-sizes 64 --lr 1e6 --out "$dir/diverged" "${tiny[@]}" >"$dir/stdout" 2>&1 ||
  fail "diverged: status $?: $(tail -3 "$dir/stdout")"
grep -q 'the training diverged (loss NaN)' "$dir/diverged/batch-size.md" || fail "diverged: no note"
grep -q '^fixed lr,64,.*,,' "$dir/diverged/batch-size.csv" || fail "diverged: the loss is not an empty CSV field"

# scaling: 1 and 2 processes through `octet launch` (Gloo on the CPU, NCCL on
# a GPU). A build without that process group (pip's LibTorch has no Gloo
# headers) or a machine with one GPU (NCCL needs one per rank) plans the
# 2-process runs as skipped, saying why, and still runs 1 process.
run scaling --processes 1,2 --batch-size 64
check_files scaling '
assert [(r["scaling"], r["processes"], r["global batch"]) for r in rows] == [("weak", "1", "64"), ("weak", "2", "128"), ("strong", "1", "64"), ("strong", "2", "64")], rows
two = [r for r in rows if r["processes"] == "2"]
cannot = [r for r in two if r.get("note", "").startswith("skipped: needs 2 GPUs (NCCL: one per rank), ")
          or (r.get("note", "").startswith("skipped: needs data-parallel training: ")
              and ("Gloo" in r["note"] or "NCCL" in r["note"]))]
if cannot:
    assert len(cannot) == 2 and not any(r["s/epoch"] for r in two), two
else:
    assert all(float(r["MB all-reduced/step"]) > 0 and float(r["ring MB/step"]) > 0 for r in two), two
assert all(float(r["s/epoch"]) > 0 for r in rows if r["processes"] == "1"), rows'
"$python" - "$dir/scaling/speed.csv" "$dir/scaling/scaling.csv" <<'PY' || fail "scaling: speed.csv"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
ran = sorted({r["processes"] for r in csv.DictReader(open(sys.argv[2])) if r["s/epoch"]})
assert rows[0] == ["p", "w", "seconds"] and [r[:2] for r in rows[1:]] == [[p, p] for p in ran], (rows, ran)
assert ran[0] == "1" and all(float(r[2]) > 0 for r in rows[1:])
PY

# The launched ranks' output is copied through a pipe: their progress is drawn
# when bench's standard error is a terminal (here a pseudo-terminal), not in a log.
grep -q $'\r' "$dir/stderr" && fail "scaling: progress drawn into a log"
"$python" - "$octet" "$dir/on-terminal" "${tiny[@]}" <<'PY' || fail "scaling on a terminal: no progress from the launched ranks"
import os, subprocess, sys
octet, out, tiny = sys.argv[1], sys.argv[2], sys.argv[3:]
main, terminal = os.openpty()
run = subprocess.Popen([octet, "bench", "train", "scaling", "--processes", "1", "--batch-size", "64", "--out", out] + tiny,
                       stdout=subprocess.DEVNULL, stderr=terminal)
os.close(terminal)
seen = b""
while True:
    try:
        chunk = os.read(main, 4096)
    except OSError:  # EIO: every writer is gone
        break
    if not chunk:
        break
    seen += chunk
assert run.wait() == 0, seen.decode(errors="replace")
assert b"\repoch 1: 5/5 (100%)" in seen, seen.decode(errors="replace")
PY

# A 2-process run that fails once launched (its rendezvous port is taken)
# leaves its row with the ranks' own error, not only an exit status.
"$python" - "$octet" "$dir/busy" "${tiny[@]}" <<'PY' || fail "scaling, port taken: the failed row does not say why"
import csv, socket, subprocess, sys
octet, out, tiny = sys.argv[1], sys.argv[2], sys.argv[3:]
with socket.socket() as taken:
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    # Run 0 (weak, 1 process) gets --port, run 1 (weak, 2 processes) the taken port.
    subprocess.run([octet, "bench", "train", "scaling", "--processes", "1,2", "--batch-size", "64",
                    "--port", str(port - 1), "--out", out] + tiny, check=True, capture_output=True)
rows = list(csv.DictReader(open(out + "/scaling.csv")))
weak_two = rows[1]
assert weak_two["processes"] == "2", rows
if not weak_two.get("note", "").startswith("skipped: "):
    assert weak_two["note"].startswith("failed: ") and "Address already in use" in weak_two["note"], weak_two
PY

# Refused before any run: status 1 (CLI11's own checks: 105/106), a message, no folder.
refuse() {
  local pattern=$1
  shift
  local err status
  err=$("$octet" bench train "$@" --out "$dir/refused" --dataset fashion-mnist 2>&1 >/dev/null)
  status=$?
  if [ $status -eq 0 ] || ! grep -q -- "$pattern" <<<"$err" || [ -e "$dir/refused" ]; then
    fail "refused ($status): $* -> $err"
  fi
  rm -rf "$dir/refused"
}
refuse "scenario: nosuch not in" nosuch
refuse "octet: error: --batch-sizes" batch-size --batch-sizes 64,x
refuse "octet: error: --processes must include 1" scaling --processes 2
refuse "octet: error: --processes 4: strong scaling" scaling --processes 1,4 --batch-size 30
refuse "octet: error: .*no-such-folder" workers --data "$dir/no-such-folder"
refuse "octet: error: .*no-such-model" workers --model no-such-model
refuse "octet: error: --epochs" workers --epochs 0
refuse "octet: error: --device must be" workers --device tpu

finish "bench train: all checks passed"
