# The stages of tools/gpu_check.sh (which sources this file) that bring what
# the GPU machine lacks: carry, on the Debian build machine, fills .gpu/ with
# the header and test packages, CIFAR-10, the imported models and (where
# they fit) Fashion-MNIST; deps, on the GPU machine, unpacks them. They use
# its helpers and variables.

# The Debian packages the GPU machine lacks (headers and test libraries).
CARRIED_PACKAGES=(libeigen3-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev googletest zlib1g-dev
  libbenchmark-dev pybind11-dev libssl-dev)

stage_carry() {
  need apt-get "the carry stage runs on the Debian build machine"
  local cifar="$ROOT/../shared/data/cifar10"
  [ -f "$cifar/cifar10-jpeg.tar.xz" ] || die "$cifar/cifar10-jpeg.tar.xz is missing"
  rm -rf "$CARRIED"
  mkdir -p "$CARRIED/debs"
  (cd "$CARRIED/debs" && apt-get download "${CARRIED_PACKAGES[@]}") >"$RESULTS/carry.log" 2>&1 ||
    die "apt-get download failed (run apt-get update first?): $(tail -n 5 "$RESULTS/carry.log")"
  # CARRY_CIFAR10=0: for a call on a machine whose deps stage made CIFAR-10 already.
  if [ "${CARRY_CIFAR10:-1}" = 1 ]; then
    mkdir -p "$CARRIED/cifar10"
    cp -r "$cifar/cifar10-jpeg.tar.xz" "$cifar/order" "$cifar/make_cifar10_bin.py" "$CARRIED/cifar10/"
  fi
  # The imported models of the `imported` stage, made by this machine's octet (with the ONNX library).
  local host_octet="$ROOT/build/tools/octet"
  if [ "${CARRY_MODELS:-1}" = 0 ]; then
    note "carry: no models (CARRY_MODELS=0): Fashion-MNIST fits instead"
  elif [ -x "$host_octet" ] && /usr/bin/python3 -c "import torchvision" 2>/dev/null; then
    run_logged models /usr/bin/python3 "$ROOT/python/tools/gpu_models.py" \
      --octet "$host_octet" --data "$ROOT/.data/cifar-10-batches-bin" --out "$CARRIED/models"
  else
    note "carry: WARNING: no $host_octet or no torchvision for /usr/bin/python3: no models for stage imported"
  fi
  # Fashion-MNIST, which that machine lacks (2026-11-26): its raw IDX files
  # (the tests read either form) in xz, 25 MiB against 29.5 for the .gz ones.
  # Carried only where it fits: the tree has grown since.
  local raw="$CARRIED/fashion-mnist"
  [ -f "$FASHION_MNIST/t10k-images-idx3-ubyte.gz" ] ||
    die "no Fashion-MNIST in $FASHION_MNIST (apt-get install dataset-fashion-mnist)"
  mkdir -p "$raw"
  for gz in "$FASHION_MNIST"/*-ubyte.gz; do gzip -dc "$gz" >"$raw/$(basename "$gz" .gz)"; done
  tar cf - -C "$raw" . | xz -9e -T0 >"$CARRIED/fashion-mnist.tar.xz"
  rm -r "$raw"
  # Bytes as they travel (not disk blocks), against 63 of the 64 MiB a call carries.
  local tree_bytes carried_bytes limit=$((63 * 1024 * 1024))
  tree_bytes=$(git -C "$ROOT" ls-files -z | (cd "$ROOT" && xargs -0 du -cb) | tail -n 1 | cut -f1)
  carried_bytes=$(du -sb "$CARRIED" | cut -f1)
  if [ $((tree_bytes + carried_bytes)) -ge "$limit" ]; then
    rm "$CARRIED/fashion-mnist.tar.xz"
    carried_bytes=$(du -sb "$CARRIED" | cut -f1)
    note "carry: WARNING: Fashion-MNIST left out (the tree and .gpu would pass 63 MiB): on the GPU machine the" \
      "tests on it fail (Trainer, Precision, quantize_is_deterministic, python_pytest); carry it in a call of its own," \
      "on the machine a call with CIFAR-10 used (CARRY_MODELS=0 CARRY_CIFAR10=0)"
  fi
  [ $((tree_bytes + carried_bytes)) -lt "$limit" ] ||
    die "the tree and .gpu hold $(((tree_bytes + carried_bytes) >> 20)) MiB: too close to the 64 MiB a device call carries"
  note "carry: .gpu holds $((carried_bytes >> 20)) MiB ($(find "$CARRIED/debs" -name "*.deb" | wc -l) packages," \
    "$([ -d "$CARRIED/cifar10" ] && echo "CIFAR-10" || echo "no CIFAR-10")$([ -f "$CARRIED/models/models.tar.xz" ] && echo ", models")$([ -f "$CARRIED/fashion-mnist.tar.xz" ] && echo ", Fashion-MNIST"))"
}

stage_deps() {
  need dpkg "dpkg -x unpacks the carried Debian packages"
  [ -d "$CARRIED/debs" ] || die "$CARRIED/debs is missing: carry the Debian packages (docs/gpu.md)"
  mkdir -p "$DEPS"
  for deb in "$CARRIED"/debs/*.deb; do
    [ -e "$deb" ] || die "no .deb in $CARRIED/debs"
    dpkg -x "$deb" "$DEPS" || die "dpkg -x $deb failed"
  done
  # zlib1g-dev's libz.so points at a file its package does not have: use the system one.
  local libdir="$DEPS/usr/lib/x86_64-linux-gnu"
  rm -f "$libdir/libz.a" "$libdir/libz.so"
  [ -e /lib/x86_64-linux-gnu/libz.so.1 ] || die "/lib/x86_64-linux-gnu/libz.so.1 is missing (zlib)"
  ln -s /lib/x86_64-linux-gnu/libz.so.1 "$libdir/libz.so"
  # OpenSSL's libcrypto (SHA-256 of checkpoints, added after the 2026-11-22
  # GPU build) is linked from the carried static archive, whatever that
  # machine has; its configuration headers join the others, as the compiler
  # does not search $DEPS's multiarch folder.
  rm -f "$libdir/libcrypto.so" "$libdir/libssl.so"
  if [ -d "$DEPS/usr/include/x86_64-linux-gnu/openssl" ]; then
    mv "$DEPS"/usr/include/x86_64-linux-gnu/openssl/*.h "$DEPS/usr/include/openssl/"
    rm -r "$DEPS/usr/include/x86_64-linux-gnu/openssl"
  fi
  [ -f "$libdir/libcrypto.a" ] || die "libcrypto.a is not in the carried packages (libssl-dev)"
  for header in Eigen3/Eigen/Core CLI/CLI.hpp nlohmann/json.hpp gtest/gtest.h pybind11/pybind11.h zlib.h \
    openssl/evp.h openssl/configuration.h; do
    [ -e "$DEPS/usr/include/$header" ] || [ -e "$DEPS/usr/include/eigen3/${header#Eigen3/}" ] ||
      die "header $header is not in the carried packages"
  done
  if [ ! -f "$DATA/cifar-10-batches-bin/test_batch.bin" ]; then
    [ -f "$CARRIED/cifar10/make_cifar10_bin.py" ] || die "$CARRIED/cifar10 is missing: carry CIFAR-10 (docs/gpu.md)"
    run_logged cifar10 "$PYTHON" "$CARRIED/cifar10/make_cifar10_bin.py" "$DATA"
  fi
  [ -f "$DATA/cifar-10-batches-bin/test_batch.bin" ] || die "CIFAR-10 was not made in $DATA"
  note "deps: packages unpacked into $DEPS, CIFAR-10 in $DATA/cifar-10-batches-bin"
  # Fashion-MNIST from .gpu if the machine has none.
  if [ ! -f "$FASHION_MNIST/train-images-idx3-ubyte.gz" ] && [ ! -f "$FASHION_MNIST/train-images-idx3-ubyte" ]; then
    if [ -f "$CARRIED/fashion-mnist.tar.xz" ]; then
      mkdir -p "$FASHION_MNIST"
      tar xJf "$CARRIED/fashion-mnist.tar.xz" -C "$FASHION_MNIST" ||
        die "could not unpack $CARRIED/fashion-mnist.tar.xz into $FASHION_MNIST"
      note "deps: Fashion-MNIST unpacked into $FASHION_MNIST"
    else
      note "deps: WARNING: no Fashion-MNIST in $FASHION_MNIST nor in .gpu: the tests on it (trainer, zoo LeNet-5, Python) will fail"
    fi
  fi
}
