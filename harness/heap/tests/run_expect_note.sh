#!/bin/sh
# run_expect_note.sh: runs a command with LD_PRELOAD set and passes only if it exits 0 and the heap shim printed
# the expected note on stderr. It must never pass on a silent shim. Skips (77) when a preloaded file is missing.
# usage: run_expect_note.sh 'NOTE TEXT' 'PRELOAD LIST' CMD [ARGS...]
set -u
note=$1 preload=$2
shift 2
for f in $preload; do
  if [ ! -e "$f" ]; then
    echo "SKIP: $f missing"
    exit 77
  fi
done
err=$(mktemp) || exit 2
LD_PRELOAD="$preload" MLK_HEAP_ALLOCATOR=other "$@" 2>"$err"
rc=$?
cat "$err" >&2
if ! grep -q "memleak_heap: note: .*$note" "$err"; then
  echo "run_expect_note.sh: expected a shim note matching '$note'" >&2
  [ "$rc" -eq 0 ] && rc=1
fi
rm -f "$err"
exit "$rc"
