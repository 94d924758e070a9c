#!/usr/bin/env bash
# Whatever a run would refuse or fail on at its first worker is refused before anything runs, by the run and by
# --dry-run alike, with exit 2 within 2 s naming the cause (issue 25): a --db SQLite would not keep, a --resume of a
# db that does not exist (never created), a duration shorter than a cell can measure, environment and option values
# longer than execve takes (one string, or all together), a malformed ONNX model or .pb input, external data outside
# the model's folder or missing; a model whose files hold a TiB is identified in bounded time, and says so.
source "$(dirname "$0")/lib.sh"
need_sqlite
ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }
scn() { # model-line [extra lines]
  printf 'name: refusals\nengine: ref\n%s\npipeline: [compile_model, create_request, infer, release_request, release_compiled]\niterations: 3\n%s' "$1" "${2:-}"
}
refused() { # what, pattern, then the command: exit 2 within 2 s, the message matching pattern
  local what=$1 pat=$2; shift 2
  local t0 el code
  t0=$(ms)
  set +e
  "$@" > "$work/out.txt" 2>&1
  code=$?
  set -e
  el=$(( $(ms) - t0 ))
  check "$what: exit 2" eq "$code" 2
  check "$what: promptly ($el ms)" test "$el" -lt "$prompt_ms"
  grep -qE -- "$pat" "$work/out.txt" || sed 's/^/    /' "$work/out.txt" | cut -c1-400
  check "$what: says why" grep -qE -- "$pat" "$work/out.txt"
}
both() { # what, pattern, scenario: refused by the run and by --dry-run, and the run left no db
  refused "$1" "$2" "$bin/memleak-run" --db "$work/n.db" --quiet "$3"
  check "$1: the run made no db" test ! -e "$work/n.db"
  refused "$1 (--dry-run)" "$2" "$bin/memleak-run" --dry-run --quiet "$3"
}

# --db names that keep nothing, refused before the model is generated.
scn "model: {generate: mlp, mlp_hidden: 16}" > "$work/g.yaml"
for name in "" ":memory:" "file:x.db?mode=memory"; do
  refused "--db '$name'" "--db '.*': not a file name" "$bin/memleak-run" --db "$name" --quiet "$work/g.yaml"
done
check "nothing was generated for them" test ! -e "$work/cache/memleak/models"
(cd "$work" && refused "--resume of a db that does not exist" "typo.db: no such db" "$bin/memleak-run" --resume 1 --db typo.db)
(cd "$work" && refused "--dry-run --resume of a db that does not exist" "typo.db: no such db" "$bin/memleak-run" --dry-run --resume 1 --db typo.db)
check "the missing db was not created" test ! -e "$work/typo.db"
# --dry-run checks the db the run would write, changing nothing.
"$bin/memleak-run" --dry-run --quiet "$work/g.yaml" > /dev/null # the model, generated
refused "--dry-run, --db in a missing folder" "--db $work/no/x.db: cannot be created: folder $work/no" "$bin/memleak-run" --dry-run --db "$work/no/x.db" "$work/g.yaml"
printf 'not a db, some bytes of text to be sure of it' > "$work/text.db"
refused "--dry-run, --db that is not SQLite" "--db $work/text.db: not a SQLite db" "$bin/memleak-run" --dry-run --db "$work/text.db" "$work/g.yaml"
check "--dry-run left the file as it was" eq "$(cat "$work/text.db")" "not a db, some bytes of text to be sure of it"
(cd "$work" && "$bin/memleak-run" --dry-run --quiet g.yaml > /dev/null)
check "--dry-run made no db (./memleak.db by default)" test ! -e "$work/memleak.db"

# Durations below the worker's millisecond: at the key's place; 1 ms itself runs.
scn "model: {generate: mlp, mlp_hidden: 16}" | sed 's/^iterations: 3$/duration: 0.0000001s/' > "$work/d.yaml"
both "duration: 0.0000001s" "d.yaml:5:11: duration: '0.0000001s' is shorter than the 1 ms a cell can measure" "$work/d.yaml"
refused "--duration 0.0004s" "--duration: '0.0004s' is shorter than the 1 ms" "$bin/memleak-run" --dry-run --duration 0.0004s "$work/g.yaml"
sed 's/0.0000001s/0.001s/' "$work/d.yaml" > "$work/d1.yaml"
db="$work/d1.db"
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/d1.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "duration: 0.001s runs (exit $code)" test "$code" -le 1
check "duration: 0.001s measures at least one iteration" test "$(q "SELECT count(*) FROM samples WHERE phase = 'measure' AND step = 'iteration'")" -ge 1

