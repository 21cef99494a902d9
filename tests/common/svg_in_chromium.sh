#!/usr/bin/env bash
# Every kind of SVG chart octet writes, rendered by headless Chromium into a
# PNG kept in OUTPUT_DIR for a person to look at: bench train's plots
# (svg_gallery: a diverged run among nine, workers' seconds over decades),
# histograms with log and linear counts, and `octet forecast speed` and
# `study`'s plots. Each screenshot must not be blank and must show the colour
# of every line in its legend. Skips (exit 77) without Chromium.
#   tests/common/svg_in_chromium.sh SVG_GALLERY OCTET_BINARY OUTPUT_DIR
set -euo pipefail
gallery=$1 octet=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: Chromium is not installed (Debian: apt-get install chromium); no chart was rendered"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

"$gallery" "$out"
# Made-up step logs of three depths (the loss falls as a power law, with noise) for forecast study.
for depth in 20 32 44; do
  awk -v d=$depth 'BEGIN { print "epoch,step,loss,acc"; srand(d)
    for (s = 1; s <= 1200; s++) { l = 0.25 + (2.1 + d / 100) / (1 + s / (150 + d)) ^ 0.9 + 0.05 * (rand() - 0.5)
      printf "%d,%d,%.5f,%.3f\n", int((s - 1) / 200) + 1, s, l, 100 * (1 - l / 2.6) } }' >"$out/resnet$depth.csv"
done
"$octet" forecast study --run resnet20="$out/resnet20.csv" --run resnet32="$out/resnet32.csv" \
  --run resnet44="$out/resnet44.csv" --svg "$out/forecast_study.svg" >"$out/forecast_study.txt"
"$octet" forecast speed --steps 10000 --svg "$out/forecast_speed.svg" >"$out/forecast_speed.txt"

count=0
for svg in "$out"/*.svg; do
  png=${svg%.svg}.png
  size=$(grep -o '<svg [^>]*' "$svg" | sed -E 's/.*width="([0-9]+)" height="([0-9]+)".*/\1,\2/')
  "$browser" --headless=new --no-sandbox --disable-gpu --user-data-dir="$out/profile" --hide-scrollbars \
    --default-background-color=ffffffff --window-size="$size" --screenshot="$png" "file://$svg" 2>"${png%.png}.log"
  [ -f "$png" ] || fail "Chromium wrote no screenshot of $svg (see ${png%.png}.log)"
  # The legend's colours: one stroke per entry.
  mapfile -t colours < <(grep -B1 'class="legend"' "$svg" | grep -o 'stroke="#[0-9a-f]*"' | cut -d'"' -f2 | sort -u)
  python3 "$here/png_colours.py" "$png" 20 "${colours[@]}" || fail "$png does not show its chart"
  count=$((count + 1))
done
[ "$count" -ge 7 ] || fail "only $count charts rendered"
grep -q 'class="off-scale"' "$out/bench_train_optimizers_steps.svg" || fail "the diverged run is not marked off the scale"
echo "svg_in_chromium: $count charts rendered into $out/*.png"
