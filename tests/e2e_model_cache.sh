#!/usr/bin/env bash
# The generated-model cache (issue 25, item 8): SIGINT to the whole process group while a model is generated leaves
# nothing (no .gen-* folder, no .tmp file); generation folders of dead processes are swept, live ones kept; a cache
# folder others may write gets a private memleak-UID folder (0700), and one that is a link or open to others is
# exit 2 naming it; a cached model that no longer matches the hash written at generation is generated again.
source "$(dirname "$0")/lib.sh"
scn() { printf 'name: cache\nengine: ref\nmodel: {generate: %s}\npipeline: [compile_model, release_compiled]\niterations: 2\n' "$1"; }
cache="$work/c"

# ---- SIGINT to the process group while refengine writes a 577 MiB model --------------------------------------
scn "transformer, layers: 12, hidden: 1024" > "$work/big.yaml"
setsid "$bin/memleak-run" --db "$work/x.db" --quiet --model-cache "$cache" "$work/big.yaml" > "$work/out.txt" 2>&1 &
pid=$!
for _ in $(seq 200); do # until the generator has a temporary file open (10 s at most)
  ls "$cache"/.gen-*/*.tmp.* > /dev/null 2>&1 && break
  sleep 0.05
done
check "the generator was writing when the signal came" test -n "$(ls "$cache"/.gen-*/*.tmp.* 2> /dev/null)"
kill -INT -- "-$pid"
set +e
wait "$pid"
code=$?
set -e
check "SIGINT to the group: exit 130" eq "$code" 130
check "SIGINT to the group: no generation folder left" eq "$(find "$cache" -name '.gen-*' | wc -l)" 0
check "SIGINT to the group: no file left" eq "$(find "$cache" -type f | wc -l)" 0

# ---- a dead run's generation folder is swept; a live one's is kept --------------------------------------------
sleep 0 & dead=$!
wait "$dead"
mkdir -p "$cache/.gen-$dead-0123456789abcdef" "$cache/.gen-$$-0123456789abcdef"
head -c 4096 /dev/zero > "$cache/.gen-$dead-0123456789abcdef/m.onnx.tmp.AbCdEf"
head -c 4096 /dev/zero > "$cache/.gen-$$-0123456789abcdef/m.onnx.tmp.AbCdEf"
scn "mlp, mlp_hidden: 16" > "$work/s.yaml"
"$bin/memleak-run" --db "$work/x.db" --quiet --model-cache "$cache" "$work/s.yaml" > "$work/out.txt" 2>&1
check "a dead process's generation folder is removed" test ! -e "$cache/.gen-$dead-0123456789abcdef"
check "a live process's generation folder is kept" test -e "$cache/.gen-$$-0123456789abcdef/m.onnx.tmp.AbCdEf"
rm -rf "$cache/.gen-$$-0123456789abcdef"
model=$(ls "$cache"/mlp-*.onnx)
check "the model's hash is written beside it" grep -qE '^fnv1a64w [0-9a-f]{16} [0-9]+$' "$model.hash"

# ---- a cached model that changed is generated again ------------------------------------------------------------
cp "$model" "$work/orig.onnx"
printf '\x01' | dd of="$model" bs=1 seek=100 conv=notrunc status=none
"$bin/memleak-run" --db "$work/x.db" --quiet --model-cache "$cache" "$work/s.yaml" > "$work/out.txt" 2>&1
check "a changed model: said so" grep -q "does not match the hash written when it was generated: generating it again" "$work/out.txt"
check "a changed model: generated again" cmp -s "$model" "$work/orig.onnx"
rm "$model.hash"
"$bin/memleak-run" --db "$work/x.db" --quiet --model-cache "$cache" "$work/s.yaml" > "$work/out.txt" 2>&1
check "a model without its hash: generated again" grep -q "has no hash beside it" "$work/out.txt"
check "a model without its hash: sealed now" test -s "$model.hash"
echo "fnv1a64 0123456789abcdef 4096" > "$model.hash" # the first form of the file, byte-wise
"$bin/memleak-run" --db "$work/x.db" --quiet --model-cache "$cache" "$work/s.yaml" > "$work/out.txt" 2>&1
check "a hash of another kind: said so" grep -q "has a hash of another kind beside it" "$work/out.txt"
check "a hash of another kind: sealed again" grep -q "^fnv1a64w " "$model.hash"
"$bin/memleak-run" --db "$work/x.db" --quiet --model-cache "$cache" "$work/s.yaml" > "$work/out.txt" 2>&1
check "a model that matches: used as it is" eq "$(grep -c 'generating it again\|nodes,' "$work/out.txt")" 0

