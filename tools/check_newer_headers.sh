#!/usr/bin/env bash
# Compiles every C++ file of a build (clang -fsyntax-only, from its Ninja
# compile commands) against the newer headers that a GPU machine's build
# meets: LibTorch 2.x, with its CUDA paths (the CUDA-graph float peer of
# octet-torch, NCCL's process group) that Debian 12's CPU-only LibTorch 1.13
# never compiles, and a newer libstdc++, which includes fewer headers from
# others; and, as there, without the ONNX library (octet export's fallback).
# Debian 13's libtorch-dev (2.6) and libstdc++-14-dev are downloaded into
# BUILD/newer-headers, not installed.
#
#   tools/check_newer_headers.sh [BUILD]     default build/ (tools/setup.sh build)
#
# What it cannot see: LibTorch changes after 2.6 (pip's is 2.11), GCC's own
# diagnostics (clang 14 parses), the .cu files (nvcc).
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
cd "$(dirname "$0")/.."
build=${1:-build}
[ -f "$build/build.ninja" ] || { echo "check_newer_headers: no $build/build.ninja: build first (tools/setup.sh build)" >&2; exit 2; }
command -v clang++ >/dev/null || { echo "check_newer_headers: clang++ is missing (apt-get install clang)" >&2; exit 2; }
headers="$build/newer-headers"
root="$headers/root"

# Debian 13's package lists in a folder of their own: the machine's apt set-up is not touched.
if [ ! -d "$root/usr/include/c++/14" ] || [ ! -d "$root/usr/include/torch" ]; then
  rm -rf "$headers"
  mkdir -p "$headers/lists/partial" "$headers/cache/archives/partial" "$headers/debs" "$root"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    >"$headers/sources.list"
  apt=(-o "Dir::Etc::SourceList=$PWD/$headers/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$PWD/$headers/lists" -o "Dir::Cache=$PWD/$headers/cache" -o APT::Sandbox::User=root)
  echo "check_newer_headers: downloading Debian 13's libtorch-dev and libstdc++-14-dev"
  if ! { apt-get "${apt[@]}" update -q &&
    (cd "$headers/debs" && apt-get "${apt[@]}" download libtorch-dev libstdc++-14-dev); } >"$headers/apt.log" 2>&1; then
    echo "check_newer_headers: the download failed:" >&2
    tail -n 5 "$headers/apt.log" >&2
    exit 1
  fi
  for deb in "$headers"/debs/*.deb; do dpkg -x "$deb" "$root"; done
fi
# Made by LibTorch's own build, so no package has it.
mkdir -p "$headers/generated/c10/cuda/impl"
echo "#define C10_CUDA_BUILD_SHARED_LIBS" >"$headers/generated/c10/cuda/impl/cuda_cmake_macros.h"

commands="$headers/commands"
rm -rf "$commands" "$headers/logs"
mkdir -p "$commands" "$headers/logs"
ninja -C "$build" -t compdb >"$headers/compdb.json"
cuda_include=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/../include
/usr/bin/python3 - "$headers/compdb.json" "$PWD/$root" "$PWD/$headers/generated" "$cuda_include" "$commands" <<'EOF'
import json, os, shlex, sys
compdb, root, generated, cuda_include, commands = sys.argv[1:]
newer = ["-nostdinc++", "-isystem", f"{root}/usr/include/c++/14",
         "-isystem", f"{root}/usr/include/x86_64-linux-gnu/c++/14", "-isystem", f"{root}/usr/include",
         "-isystem", generated, "-fsyntax-only", "-Wno-unknown-pragmas", "-Wno-unused-command-line-argument"]
has_cuda = os.path.exists(f"{cuda_include}/cuda_runtime_api.h")
seen = set()
for entry in json.load(open(compdb)):
    words = shlex.split(entry.get("command", ""))
    if words and words[0].endswith("ccache"): words = words[1:]
    source = entry["file"]
    # Unity builds' sources (CMake's unity_*.cxx) include the .cpp files they stand for.
    if not words or not words[0].endswith(("c++", "g++")) or not source.endswith((".cpp", ".cxx")) or source in seen:
        continue
    seen.add(source)
    command, skip = ["clang++"] + newer, False
    for word in words[1:]:
        if skip: skip = False; continue
        if word in ("-o", "-MT", "-MF"): skip = True; continue
        # No ONNX library there (pip's onnx has no C++ one): its fallback is what builds.
        if word in ("-MD", "-fopenmp", "-fno-fat-lto-objects", "-DOCTET_HAVE_ONNX") or word.startswith("-flto"):
            continue
        # Debian 12's LibTorch API folder becomes 2.6's.
        command.append(word.replace("/usr/include/torch/csrc/api/include", f"{root}/usr/include/torch/csrc/api/include"))
    if "-DOCTET_HAVE_TORCH" in command and has_cuda:
        command += ["-DOCTET_TORCH_CUDA", "-DUSE_C10D_NCCL", "-DUSE_CUDA", "-isystem", cuda_include]
    name = source.replace("/", "_")
    with open(f"{commands}/{name}.sh", "w") as out:
        out.write(f"cd {shlex.quote(entry['directory'])} && {shlex.join(command)}\n")
EOF
echo "check_newer_headers: $(find "$commands" -name '*.sh' | wc -l) C++ files against LibTorch 2.6 and libstdc++ 14"
# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
failed=$(find "$commands" -name '*.sh' -print0 |
  xargs -0 -P "$(nproc)" -I{} sh -c 'bash "$1" >"$2/$(basename "$1" .sh).log" 2>&1 || basename "$1" .sh' sh {} "$headers/logs")
if [ -n "$failed" ]; then
  for name in $failed; do
    echo "check_newer_headers: $name does not compile:" >&2
    grep -E "error" "$headers/logs/$name.log" | head -n 5 >&2
  done
  exit 1
fi
echo "check_newer_headers: all compile"