# Strings longer than execve takes (MAX_ARG_STRLEN, 128 KiB here), at the value's place.
long=$(head -c 140000 /dev/zero | tr '\0' 'x')
scn "model: {generate: mlp, mlp_hidden: 16}" "matrix: {glibc_tunables: ['glibc.malloc.arena_max=1:$long']}
" > "$work/e1.yaml"
both "a 137 KiB glibc_tunables value" "e1.yaml:6:27: matrix.glibc_tunables: .* longer than execve takes .*MAX_ARG_STRLEN" "$work/e1.yaml"
scn "model: {generate: mlp, mlp_hidden: 16}" "matrix: {allocator_env: ['MALLOC_ARENA_MAX=1 MALLOC_X=$long']}
" > "$work/e2.yaml"
both "a 137 KiB allocator_env entry" "e2.yaml:6:26: matrix.allocator_env: .* longer than execve takes" "$work/e2.yaml"
scn "model: {generate: mlp, mlp_hidden: 16}" "engine_options: {threads: $long}
" > "$work/e3.yaml"
both "a 137 KiB engine option" "e3.yaml:6:27: .* longer than execve takes" "$work/e3.yaml"
# Each string fits, all of them together do not: with a 512 KiB stack, execve takes 128 KiB in all.
mid=$(head -c 40000 /dev/zero | tr '\0' 'y')
scn "model: {generate: mlp, mlp_hidden: 16}" "matrix: {allocator_env: ['MALLOC_A=$mid MALLOC_B=$mid']}
" > "$work/e4.yaml"
"$bin/memleak-run" --dry-run --quiet "$work/e4.yaml" > /dev/null # the model, generated before the limit
refused "arguments and environment over ARG_MAX" "cell 0 \[.*\]: the worker's arguments and environment would take [0-9]+ bytes, more than execve takes \(131072" \
  env BIG="$mid$mid" bash -c 'ulimit -s 512 && exec "$0" "$@"' "$bin/memleak-run" --db "$work/n.db" --quiet "$work/e4.yaml"
refused "arguments and environment over ARG_MAX (--dry-run)" "more than execve takes" \
  env BIG="$mid$mid" bash -c 'ulimit -s 512 && exec "$0" "$@"' "$bin/memleak-run" --dry-run --quiet "$work/e4.yaml"

# Malformed models: named by field and byte, at the model's place.
"$bin/refengine" gen mlp --mlp-hidden 16 --external-data --out "$work/m.onnx" > /dev/null
"$bin/refengine" gen mlp --mlp-hidden 16 --out "$work/plain.onnx" > /dev/null
head -c 900 "$work/plain.onnx" > "$work/cut.onnx"
head -c 4096 "$bin/refengine" > "$work/elf.onnx"
: > "$work/empty.onnx"
python3 - "$work/tensor.pb" <<'PY'
import struct, sys
# A TensorProto (dims [2], float, raw_data): wire-valid protobuf, but not a ModelProto.
raw = struct.pack('<2f', 1.0, 2.0)
open(sys.argv[1], 'wb').write(bytes([0x08, 2, 0x10, 1, 0x4a, len(raw)]) + raw)
PY
for m in cut elf empty tensor; do
  f="$work/$m.onnx"; [ "$m" = tensor ] && f="$work/tensor.pb"
  scn "model: $f" > "$work/$m.yaml"
  both "model $m" "$m.yaml:3:8: model .* is not a well-formed ONNX model: .*(@ byte [0-9]+|no graph)" "$work/$m.yaml"
done
# Inputs the worker could not read: a cut tensor, a model given as a tensor.
head -c 7 "$work/tensor.pb" > "$work/cut.pb"
for i in cut.pb plain.onnx; do
  scn "model: {path: $work/plain.onnx, inputs: [$work/$i]}" > "$work/i.yaml"
  both "input $i" "i.yaml:3:[0-9]+: input file is not a tensor the worker can read: .*$i" "$work/i.yaml"
