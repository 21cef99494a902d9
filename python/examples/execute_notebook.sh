#!/bin/sh
# Executes a notebook with jupyter nbconvert; a failing cell fails the test.
# Skips (status 77, the reason on stdout) where the Python has no jupyter,
# nbconvert or ipykernel: pip PyTorch environments, such as the GPU machine's,
# often lack them, and their absence says nothing about octet.
#
#   execute_notebook.sh PYTHON NOTEBOOK OUTPUT_DIR
set -eu
python=$1 notebook=$2 out=$3
missing=$("$python" -c "
import importlib.util
print(' '.join(m for m in ('jupyter_core', 'nbconvert', 'ipykernel') if importlib.util.find_spec(m) is None))
")
if [ -n "$missing" ]; then
  echo "SKIP: $python lacks $missing (Debian: apt-get install jupyter-nbconvert python3-nbconvert python3-ipykernel); $notebook was not executed"
  exit 77
fi
exec "$python" -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=900 \
  --ExecutePreprocessor.kernel_name=python3 --output-dir "$out" --output "$(basename "$notebook")" "$notebook"
