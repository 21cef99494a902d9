#!/usr/bin/env bash
# tests/tools/ctest_summary.py on the JUnit file of a real ctest run: a scratch
# project with a passing, a failing and a timed-out entry, a missing
# executable, a GoogleTest skip, script skips (exit 77) with and without a
# "SKIP:" line, two skips of one cause behind different names, and a disabled
# entry. The summary must count each where it belongs and keep ctest's
# failure apart from its own.
#   ctest_summary.sh PYTHON SOURCE_DIR CMAKE CTEST SCRATCH_DIR
set -euo pipefail
python=$1 source_dir=$2 cmake=$3 ctest=$4 scratch=$5
rm -rf "$scratch"
mkdir -p "$scratch/project"
cat >"$scratch/project/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(summary_sample NONE)
enable_testing()
add_test(NAME passes COMMAND sh -c "echo fine")
add_test(NAME fails COMMAND sh -c "echo broken; exit 1")
add_test(NAME times_out COMMAND sleep 30)
set_tests_properties(times_out PROPERTIES TIMEOUT 1)
add_test(NAME cannot_start COMMAND /no/such/test_binary)
add_test(NAME disabled COMMAND true)
set_tests_properties(disabled PROPERTIES DISABLED TRUE)
add_test(NAME gtest_imma COMMAND sh -c "printf '[ RUN      ] B.M/cuda_imma\\n/src/t.cpp:35: Skipped\\ncuda-imma: no CUDA device: none found\\n\\n[  SKIPPED ] B.M/cuda_imma (0 ms)\\n'")
add_test(NAME gtest_dp4a COMMAND sh -c "printf '[ RUN      ] B.M/cuda_dp4a\\n/src/t.cpp:35: Skipped\\ncuda-dp4a: no CUDA device: none found\\n\\n[  SKIPPED ] B.M/cuda_dp4a (0 ms)\\n'")
add_test(NAME gtest_plain COMMAND sh -c "printf '[ RUN      ] A.B\\n/src/t.cpp:9: Skipped\\n\\n[  SKIPPED ] A.B (0 ms)\\n'")
set_tests_properties(gtest_imma gtest_dp4a gtest_plain PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
add_test(NAME script_marked COMMAND sh -c "echo 'chatter'; echo 'SKIP: Chromium is not installed'; echo 'more chatter'; exit 77")
add_test(NAME script_unmarked COMMAND sh -c "echo 'first'; echo 'no Fashion-MNIST here'; exit 77")
set_tests_properties(script_marked script_unmarked PROPERTIES SKIP_RETURN_CODE 77)
EOF
"$cmake" -S "$scratch/project" -B "$scratch/build" >/dev/null
status=0
"$ctest" --test-dir "$scratch/build" --output-junit junit.xml >"$scratch/ctest.log" 2>&1 || status=$?
[ "$status" -ne 0 ] || { echo "FAILED: the sample's ctest run should fail" >&2; exit 1; }

got=$("$python" "$source_dir/tests/tools/ctest_summary.py" "$scratch/build/junit.xml")
want="ctest: ran 4: passed 1, failed 3; skipped 5: no CUDA device: none found (2), Chromium is not installed (1), no Fashion-MNIST here (1), no reason given (1); disabled 1; failed: fails times_out cannot_start"
if [ "$got" != "$want" ]; then
  echo "FAILED: the summary of the sample run" >&2
  echo "  got:  $got" >&2
  echo "  want: $want" >&2
  exit 1
fi
if "$python" "$source_dir/tests/tools/ctest_summary.py" "$scratch/missing.xml" 2>"$scratch/err"; then
  echo "FAILED: a missing JUnit file must fail" >&2
  exit 1
fi
grep -q "cannot read $scratch/missing.xml" "$scratch/err" || { echo "FAILED: no message for a missing file" >&2; exit 1; }
echo "ctest_summary: $got"
