# lib.sh: helpers shared by the end-to-end test scripts (sourced, not run).
# It must never leave files behind: every script works in a mktemp folder removed on exit.
set -euo pipefail
bin="${MLK_BIN_DIR:?MLK_BIN_DIR must point at build/bin}"
src="${MLK_SOURCE_DIR:?MLK_SOURCE_DIR must point at the source tree}"
work=$(mktemp -d "${TMPDIR:-/tmp}/mlk-e2e.XXXXXX")
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
# "Promptly" in a pass/fail test: refusals and signals are meant to take well under 2 s (the scripts print each
# elapsed time for the log), but ctest runs beside other tests on a shared 2-core machine, so the bound a test asserts
# only separates "answered" from "hung" (the old failures took minutes to hours), never a timing.
prompt_ms="${MLK_PROMPT_MS:-15000}"

passed=0
failed=0
check() { # description, then a command that must succeed
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $what"; fi
}
eq() { [ "$1" = "$2" ] || { echo "  got '$1', expected '$2'"; return 1; }; }
q() { sqlite3 -batch -noheader "$db" "$1"; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; }
need_sqlite() { command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 CLI missing (Debian package sqlite3)"; exit 77; }; }
# ref against ORT on models written by a Python script: build tree $1 holds engine_ort.so and ort_crosscheck, and
# Debian's python3-onnx is there; else SKIP.
need_ort_crosscheck() {
  if [ ! -f "$1/lib/engine_ort.so" ] || [ ! -x "$1/tests/ort_crosscheck" ]; then
    echo "SKIP: engine_ort.so is not built: ONNX Runtime was not fetched (run engines/ort/fetch.sh, then cmake again)"
    exit 77
  fi
  /usr/bin/python3 -c 'import onnx' 2>/dev/null || { echo "SKIP: Debian's python3-onnx is missing"; exit 77; }
}