done
# External data: absolute, out of the folder, missing.
mkdir -p "$work/x"
python3 - "$work/m.onnx" "$work/x" <<'PY'
import sys
src, out = sys.argv[1], sys.argv[2]
b = open(src, 'rb').read()
loc = b'm.onnx.data'
for name, new in (('abs', b'/etc/passwd'[:len(loc)].ljust(len(loc), b'x')), ('up', b'../m.onnx.d'), ('gone', b'nothere.bin')):
    assert len(new) == len(loc)
    open(f'{out}/{name}.onnx', 'wb').write(b.replace(loc, new))
PY
cp "$work/m.onnx.data" "$work/x/m.onnx.data"
scn "model: $work/x/abs.onnx" > "$work/xa.yaml"
both "external data at an absolute path" "xa.yaml:3:8: model .*abs.onnx: external data location '/etc/passwd' is absolute" "$work/xa.yaml"
scn "model: $work/x/up.onnx" > "$work/xu.yaml"
both "external data out of the folder" "xu.yaml:3:8: model .*up.onnx: external data location '../m.onnx.d' has a '..' component" "$work/xu.yaml"
scn "model: $work/x/gone.onnx" > "$work/xg.yaml"
both "external data missing" "xg.yaml:3:8: model .*gone.onnx: .*nothere.bin" "$work/xg.yaml"

# A cell error always carries a cause: an allocator of the user's own whose constructor exits 9 before the worker says
# anything (the cell used to end "error" with an empty error column).
if command -v cc > /dev/null; then
  printf '#include <stddef.h>\n#include <unistd.h>\n__attribute__((constructor)) static void die(void) { _exit(9); }\nvoid *malloc(size_t n) { (void)n; return NULL; }\nvoid free(void *p) { (void)p; }\n' > "$work/die.c"
  cc -shared -fPIC -o "$work/libdie.so" "$work/die.c"
  scn "model: {generate: mlp, mlp_hidden: 16}" "matrix: {allocator: [{name: mine, preload: $work/libdie.so}]}
" > "$work/die.yaml"
  db="$work/die.db"
  set +e
  "$bin/memleak-run" --db "$db" --quiet "$work/die.yaml" > /dev/null 2>&1
  code=$?
  set -e
  check "a worker that exits 9 unexplained: a finding (exit 1)" eq "$code" 1
  check "its cell's error says why" eq "$(q "SELECT status || ': ' || error FROM cells")" "error: the worker exited with status 9 without saying why (its stderr is memleak-run's)"
else
  echo "note: no cc, the unexplained-exit cell is not tried"
fi
# execve's own error reaches the cell: memleak-run's binary removed mid-run (a rebuild during a nightly).
mkdir -p "$work/inst/bin"
cp "$bin/memleak-run" "$work/inst/bin/"
ln -s "$bin/refengine" "$work/inst/bin/refengine"
ln -s "$(cd "$bin/../lib" && pwd)" "$work/inst/lib"
scn "model: {generate: mlp, mlp_hidden: 16}" "matrix: {threads: [1, 2]}
" | sed 's/^iterations: 3$/duration: 2s/' > "$work/gone.yaml"
db="$work/gone.db"
"$work/inst/bin/memleak-run" --db "$db" --quiet "$work/gone.yaml" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 400); do
  [ "$(q "SELECT count(*) FROM samples" 2>/dev/null || echo 0)" -gt 0 ] && break
  sleep 0.05
done
rm "$work/inst/bin/memleak-run"
set +e
wait "$pid"
code=$?
set -e
check "memleak-run removed mid-run: the run ends with a finding (exit $code)" eq "$code" 1
check "the next cell's error is execve's" eq "$(q "SELECT status || ': ' || error FROM cells WHERE idx = 1")" "error: execve $work/inst/bin/memleak-run: No such file or directory"

# A model whose external data is a 1 TiB sparse file: identified by samples in bounded time, and it says so.
mkdir -p "$work/t"
cp "$work/m.onnx" "$work/m.onnx.data" "$work/t/"
truncate -s 1T "$work/t/m.onnx.data"
scn "model: $work/t/m.onnx" > "$work/t.yaml"
t0=$(ms)
set +e
"$bin/memleak-run" --dry-run "$work/t.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
el=$(( $(ms) - t0 ))
check "a 1 TiB model: --dry-run exits 0" eq "$code" 0
check "a 1 TiB model: identified in bounded time ($el ms; whole, it would take an hour)" test "$el" -lt "$prompt_ms"
check "a 1 TiB model: says it was sampled" grep -q "hold 1024.0 GiB: identified by their size and 1024 sampled blocks" "$work/out.txt"
finish
