#!/usr/bin/env bash
# A db that cannot be read says why (issue 25, item 9): a WAL db in a folder that is not writable, no descriptors
# left, another program's db with a 'runs' table, and compare --baseline-engine with an engine the run lacks; each
# exits 2 or 3 within 2 s with a one-line cause, never "not a memleak db" for a memleak db.
source "$(dirname "$0")/lib.sh"
need_sqlite
ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); } # bash's clock: no process per reading
# try WHAT EXPECTED-EXIT PATTERN COMMAND...
try() {
  local what=$1 want=$2 pat=$3; shift 3
  local t0 code el
  t0=$(ms)
  set +e
  timeout -s KILL 10 "$@" > "$work/out.txt" 2>&1 < /dev/null
  code=$?
  set -e
  el=$(( $(ms) - t0 ))
  check "$what: exit $want" eq "$code" "$want"
  check "$what: promptly ($el ms)" test "$el" -lt "$prompt_ms"
  check "$what: says '$pat'" grep -qE -e "$pat" "$work/out.txt"
  check "$what: one short line" test "$(wc -c < "$work/out.txt")" -lt 400
  [ "$code" = "$want" ] || sed 's/^/    /' "$work/out.txt" | head -5
}
printf 'name: dbe\nengine: ref\nmodel: {generate: mlp, mlp_hidden: 16}\npipeline: [compile_model, create_request, infer, release_request, release_compiled]\niterations: 3\n' > "$work/s.yaml"
db="$work/ok.db"
"$bin/memleak-run" --db "$db" --quiet "$work/s.yaml" > /dev/null

# A folder the user cannot write: as root, run the commands as nobody (root writes anywhere).
as_user=()
if [ "$(id -u)" = 0 ]; then
  command -v setpriv > /dev/null || { echo "SKIP: setpriv missing (util-linux) to drop root"; exit 77; }
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 755 "$work"
fi
mkdir "$work/ro" "$work/out"
chmod 777 "$work/out"
cp "$db" "$work/ro/ok.db"
chmod 555 "$work/ro"
try "a closed db in a read-only folder: report reads it" 0 "written to" \
  "${as_user[@]}" "$bin/memleak-run" report --db "$work/ro/ok.db" --out "$work/out" --no-plots
chmod 755 "$work/ro"; : > "$work/ro/ok.db-wal"; chmod 555 "$work/ro"
try "a WAL db in a read-only folder: report" 2 "ok.db-wal is there and .*ok.db-shm cannot be made" \
  "${as_user[@]}" "$bin/memleak-run" report --db "$work/ro/ok.db" --out "$work/out" --no-plots
try "a WAL db in a read-only folder: merge" 2 "ok.db-wal is there and .*ok.db-shm cannot be made" \
  "${as_user[@]}" "$bin/memleak-run" merge "$work/out/m.db" "$work/ro/ok.db"
check "... and no output db made" test ! -e "$work/out/m.db"

for cmd in "report --out $work/out --no-plots" "merge $work/m2.db"; do
  set -- $cmd
  # merge counts every I/O error on its dbs as its input's (exit 2); report as internal (3)
  if [ "$1" = merge ]; then args=(merge "$2" "$db"); want=2; else args=(report --db "$db" --out "$work/out" --no-plots); want=3; fi
  # 3 for stdin, stdout and stderr (others closed), 1 for the db: none for what comes next
  try "$1 with 4 descriptors" "$want" "no file descriptor left .*ulimit -n|Too many open files" bash -c 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; ulimit -n 4; exec "$@"' _ "$bin/memleak-run" "${args[@]}"
done

sqlite3 "$work/foreign.db" "CREATE TABLE runs(id INTEGER PRIMARY KEY, name TEXT, $(for i in $(seq 60); do printf 'column_number_%d TEXT, ' "$i"; done) last TEXT);"
sqlite3 "$work/foreign2.db" "CREATE TABLE schema_version(version INTEGER); INSERT INTO schema_version VALUES (4); CREATE TABLE runs(id INTEGER PRIMARY KEY, name TEXT);"
for f in foreign foreign2; do
  before=$(sqlite3 "$work/$f.db" .schema | md5sum)
  try "$f: a run" 2 "$f.db: not a memleak db \((no schema_version table|table runs has no column uuid)\)" "$bin/memleak-run" --db "$work/$f.db" --quiet "$work/s.yaml"
  try "$f: report" 2 "$f.db: not a memleak db" "$bin/memleak-run" report --db "$work/$f.db" --out "$work/out"
  try "$f: compare" 2 "$f.db: not a memleak db" "$bin/memleak-run" compare --db "$work/$f.db"
  try "$f: history" 2 "$f.db: not a memleak db" "$bin/memleak-run" history --all --db "$work/$f.db"
  try "$f: merge" 2 "$f.db: not a memleak db" "$bin/memleak-run" merge "$work/m3.db" "$work/$f.db"
  check "$f: left as it was" eq "$(sqlite3 "$work/$f.db" .schema | md5sum)" "$before"
done

try "compare --baseline-engine nosuch" 2 "--baseline-engine nosuch: run 1 has no cell of that engine \(its engines: ref\)" \
  "$bin/memleak-run" compare --db "$db" --baseline-engine nosuch
finish
