# shellcheck shell=bash
# Sourced by the `octet bench` test scripts: skips (exit 77) without
# Fashion-MNIST, gives them $python ($PYTHON, default python3), a scratch
# folder $dir removed on exit, passive OpenMP waits, and fail / finish to
# count failed checks and end with the script's status.
fmnist=/usr/share/datasets/fashion-mnist
[ -d "$fmnist" ] || { echo "skipped: no Fashion-MNIST in $fmnist"; exit 77; }
# shellcheck disable=SC2034  # read by the scripts that source this
python=${PYTHON:-python3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export OMP_WAIT_POLICY=passive
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# finish MESSAGE: MESSAGE and status 0 when every check passed, else the count and 1.
finish() {
  [ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
  echo "$1"
}
