# The timed stages of tools/gpu_check.sh, which sources this file: bench,
# imported, precision and profile, and the ResNet-18 that bench and profile time. They
# use its helpers (need_build, run_logged, note, die) and variables.

# Sets r18 to the ResNet-18 to time: the train stage's, else one trained for
# 20 steps and quantized quickly (int8 speed does not depend on the weights).
timed_r18() {
  r18=$R18
  [ ! -f "$R18.int8.octet" ] || return 0
  r18="$BUILD/r18_brief"
  note "$1: no trained ResNet-18 (the train stage): timing one trained for 20 steps"
  [ -f "$r18.octet" ] || run_logged train_brief "$OCTET" train --model resnet18 --dataset cifar10 \
    --data "$DATA/cifar-10-batches-bin" --epochs 1 --max-steps 20 --batch-size 128 --device cuda -o "$r18.octet"
  [ -f "$r18.int8.octet" ] || run_logged quantize_brief "$OCTET" quantize --checkpoint "$r18.octet" \
    --data "$DATA/cifar-10-batches-bin" --method max --weight-rounding nearest --activations signed --wide-bits 8 \
    -o "$r18.int8.octet"
}

# The timed models are quantized with signed 8-bit activations, which all
# three CUDA backends read (cuda-cublaslt no unsigned ones, only cuda-imma wide ones).
stage_bench() {
  need_build octet
  local data="$DATA/cifar-10-batches-bin" r18
  timed_r18 bench
  run_logged quantize_r20 "$OCTET" quantize --checkpoint "$ROOT/models/zoo/resnet20_cifar10.octet" --data "$data" \
    --activations signed --wide-bits 8 -o "$BUILD/r20.int8.octet"
  run_logged bench_r18 "$OCTET" bench infer --checkpoint "$r18.octet" --quantized "$r18.int8.octet" --batch 256,1 \
    --backend cuda-imma,cuda-dp4a,cuda-cublaslt --iterations 50 --warmup 10 --layers --json "$RESULTS/bench_r18.json"
  # cuda-imma without its wgmma tiles, its side stream (the shortcuts in order), its programmatic
  # launches or its split K, for what each adds.
  local without
  for without in mma:OCTET_WGMMA one_stream:OCTET_SIDE_STREAM plain_launches:OCTET_PDL unsplit:OCTET_SPLIT_K; do
    run_logged "bench_r18_${without%%:*}" env "${without#*:}=0" "$OCTET" bench infer --checkpoint "$r18.octet" \
      --quantized "$r18.int8.octet" --batch 256,1 --backend cuda-imma --iterations 50 --warmup 10 \
      --json "$RESULTS/bench_r18_${without%%:*}.json"
  done
  "$PYTHON" - "$RESULTS/bench_r18_mma.json" "without its wgmma tiles (OCTET_WGMMA=0)" \
    "$RESULTS/bench_r18_one_stream.json" "without its side stream (OCTET_SIDE_STREAM=0)" \
    "$RESULTS/bench_r18_plain_launches.json" "without programmatic launches (OCTET_PDL=0)" \
    "$RESULTS/bench_r18_unsplit.json" "without split K (OCTET_SPLIT_K=0)" <<'EOF' | tee -a "$SUMMARY"
import json, sys
for path, without in zip(sys.argv[1::2], sys.argv[2::2]):
    b = json.load(open(path))
    for r in b["results"]:
        if r["backend"] == "cuda-imma":
            print(f"{b['model']} batch {r['batch']}: cuda-imma {without} "
                  f"{r['latency_ms']:.4f} ms (fastest {r['fastest_ms']:.4f})")
EOF
  run_logged bench_r20 "$OCTET" bench infer --checkpoint "$ROOT/models/zoo/resnet20_cifar10.octet" \
    --quantized "$BUILD/r20.int8.octet" --batch 256,1 --backend cuda-imma,cuda-dp4a,cuda-cublaslt \
    --iterations 50 --warmup 10 --layers --json "$RESULTS/bench_r20.json"
  "$PYTHON" - "$RESULTS/bench_r18.json" "$RESULTS/bench_r20.json" <<'EOF' | tee -a "$SUMMARY"
import json, sys
for path in sys.argv[1:]:
    b = json.load(open(path))
    print(f"{b['model']} measured on GPU {b['gpu']}; CPU {b['cpu']}")
    for r in b["results"]:
        print(f"{b['model']} batch {r['batch']}: {r['backend']} {r['precision']} {r['latency_ms']:.4f} ms "
              f"(fastest {r['fastest_ms']:.4f}) {r['images_per_second']:.0f} images/s")
    for s in b["speedups"]:
        print(f"{b['model']} batch {s['batch']}: over {s.get('peer')}: {s.get('over_peer')}")
    largest = {}  # the convs with the most MACs (several tie in CIFAR ResNets), per batch and backend
    for c in b["largest_conv"]:
        largest.setdefault((c["batch"], c["backend"]), []).append(c)
    for (batch, backend), convs in largest.items():
        best, worst = max(convs, key=lambda c: c["tops"]), min(convs, key=lambda c: c["tops"])
        print(f"{b['model']} batch {batch} {backend}: largest convs ({len(convs)} of {best['macs'] / 1e6:.1f} MMACs): "
              f"best {best['node']} {best['tops']:.1f} TOPS, worst {worst['node']} {worst['tops']:.1f} TOPS")
    for t in b["imma_tiles"]:  # the cost model's choice is the first trial
        model_pick = t["trials"][0] if t["trials"] else {"tile": t["tile"], "milliseconds": float("nan")}
        best = min((x["milliseconds"] for x in t["trials"]), default=float("nan"))
        print(f"{b['model']} cuda-imma {t['shape']}: {t['tile']} {best:.4f} ms; "
              f"cost model {model_pick['tile']} {model_pick['milliseconds']:.4f} ms")
    tuning = sum(t["tuning_ms"] for t in b["imma_tiles"])
    print(f"{b['model']} cuda-imma tile timing: {tuning:.1f} ms for {len(b['imma_tiles'])} shapes")
EOF
}

