#!/usr/bin/env bash
# fetch.sh: puts ONNX Runtime's C headers and Linux x64 library into a cache folder, from the npm registry (npm pack).
# It must never write into the project tree, run a package's scripts, or use the network when the cache is complete.
#
# Where from, and why:
#   headers  com.github.asus4.onnxruntime@0.4.9  (onnxruntime_c_api.h, ORT_API_VERSION 29, and the *_config_keys.h)
#   library  onnxruntime-node@1.30.0             (bin/napi-v6/linux/x64/libonnxruntime.so.1, ORT 1.30.0, API 1..30)
# The library is the one Microsoft publishes itself (onnxruntime-node, from the microsoft/onnxruntime repository);
# the Unity package is a third party's repackaging, so only plain-text headers are taken from it. ORT's C API is
# append-only and a 1.30 library serves every API version up to 30, so a plugin built against the API-29 header
# gets exactly the table it was compiled for. MLK_ORT_LIB_FROM=unity takes the 1.29.0 library from the Unity
# package instead (one download fewer, header and library from one release).
#
# Usage: engines/ort/fetch.sh [--print-dir]     (MLK_ORT_CACHE overrides the folder)
# Exit: 0 ready (or already cached), 1 a failure (npm missing, offline, a checksum or a check failed).
set -euo pipefail

cache="${MLK_ORT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memleak/ort}"
if [ "${1:-}" = "--print-dir" ]; then
  echo "$cache"
  exit 0
fi

hdr_pkg="com.github.asus4.onnxruntime@0.4.9"
hdr_sha512="064cf176e499f4891e0cfe90f25cf64c553689eee1492bd2ed921fccca28131a2ad02373267bae19a509ec8b288c182a3b8a2e0f58d76a1f0e63225b08ddbd16"
hdr_dir="package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers"
from="${MLK_ORT_LIB_FROM:-node}"
case "$from" in
  node)
    lib_pkg="onnxruntime-node@1.30.0"
    lib_sha512="b7086cd42d82fc1164cf5c9ce4e634288536194aba0d444eee10f86f1e50d90cb79c0309c115d6f31537355733136f5503d96894b3987a9a03f1f8d318e7c8ab"
    lib_member="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
    lib_version="1.30.0" ;;
  unity)
    lib_pkg="$hdr_pkg"
    lib_sha512="$hdr_sha512"
    lib_member="package/Plugins/Linux/x64/libonnxruntime.so"
    lib_version="1.29.0" ;;
  *)
    echo "fetch.sh: MLK_ORT_LIB_FROM=$from: expected node (ORT 1.30.0, the default) or unity (ORT 1.29.0)" >&2
    exit 1 ;;
esac
stamp="headers=$hdr_pkg api=29 library=$lib_pkg ort=$lib_version"

die() { echo "fetch.sh: $*" >&2; exit 1; }

# The checks a cached or fresh copy must pass: header present with its API version, library an x86-64 ELF
# shared object exporting OrtGetApiBase at the expected version.
verify() {
  local dir=$1
  [ -f "$dir/include/onnxruntime_c_api.h" ] || { echo "no include/onnxruntime_c_api.h in $dir"; return 1; }
  grep -q '^#define ORT_API_VERSION 29$' "$dir/include/onnxruntime_c_api.h" ||
    { echo "$dir/include/onnxruntime_c_api.h: ORT_API_VERSION is not 29"; return 1; }
  local lib="$dir/lib/libonnxruntime.so.1"
  [ -f "$lib" ] || { echo "no lib/libonnxruntime.so.1 in $dir"; return 1; }
  [ "$(head -c 4 "$lib" | od -An -c | tr -d ' ')" = '177ELF' ] || { echo "$lib is not an ELF file"; return 1; }
  if command -v readelf >/dev/null; then
    # Read whole outputs first: grep -q closing a pipe early would fail readelf under pipefail.
    local hdr syms
    hdr=$(readelf -h "$lib") && syms=$(readelf -W --dyn-syms "$lib") || { echo "readelf cannot read $lib"; return 1; }
    grep -q 'X86-64' <<<"$hdr" || { echo "$lib is not an x86-64 library"; return 1; }
    grep -q " OrtGetApiBase@@VERS_$lib_version\$" <<<"$syms" ||
      { echo "$lib does not export OrtGetApiBase@@VERS_$lib_version"; return 1; }
  else
    grep -q "OrtGetApiBase" "$lib" || { echo "$lib does not name OrtGetApiBase"; return 1; }
  fi
  return 0
}

