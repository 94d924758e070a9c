#!/usr/bin/env bash
# fetch.sh: puts OpenVINO releases' runtime libraries and C headers into a cache folder, from the PyPI `openvino` wheels
# (pip download: the ordinary client, no install). It must never pip-install anything, write into the project tree,
# download a release nobody asked for, or use the network when the cache already holds what was asked.
#
# Where from, and why: the `openvino` wheel (manylinux, x86-64) is the runtime itself, not a Python-only layer:
# openvino/libs/ holds libopenvino.so.<YYMP>, libopenvino_c.so.<YYMP> (the C API engine_openvino.so drives), the CPU
# plugin, the ONNX and IR frontends and TBB, finding each other through $ORIGIN, so the folder is kept whole; from
# 2024.3.0 on, openvino/include/ holds the C headers. Wheels before 2024.3.0 (2023.0.0, 2023.3.0, 2024.0.0, 2024.1.0
# and 2024.2.0 were checked) carry no libopenvino_c and no headers: they are not offered. Each release lands in
# <cache>/<version>/{libs,include,STAMP}, checked against the sha256 pinned below (of the cp311 wheel pip picks for the
# flags in `download`).
#
# Usage: engines/openvino/fetch.sh [--versions "V ..."]  the default release, then each release V (commas work too;
#                                                       also MLK_OPENVINO_VERSIONS; "default" = the default only,
#                                                       "tested" = the releases the tests use, "all" = every pin)
#        engines/openvino/fetch.sh --print-dir           the cache folder (MLK_OPENVINO_CACHE overrides it)
#        engines/openvino/fetch.sh --print-default       the default release (the one engine_openvino.so is built from)
#        engines/openvino/fetch.sh --list                the pinned releases, and which are cached
# Exit: 0 ready (or already cached), 1 a failure (pip missing, offline, a checksum or a check failed), 2 usage.
set -euo pipefail

cache="${MLK_OPENVINO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memleak/openvino}"

# The release the plugin is built against (its headers) and loads when no version is asked for. CMake reads this line.
default_version=2026.4.1
# The releases the tests and ci/setup.sh use: the default and one from the year before it, from before the C API's
# element-type enum lost its UNDEFINED member (2026.0), so the release axis also crosses that boundary.
tested_versions="2024.6.0 $default_version"

# sha256 of each cp311 wheel, every release from 2024.3.0 (the first whose wheel carries the C API) to 2026.4.1.
declare -A pins=(
  [2024.3.0]=eeb8cd2dde4b64a463d11be690fc3d4b5bc29d5eb0bcfb7e41707a23c317c8c9
  [2024.4.0]=4bd3e21a70eff12166bae3b5ea824787b8c766f975f39e3f2d93729b47b74cb6
  [2024.5.0]=5a9109046fc11a55bcdf85075a589b67145a81f3bbfb216225d5784812d8a954
  [2024.6.0]=444a6d3a746dd728654877993c30582faefcad2868c80ec261839a144b8925bc
  [2025.0.0]=d66c9cb37cdf2490b54645e5e35bb21efae44c232cafcd7d4bbc7774d5830143
  [2025.1.0]=aa3135ba237aafcaffd65b9df3f4386ce6ac6dbcf25a3dcdc4b3a3963532c327
  [2025.2.0]=8e0bf80965191d524a05aaf5d3f663aecd726e061045d9568c66dc6ad75e4f24
  [2025.3.0]=fcc9e4e8116845359a15dfd721bb863a207325bd267770919cc0fb72e6036764
  [2025.4.0]=6b581cf1c3fa759495eb051d1ec5be4b5cb61a4e15265db7b9d56260ea5925d0
  [2025.4.1]=c552a68c094b0d75f48b7c19cbd3482c44e4e267821897dcb7c9f7c36ba5f88b
  [2026.0.0]=ba999f7fea57958a533a715afa976704ea6acf39dfd271a89ce78594e7aaa488
  [2026.1.0]=117bae89a1869488ae51e38633e6b370fb52733a52635e4e4690a92b2bed73c4
  [2026.2.0]=90adabc9a46aaa5c052e8ac2bd10a017ff361ef5f68647d02f4ab8a5e54610e7
  [2026.2.1]=3a7f4ec8ed2a7ae4069a96ded7f9ff9b7a97230e411141db8b68669ba43c0bde
  [2026.3.0]=93e111164ccfd5c801edcfc3437683210837463bf57a2bd0518b940598664c2c
  [2026.3.1]=a767aab95940ce78901335f5e89e61087b81ce122a546e3023489303f8488cd3
  [2026.4.0]=71ee4e65a914044a510af43da16f3279c8f9dae22cbc8eac63d4a785c4a9c03f
  [2026.4.1]=2d22b1da03f7caf74df30e9f6417d0ab2f637e4a38e08e1dcd294d2c37407aaf
)
pinned_sorted() { printf '%s\n' "${!pins[@]}" | sort -t. -k1,1n -k2,2n -k3,3n; }

