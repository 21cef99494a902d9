#!/usr/bin/env bash
# The order and failure handling of tools/gpu_check.sh's `all`, which runs in
# a GPU session's scarce minutes, the diagnostics it adds when TIME_LIMIT
# leaves time, and KEEP_GOING=1's stages run one after another: its stages
# replaced by stubs that record when they start and end, in a copy of the
# script whose root is a scratch folder.
# Usage: gpu_check_plan.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
source_dir=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch/tools"

# The stubs go where the script's stages are dispatched.
marker='[ $# -gt 0 ] || die "name the stages'
grep -qF "$marker" "$source_dir/tools/gpu_check.sh" || {
  echo "gpu_check_plan: the dispatch line of tools/gpu_check.sh changed: update this test" >&2
  exit 1
}
awk -v marker="$marker" 'index($0, marker) == 1 { print "source \"$ROOT/stubs.sh\"" } { print }' \
  "$source_dir/tools/gpu_check.sh" >"$scratch/tools/gpu_check.sh"
cp "$source_dir"/tools/gpu_check_{deps,timing,sass,gates}.sh "$scratch/tools/"  # sourced by it
cat >"$scratch/stubs.sh" <<'EOF'
# Each stage logs its start and end; FAIL names the stage that dies. test
# ends only once train has started (or after 30 s): side by side, the log
# then has train's start before test's end.
wait_for_train() {
  for _ in $(seq 300); do
    ! grep -q "^start train$" "$ROOT/events" || return 0
    sleep 0.1
  done
}
for stage in deps configure build sass wgmma pdl side_stream split_k cuda bench test train profile sanitize; do
  eval "stage_$stage() {
    echo \"start $stage\" >>\"\$ROOT/events\"
    echo \"$stage \${OCTET_WGMMA:-} \${OCTET_PDL:-} \${OCTET_SIDE_STREAM:-} \${OCTET_SPLIT_K:-}\" >>\"\$ROOT/gate_events\"
    case $stage in wgmma | pdl | side_stream | split_k) rm -f \"\$BUILD/${stage}_passed\" ;; esac
    [ $stage != test ] || wait_for_train
    [ \"\${FAIL:-}\" != $stage ] || die \"$stage broke\"
    case $stage in wgmma | pdl | side_stream | split_k) touch \"\$BUILD/${stage}_passed\" ;; esac
    echo \"end $stage\" >>\"\$ROOT/events\"
  }"
done
EOF

failures=0
# A failure prints what the run left (its exit status, the stubs' log, the
# summary and the script's output): a failure seen only on CI says why there.
fail() {
  echo "FAILED: $1" >&2
  failures=$((failures + 1))
  { echo "--- run $run_name: exit status $status; events:"; echo "$events"
    echo "--- summary:"; echo "$summary"
    echo "--- output:"; cat "$scratch/$run_name.log"; } | sed 's/^/    /' >&2
}
# run NAME [VAR=value...]: the stages of $stages (default all) with BUNDLE=1;
# sets status, events (the stubs' log) and summary.
run() {
  run_name=$1
  shift
  rm -f "$scratch/events" "$scratch/gate_events"
  status=0
  env -u TIME_LIMIT "$@" OUT="$scratch/out_$run_name" BUNDLE=1 bash "$scratch/tools/gpu_check.sh" ${stages:-all} \
    >"$scratch/$run_name.log" 2>&1 || status=$?
  events=$(cat "$scratch/events" 2>/dev/null || true)
  gate_events=$(cat "$scratch/gate_events" 2>/dev/null || true)
  summary=$(cat "$scratch/out_$run_name/summary.txt")
}
line_of() { echo "$events" | grep -n "^$1\$" | cut -d: -f1; }
# Here-strings, not `echo | grep -q`: bash's echo writes line by line, grep -q quits at its match, and under
# pipefail echo's next write to the closed pipe fails the check (CI saw "after a failed pdl stage it stays off").
has() { grep -q "^$1\$" <<<"$events"; }

run passing
[ "$status" -eq 0 ] || fail "all passes"
[ "$(echo "$events" | head -n 16 | tr '\n' ' ')" = "start deps end deps start build end build start sass end sass \
start wgmma end wgmma start pdl end pdl start side_stream end side_stream start split_k end split_k start bench end bench " ] ||
  fail "deps, build, sass, the gates (wgmma, pdl, side_stream, split_k), bench end before test and train start"
