#!/bin/sh
# Fails when a binary of octet calls std::filesystem (or the experimental
# one) through an undefined symbol: at run time the dynamic linker may bind
# it to the copy that another library exports (pip PyTorch's libtorch.so
# carries one built for another libstdc++, and calls into it crash). octet
# uses POSIX calls instead (common/file_io.h).
# Usage: check_std_symbols.sh BINARY...
status=0
for binary in "$@"; do
  if [ ! -f "$binary" ]; then
    echo "check_std_symbols: $binary does not exist" >&2
    status=1
    continue
  fi
  found=$(nm -D -C --undefined-only "$binary" | grep -E 'std::(__cxx11::)?(experimental::)?filesystem' || true)
  if [ -n "$found" ]; then
    echo "$binary calls std::filesystem through symbols another library may define:" >&2
    echo "$found" >&2
    status=1
  else
    echo "$binary: no std::filesystem symbols"
  fi
done
exit $status