if [ -f "$cache/STAMP" ] && [ "$(cat "$cache/STAMP")" = "$stamp" ]; then
  if why=$(verify "$cache"); then
    echo "fetch.sh: ONNX Runtime $lib_version already in $cache"
    exit 0
  fi
  echo "fetch.sh: the cached copy fails a check ($why); fetching again" >&2
fi

command -v npm >/dev/null ||
  die "npm not found: install Node.js's npm (Debian: apt-get install npm), then run engines/ort/fetch.sh again"
command -v tar >/dev/null || die "tar not found"
command -v sha512sum >/dev/null || die "sha512sum not found (Debian package coreutils)"

mkdir -p "$(dirname "$cache")"
tmp=$(mktemp -d "$(dirname "$cache")/ort-fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# npm pack downloads the tarball only: no install, no scripts. Its own integrity check compares against the
# registry's metadata; the sha512 pinned here also catches a republished tarball.
pack() {
  local pkg=$1 sum=$2 file
  echo "fetch.sh: npm pack $pkg" >&2
  # A throw-away npm cache: npm would otherwise keep a second copy of both tarballs (~260 MB) in ~/.npm.
  if ! (cd "$tmp" && npm pack --loglevel=error --ignore-scripts --cache "$tmp/npm-cache" "$pkg" \
        >"$tmp/npm.out" 2>"$tmp/npm.err"); then
    echo "fetch.sh: npm pack $pkg failed (is the npm registry reachable? npm says:)" >&2
    grep -v -e '^npm error  *at ' -e '^npm warn' "$tmp/npm.err" | head -n 5 >&2 || true
    exit 1
  fi
  file="$tmp/$(tail -n 1 "$tmp/npm.out")"
  [ -f "$file" ] || die "npm pack $pkg did not leave the tarball it named ($file)"
  local got
  got=$(sha512sum "$file" | cut -d' ' -f1)
  [ "$got" = "$sum" ] || die "$pkg: sha512 $got, expected $sum"
  printf '%s\n' "$file"
}

hdr_tgz=$(pack "$hdr_pkg" "$hdr_sha512")
if [ "$lib_pkg" = "$hdr_pkg" ]; then lib_tgz=$hdr_tgz; else lib_tgz=$(pack "$lib_pkg" "$lib_sha512"); fi

new="$tmp/ort"
mkdir -p "$new/include" "$new/lib" "$tmp/x"
tar -xzf "$hdr_tgz" -C "$tmp/x" "$hdr_dir" || die "$hdr_pkg: no $hdr_dir in the tarball"
cp "$tmp/x/$hdr_dir"/*.h "$new/include/"
tar -xzf "$lib_tgz" -C "$tmp/x" "$lib_member" || die "$lib_pkg: no $lib_member in the tarball"
cp "$tmp/x/$lib_member" "$new/lib/libonnxruntime.so.1"
chmod 0644 "$new/include"/*.h
chmod 0755 "$new/lib/libonnxruntime.so.1"
why=$(verify "$new") || die "$why"
echo "$stamp" >"$new/STAMP"

# Swap the finished folder in, so an interrupted fetch never leaves a half-filled cache behind.
rm -rf "$cache.old"
[ -e "$cache" ] && mv "$cache" "$cache.old"
mv "$new" "$cache"
rm -rf "$cache.old"
echo "fetch.sh: ONNX Runtime $lib_version ready in $cache (headers: API 29); cmake builds engine_ort.so from it"