# ---- a cache folder others may write ---------------------------------------------------------------------------
uid=$(id -u)
mkdir "$work/shared"
chmod 1777 "$work/shared"
"$bin/memleak-run" --db "$work/x.db" --quiet --model-cache "$work/shared" "$work/s.yaml" > "$work/out.txt" 2>&1
check "a world-writable cache: the model goes into memleak-$uid" test -n "$(ls "$work/shared/memleak-$uid"/mlp-*.onnx 2> /dev/null)"
check "a world-writable cache: memleak-$uid is 0700" eq "$(stat -c %a "$work/shared/memleak-$uid")" 700
check "a world-writable cache: nothing else in it" eq "$(ls -A "$work/shared")" "memleak-$uid"
rm -rf "$work/shared/memleak-$uid"
mkdir "$work/elsewhere"
ln -s "$work/elsewhere" "$work/shared/memleak-$uid"
set +e
"$bin/memleak-run" --db "$work/x.db" --quiet --model-cache "$work/shared" "$work/s.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "a private folder that is a link: exit 2" eq "$code" 2
check "a private folder that is a link: named" grep -q "model cache $work/shared/memleak-$uid is not private (a link)" "$work/out.txt"
check "a private folder that is a link: nothing written through it" eq "$(ls -A "$work/elsewhere" | wc -l)" 0
rm "$work/shared/memleak-$uid"
mkdir -m 0777 "$work/shared/memleak-$uid"
chmod 0777 "$work/shared/memleak-$uid"
set +e
"$bin/memleak-run" --db "$work/x.db" --quiet --model-cache "$work/shared" "$work/s.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "a private folder open to others: exit 2" eq "$code" 2
check "a private folder open to others: named" grep -q "memleak-$uid is not private (others may read or write it)" "$work/out.txt"

# ---- no usable home: never /tmp/.cache, a private folder in $TMPDIR ------------------------------------------------
# As another user when root (root may make any folder), with a home that cannot be made, and with none at all.
as_user=()
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 755 "$work"
  chmod 644 "$work/s.yaml"
fi
mkdir "$work/tmp"
chmod 1777 "$work/tmp"
who=$("${as_user[@]}" id -u)
for home in /nonexistent-mlk-home unset; do
  rm -rf "$work/tmp/memleak-$who"
  if [ "$home" = unset ]; then envs=(-u HOME -u XDG_CACHE_HOME); else envs=(-u XDG_CACHE_HOME HOME="$home"); fi
  set +e
  env "${envs[@]}" TMPDIR="$work/tmp" "${as_user[@]}" "$bin/memleak-run" --db "$work/tmp/h.db" --quiet --dry-run \
    "$work/s.yaml" > "$work/out.txt" 2>&1
  code=$?
  set -e
  check "HOME $home: runs" eq "$code" 0
  [ "$code" = 0 ] || sed 's/^/    /' "$work/out.txt" | tail -3
  check "HOME $home: the model in \$TMPDIR/memleak-$who" test -n "$(ls "$work/tmp/memleak-$who"/mlp-*.onnx 2> /dev/null)"
  check "HOME $home: the folder is 0700" eq "$(stat -c %a "$work/tmp/memleak-$who" 2> /dev/null)" 700
  check "HOME $home: no .cache in \$TMPDIR" test ! -e "$work/tmp/.cache"
done
rm -rf "$work/tmp"
finish