die() { echo "fetch.sh: $*" >&2; exit 1; }
usage() { sed -n '/^# Usage:/,/^# Exit:/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# 2026.4.1 -> 2641: the suffix of the release's versioned sonames.
soname_tag() { local IFS=.; read -r y m p <<<"$1"; echo "$((y % 100))$m$p"; }

# What a cached release must hold: the C library and the core at the release's soname, the CPU plugin, both
# frontends the plugin reads models with, and the C header.
verify() {
  local dir=$1 ver=$2 tag
  tag=$(soname_tag "$ver")
  for f in "libs/libopenvino_c.so.$tag" "libs/libopenvino.so.$tag" libs/libopenvino_intel_cpu_plugin.so \
           "libs/libopenvino_onnx_frontend.so.$tag" "libs/libopenvino_ir_frontend.so.$tag" \
           include/openvino/c/openvino.h; do
    [ -f "$dir/$f" ] || { echo "no $f in $dir"; return 1; }
  done
  [ "$(head -c 4 "$dir/libs/libopenvino_c.so.$tag" | od -An -c | tr -d ' ')" = '177ELF' ] ||
    { echo "$dir/libs/libopenvino_c.so.$tag is not an ELF file"; return 1; }
  return 0
}
version_stamp() { echo "openvino==$1 sha256=${pins[$1]}"; }
cached() {
  [ -f "$cache/$1/STAMP" ] && [ "$(cat "$cache/$1/STAMP")" = "$(version_stamp "$1")" ] && verify "$cache/$1" "$1" >/dev/null
}

# ---- arguments ----
versions="${MLK_OPENVINO_VERSIONS:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --print-dir) echo "$cache"; exit 0 ;;
    --print-default) echo "$default_version"; exit 0 ;;
    --list)
      for v in $(pinned_sorted); do
        if cached "$v"; then echo "$v cached $cache/$v"; else echo "$v -"; fi
      done
      exit 0 ;;
    --versions) [ $# -ge 2 ] || usage; versions="$2"; shift 2 ;;
    --versions=*) versions="${1#--versions=}"; shift ;;
    -h|--help) usage ;;
    *) echo "fetch.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
versions="${versions//,/ }"
case " $versions " in *" all "*) versions="${versions//all/} $(pinned_sorted | tr '\n' ' ')" ;; esac
versions="${versions//tested/$tested_versions}"
versions="${versions//default/$default_version}"
wanted=("$default_version")
for v in $versions; do
  [ -n "${pins[$v]:-}" ] || die "no pinned openvino release $v (pinned: $(pinned_sorted | tr '\n' ' ' | sed 's/ $//'); wheels
  before 2024.3.0 carry no C API); to add a later one, pip download it (see 'download' in fetch.sh) and write its
  wheel's sha256 into fetch.sh's pins"
  [[ " ${wanted[*]} " == *" $v "* ]] || wanted+=("$v")
done