# The gated switches as each stage saw them: OCTET_WGMMA, OCTET_PDL, OCTET_SIDE_STREAM, OCTET_SPLIT_K.
grep -q "^sass 0 0 0 0$" <<<"$gate_events" || fail "the gated features are off before their stages"
grep -q "^pdl 1 0 0 0$" <<<"$gate_events" || fail "the wgmma tiles are on after their stage passed"
grep -q "^bench 1 1 1 1$" <<<"$gate_events" || fail "every gated feature is on after its stage"
[ "$(line_of "start train")" -lt "$(line_of "end test")" ] || fail "test and train run side by side"
! grep -q cuda <<<"$events" || fail "the cuda stage is not in all"
[ "$(echo "$summary" | grep -c "done in [0-9]* s")" -eq 10 ] || fail "the summary gives each stage's time"
[ -f "$scratch/out_passing/results.tar.gz" ] || fail "the results come back packed"
! has "start profile" || fail "no TIME_LIMIT, no profile"
grep -q "sanitize: skipped: .* left of TIME_LIMIT=unset" <<<"$summary" || fail "the summary says sanitize was skipped"

run time_left TIME_LIMIT=3600
[ "$status" -eq 0 ] || fail "all passes with the diagnostics"
[ "$(echo "$events" | tail -n 4 | tr '\n' ' ')" = "start profile end profile start sanitize end sanitize " ] ||
  fail "profile and sanitize run last when TIME_LIMIT leaves time"

run bench_fails FAIL=bench
[ "$status" -ne 0 ] || fail "a failed bench fails the run"
{ has "end test" && has "end train"; } || fail "a failed bench still lets test and train run"
grep -q "FAILED: bench broke" <<<"$summary" || fail "the summary says bench failed"

run wgmma_fails FAIL=wgmma
[ "$status" -ne 0 ] || fail "a failed wgmma stage fails the run"
{ has "end bench" && has "end test"; } || fail "a failed wgmma stage still lets bench and test run"
grep -q "^bench 0 1 1 1$" <<<"$gate_events" || fail "after a failed wgmma stage the tiles stay off"

run pdl_fails FAIL=pdl
{ [ "$status" -ne 0 ] && has "end bench"; } || fail "a failed pdl stage fails the run, bench still runs"
grep -q "^bench 1 0 1 1$" <<<"$gate_events" || fail "after a failed pdl stage it stays off"

run side_stream_fails FAIL=side_stream
grep -q "^bench 1 1 0 1$" <<<"$gate_events" || fail "after a failed side_stream stage it stays off"

run split_k_fails FAIL=split_k
grep -q "^bench 1 1 1 0$" <<<"$gate_events" || fail "after a failed split_k stage it stays off"

run wgmma_fixed FAIL=wgmma OCTET_WGMMA=1 OCTET_PDL=0
grep -q "^bench 1 0 1 1$" <<<"$gate_events" || fail "switches set by the caller are kept"

run test_fails FAIL=test
[ "$status" -ne 0 ] || fail "a failed test fails the run"
has "end train" || fail "train ends though test failed beside it"
grep -q "FAILED: stages test failed" <<<"$summary" || fail "the summary names the failed stage"

run profile_fails FAIL=profile TIME_LIMIT=3600
{ [ "$status" -ne 0 ] && has "end sanitize"; } || fail "a failed profile fails the run, sanitize still runs"

run build_fails FAIL=build
{ [ "$status" -ne 0 ] && ! has "start sass"; } || fail "a failed build stops the run"

stages="cuda bench profile" run keep_going KEEP_GOING=1 FAIL=cuda
[ "$status" -ne 0 ] || fail "KEEP_GOING=1: a failed stage fails the run"
[ "$(echo "$events" | tr '\n' ' ')" = \
  "start deps end deps start configure end configure start cuda start bench end bench start profile end profile " ] ||
  fail "KEEP_GOING=1: deps and configure once, then every stage named in turn, past the failed one"
grep -q "FAILED: stages cuda failed" <<<"$summary" || fail "KEEP_GOING=1: the summary names the failed stage"

stages="cuda bench" run stops_at_failure FAIL=cuda
{ [ "$status" -ne 0 ] && ! has "start bench"; } || fail "without KEEP_GOING a failed stage stops the run"

stages="bench bnech" run unknown_stage
{ [ "$status" -ne 0 ] && [ -z "$events" ]; } || fail "a misspelt stage stops the run before any stage starts"
grep -q "unknown stage 'bnech'" <<<"$summary" || fail "the summary names the misspelt stage"

[ $failures -eq 0 ] || exit 1
echo "gpu_check_plan: all passes, in order, and failures are reported as expected"