# The imported models python/tools/gpu_models.py packed into .gpu/models:
# the trained CIFAR-10 MobileNetV2 (grouped kernel, padded pools' neighbours)
# and ConvNeXt (7x7 depthwise, LayerNorm, GELU) compared image by image
# between the CPU and GPU runtimes over the whole test set, and each model
# timed against LibTorch's fp16 with CUDA graphs. A model that differs fails
# the stage after the timings, which do not depend on it.
stage_imported() {
  need_build octet
  local data="$DATA/cifar-10-batches-bin" models="$BUILD/models" name
  [ -f "$CARRIED/models/models.tar.xz" ] || die "no $CARRIED/models/models.tar.xz: run python/tools/gpu_models.py"
  mkdir -p "$models"
  tar xJf "$CARRIED/models/models.tar.xz" -C "$models" || die "could not unpack $CARRIED/models/models.tar.xz"
  # The trained zoo models with the defaults: CPU and GPU logits over the whole test set.
  local compared differing=""
  for compared in mv2_cifar convnext_cifar; do
    if ! (for backend in cpu cuda; do
      "$OCTET" predict --quantized "$models/$compared.default.int8.octet" --data "$data" --backend "$backend" \
        --json "$BUILD/predict_${compared}_$backend.json" >"$RESULTS/predict_${compared}_$backend.log" 2>&1 || exit 1
    done); then
      note "imported: octet predict failed on $compared (predict_${compared}_*.log)"
      differing+=" $compared"
      continue
    fi
    local report
    report=$("$PYTHON" - "$BUILD/predict_${compared}_cpu.json" "$BUILD/predict_${compared}_cuda.json" \
      "$compared" <<'EOF2'
import json, sys
cpu, gpu = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
same = sum(a == b for a, b in zip(cpu["int8_predictions"], gpu["int8_predictions"]))
print(f"{sys.argv[3]} CIFAR-10 (JPEG copy): int8 top-1 on the CPU {cpu['int8_top1']:.2f}%, on {gpu['backend']} "
      f"{gpu['int8_top1']:.2f}%; predictions equal on {same} of {cpu['images']} images; "
      f"logits bit-exact: {cpu['int8_logits'] == gpu['int8_logits']}")
sys.exit(0 if cpu["int8_logits"] == gpu["int8_logits"] else 1)
EOF2
    ) || differing+=" $compared"
    note "$report"
  done
  for name in ${IMPORTED_MODELS:-mv2_cifar mobilenet_v2 resnet50 convnext_cifar convnext_tiny}; do
    run_logged "bench_$name" "$OCTET" bench infer --checkpoint "$models/$name.octet" \
      --quantized "$models/$name.int8.octet" --batch 256,1 --backend cuda-imma,cuda-dp4a --iterations 30 \
      --warmup 5 --layers --json "$RESULTS/bench_$name.json"
    "$PYTHON" - "$RESULTS/bench_$name.json" "$name" <<'EOF2' | tee -a "$SUMMARY"
import json, sys
b = json.load(open(sys.argv[1]))
for r in b["results"]:
    print(f"{sys.argv[2]} batch {r['batch']}: {r['backend']} {r['precision']} {r['latency_ms']:.4f} ms "
          f"(fastest {r['fastest_ms']:.4f}) {r['images_per_second']:.0f} images/s")
for s in b["speedups"]:
    print(f"{sys.argv[2]} batch {s['batch']}: over {s.get('peer')}: {s.get('over_peer')}")
# Where cuda-imma's time goes: per-node times summed by operator and kernel.
for layers in b.get("layers", []):
    if layers["backend"] != "cuda-imma":
        continue
    by_kernel = {}
    for n in layers["layers"]:
        key = n["op"] + (f" ({n['kernel']})" if n.get("kernel") else "")
        by_kernel[key] = by_kernel.get(key, 0.0) + n["milliseconds"]
    total = sum(by_kernel.values())
    top = sorted(by_kernel.items(), key=lambda kv: -kv[1])[:6]
    print(f"{sys.argv[2]} batch {layers['batch']} cuda-imma per node, {total:.3f} ms: " +
          ", ".join(f"{k} {v:.3f}" for k, v in top))
EOF2
  done
  [ -z "$differing" ] || die "imported: the CPU and GPU runtimes differ on$differing (the lines above)"
}

