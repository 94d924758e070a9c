#!/usr/bin/env bash
# Every bad scenario fixture makes memleak-run exit 2 before running anything, with a message giving its file:line:col.
# Each fixture's first line says what to expect: "# expect: LINE:COL substring".
source "$(dirname "$0")/lib.sh"
fixtures=("$src"/harness/scenario/tests/fixtures/bad_*.yaml)
check "there are fixtures" test "${#fixtures[@]}" -ge 10
for f in "${fixtures[@]}"; do
  expect=$(head -n 1 "$f" | sed -n 's/^# expect: //p')
  where=${expect%% *}
  what=${expect#* }
  set +e
  "$bin/memleak-run" --db "$work/never.db" "$f" > "$work/out.txt" 2> "$work/err.txt"
  code=$?
  set -e
  name=$(basename "$f")
  check "$name exits 2" eq "$code" 2
  check "$name says $where" grep -qF "$name:$where:" "$work/err.txt"
  check "$name says '$what'" grep -qF "$what" "$work/err.txt"
done
check "nothing ran: no db was created" test ! -e "$work/never.db"
finish