todo=()
for v in "${wanted[@]}"; do
  if [ -f "$cache/$v/STAMP" ] && [ "$(cat "$cache/$v/STAMP")" = "$(version_stamp "$v")" ]; then
    if why=$(verify "$cache/$v" "$v"); then continue; fi
    echo "fetch.sh: the cached $v fails a check ($why); fetching it again" >&2
  fi
  todo+=("$v")
done
if [ ${#todo[@]} -eq 0 ]; then
  echo "fetch.sh: OpenVINO ${wanted[*]} already in $cache"
  exit 0
fi

# pip: Debian's (python3-pip, for /usr/bin/python3) first, else whichever pip is on PATH. `pip download` installs nothing,
# so Debian's externally-managed marker does not apply to it.
pip=()
if /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
  pip=(/usr/bin/python3 -m pip)
elif command -v pip3 >/dev/null && pip3 --version >/dev/null 2>&1; then
  pip=(pip3)
elif command -v pip >/dev/null && pip --version >/dev/null 2>&1; then
  pip=(pip)
else
  die "pip not found: install Debian's python3-pip (apt-get install python3-pip), then run engines/openvino/fetch.sh again"
fi
command -v unzip >/dev/null || die "unzip not found (Debian package unzip)"
command -v sha256sum >/dev/null || die "sha256sum not found (Debian package coreutils)"

mkdir -p "$cache"
# One fetch at a time per cache (two would swap folders under each other).
if command -v flock >/dev/null; then
  exec 9>"$cache/.fetch.lock"
  flock 9
fi
tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The wheel for CPython 3.11 on x86-64 Linux, whatever the interpreter running pip: the libraries are the same in every
# Python's wheel, and fixing the tags fixes the file, so the pins hold. --no-cache-dir: pip would otherwise keep a
# second copy of every wheel (40-60 MB each).
download() {
  local v=$1 file got
  echo "fetch.sh: pip download openvino==$v" >&2
  if ! "${pip[@]}" download --quiet --no-deps --no-cache-dir --only-binary=:all: --python-version 3.11 \
        --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 "openvino==$v" -d "$tmp/w$v" \
        >"$tmp/pip.out" 2>&1; then
    echo "fetch.sh: pip download openvino==$v failed (is PyPI reachable? pip says:)" >&2
    grep -v '^ *$' "$tmp/pip.out" | tail -n 5 >&2 || true
    exit 1
  fi
  file=$(ls "$tmp/w$v"/openvino-"$v"-*.whl 2>/dev/null | head -n 1)
  [ -n "$file" ] && [ -f "$file" ] || die "pip download openvino==$v left no openvino-$v-*.whl in $tmp/w$v"
  got=$(sha256sum "$file" | cut -d' ' -f1)
  [ "$got" = "${pins[$v]}" ] || die "openvino==$v: $(basename "$file"): sha256 $got, expected ${pins[$v]}"
  printf '%s\n' "$file"
}

# Swap a finished folder in place of dst, so an interrupted fetch never leaves a half-filled one behind.
swap_in() {
  local new=$1 dst=$2
  rm -rf "$dst.old"
  if [ -e "$dst" ]; then mv "$dst" "$dst.old"; fi
  mv "$new" "$dst"
  rm -rf "$dst.old"
}

for v in "${todo[@]}"; do
  start=$SECONDS
  whl=$(download "$v")
  new="$tmp/$v"
  mkdir -p "$new"
  # Only the runtime and the headers: the Python layer and the tools stay out.
  unzip -q "$whl" 'openvino/libs/*' 'openvino/include/*' -d "$tmp/x$v" ||
    die "openvino==$v: cannot unzip openvino/libs and openvino/include from $(basename "$whl")"
  mv "$tmp/x$v/openvino/libs" "$tmp/x$v/openvino/include" "$new/"
  rm -rf "$tmp/x$v" "$tmp/w$v"
  why=$(verify "$new" "$v") || die "openvino==$v: $why"
  version_stamp "$v" >"$new/STAMP"
  swap_in "$new" "$cache/$v"
  echo "fetch.sh: OpenVINO $v ready in $cache/$v ($((SECONDS - start)) s)"
done
