#!/usr/bin/env bash
# `octet report` opened in headless Chromium: the page is self-contained, loads
# with no console message, shows every layer the report lists, and renders to a
# screenshot. Skips (exit 77) without Chromium or Fashion-MNIST.
#   tests/report/report_in_chromium.sh OCTET_BINARY SOURCE_DIR OUTPUT_DIR
set -euo pipefail
octet=$1 source_dir=$2 out=$3

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: Chromium is not installed (Debian: apt-get install chromium); the HTML report was not opened in a browser"
  exit 77
fi
fmnist=${OCTET_FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$fmnist/t10k-labels-idx1-ubyte.gz" ] && [ ! -f "$fmnist/t10k-labels-idx1-ubyte" ]; then
  echo "SKIP: Fashion-MNIST is not in $fmnist (Debian: apt-get install dataset-fashion-mnist)"
  exit 77
fi

rm -rf "$out"
mkdir -p "$out"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Headless Chromium on a file; its console (every console.* call, uncaught errors) goes to $2.
open_page() {
  "$browser" --headless=new --no-sandbox --disable-gpu --user-data-dir="$out/profile" --enable-logging=stderr --v=0 \
    "${@:3}" "file://$1" 2>"$2"
}
console_messages() { grep ':CONSOLE' "$1" || true; }

# The console check must see a console error where there is one.
echo '<!DOCTYPE html><html><body><script>console.error("expected");</script></body></html>' >"$out/console_probe.html"
open_page "$out/console_probe.html" "$out/probe.log" --dump-dom >/dev/null
[[ "$(console_messages "$out/probe.log")" == *expected* ]] ||
  fail "Chromium's console is not captured (no message from console_probe.html in $out/probe.log)"

OMP_NUM_THREADS=1 "$octet" report --checkpoint "$source_dir/models/zoo/lenet5_fmnist.octet" --data "$fmnist" \
  --calib-samples 256 --auto-samples 64 --limit 500 -o "$out/report.html" --json "$out/report.json"
page="$out/report.html"

# Self-contained: nothing fetched from anywhere, no script file.
if grep -Eq '(src|href)="(https?:|//)|<link |<script|@import|url\(' "$page"; then
  fail "$page refers to an external resource or a script: $(grep -Eo '(src|href)="(https?:|//)[^"]*"|<link [^>]*>|<script[^>]*>|@import[^;]*|url\([^)]*\)' "$page" | head -3)"
fi

open_page "$page" "$out/console.log" --dump-dom >"$out/dom.html"
grep -q '</html>' "$out/dom.html" || fail "Chromium did not load $page (see $out/console.log)"
messages=$(console_messages "$out/console.log")
[ -z "$messages" ] || fail "console messages while loading $page: $messages"

# Every layer in the report's JSON has its section, and LeNet-5's weighted layers are all there.
mapfile -t ids < <(grep -o '"id": "[^"]*"' "$out/report.json" | cut -d'"' -f4)
[ "${#ids[@]}" -ge 6 ] || fail "report.json lists ${#ids[@]} layers; LeNet-5 has at least 6 (input, 2 conv, 3 linear)"
for id in "${ids[@]}"; do
  grep -q "<article class=\"layer\" id=\"$id\"" "$out/dom.html" || fail "layer $id is missing from the rendered page"
  grep -q "href=\"#$id\"" "$out/dom.html" || fail "layer $id is missing from the worst-first table"
done
# Not `printf | grep -q`: grep quits at the first match, and under pipefail printf's write to the
# closed pipe can fail the check (CI saw "layer conv2 is not in report.json" with it there).
for layer in conv1 conv2 fc1 fc2 fc3; do
  [[ " ${ids[*]} " == *" layer-$layer "* ]] || fail "layer $layer is not in report.json"
done

open_page "$page" "$out/screenshot.log" --screenshot="$out/report.png" --window-size=1280,2200 --hide-scrollbars
[ "$(head -c 4 "$out/report.png" | tail -c 3)" = PNG ] || fail "no PNG screenshot at $out/report.png"
size=$(stat -c %s "$out/report.png")
# A blank 1280x2200 page compresses to a few kB; charts and tables take far more.
[ "$size" -gt 60000 ] || fail "the screenshot $out/report.png is only $size bytes: is the page blank?"
echo "report_in_chromium: ${#ids[@]} layers rendered, no console message, screenshot $out/report.png ($size bytes)"