# Nsight Compute on the convolutions of one ResNet-18 batch of 256, at the
# card's own clocks, with the tiles the cost model picks (OCTET_IMMA_TUNE=0:
# the tuner's timing launches would be profiled too).
stage_profile() {
  need_build octet
  need ncu "Nsight Compute comes with the CUDA toolkit"
  local r18
  timed_r18 profile
  rm -f "$RESULTS/ncu_summary.txt"
  profile_kernels r18 "regex:conv2d_imma" 20 "$r18.octet" "$r18.int8.octet"
  # ResNet-50's stem and layer1 where `imported` unpacked it: the folded input and conv1, the max pool, and
  # the 1x1 convs whose epilogue writes 4 bytes an output channel (layer1's downsample and conv3).
  local r50="$BUILD/models/resnet50"
  if [ -f "$r50.int8.octet" ]; then
    profile_kernels r50 "regex:conv2d_imma|pool|quantize" 12 "$r50.octet" "$r50.int8.octet"
  fi
}

# profile_kernels NAME KERNELS COUNT CHECKPOINT QUANTIZED: the first COUNT kernels matching KERNELS of one
# cuda-imma batch of 256, untuned tiles (the tuner's timing launches would be profiled too), into
# ncu_NAME.csv and lines of ncu_summary.txt.
profile_kernels() {
  local name=$1 kernels=$2 count=$3 checkpoint=$4 quantized=$5
  rm -f "$BUILD/${name}_imma.ncu-rep"
  run_logged "ncu_$name" env OCTET_IMMA_TUNE=0 ncu --clock-control none --kernel-name "$kernels" \
    --launch-count "$count" --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section MemoryWorkloadAnalysis -o "$BUILD/${name}_imma" "$OCTET" bench infer --checkpoint "$checkpoint" \
    --quantized "$quantized" --batch 256 --backend cuda-imma --iterations 1 --warmup 0
  ncu --import "$BUILD/${name}_imma.ncu-rep" --csv --page details >"$RESULTS/ncu_$name.csv" ||
    die "ncu --import of $BUILD/${name}_imma.ncu-rep failed"
  "$PYTHON" - "$RESULTS/ncu_$name.csv" "$name" <<'EOF' | tee -a "$RESULTS/ncu_summary.txt" | tee -a "$SUMMARY"
import csv, sys
wanted = ["Duration", "Compute (SM) Throughput", "Memory Throughput", "DRAM Throughput", "L2 Cache Throughput",
          "Achieved Occupancy", "Registers Per Thread", "Warp Cycles Per Issued Instruction"]
lines = open(sys.argv[1]).read().splitlines()
header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))  # after any ==PROF== lines
kernels = {}
for row in csv.DictReader(lines[header:]):
    k = kernels.setdefault(row["ID"], {"name": row["Kernel Name"], "grid": row.get("Grid Size", "")})
    if row["Metric Name"] in wanted:
        k[row["Metric Name"]] = f"{row['Metric Value']} {row['Metric Unit']}".strip()
for id_, k in sorted(kernels.items(), key=lambda item: int(item[0])):
    print(f"ncu {sys.argv[2]} {id_} {k['name']} grid {k['grid']}: " + "; ".join(f"{m} {k[m]}" for m in wanted if m in k))
EOF
}

# Lab 2 C8 on the GPU: `bench train precision`, ResNet-18 on CIFAR-10 for
# PRECISION_EPOCHS (5) epochs per lever (fp32, tf32, amp-fp16, amp-bf16,
# channels_last, cuda-graph): first and steady epoch times, images/s, top-1.
stage_precision() {
  need_build octet octet-torch
  run_logged precision "$OCTET" bench train precision --data "$DATA/cifar-10-batches-bin" --device cuda \
    --epochs "${PRECISION_EPOCHS:-5}" --workers 4 --out "$RESULTS/bench_train"
  cat "$RESULTS/bench_train/precision.md" >>"$SUMMARY"
}
