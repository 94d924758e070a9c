#!/usr/bin/env bash
# Soak benchmark (issue 14): one cell of a tiny generated model run for 1e4, 1e5 and 1e6 iterations; prints the
# parent's peak VmRSS (VmHWM of memleak-run itself, read from /proc while it runs), the db's size and bytes per
# iteration, and the time `memleak-run report` takes on the longest. Not a test: it measures and prints.
# It must never report a number it did not measure on this run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${MLK_BUILD_DIR:-$root/build}"
bin="$build/bin"
out="${MLK_BENCH_DIR:-$build/bench}/soak"
sizes="${MLK_SOAK_SIZES:-10000 100000 1000000}"
mkdir -p "$out"
export XDG_CACHE_HOME="$out/cache"

printf '%-10s %14s %12s %12s %10s %s\n' iterations parent_hwm_KiB db_bytes db_B/iter wall_s verdict
last=""
for n in $sizes; do
  yaml="$out/soak-$n.yaml" db="$out/soak-$n.db"
  rm -f "$db" "$db-wal" "$db-shm"
  cat > "$yaml" <<YAML
name: soak
engine: ref
model: {generate: mlp, mlp_hidden: 16}
setup: [load_engine, read_model, compile_model, create_request]
pipeline: [infer]
teardown: [release_request, release_compiled, release_model, unload_engine]
iterations: $n
warmup: 10
timeout_s: 7200
YAML
  start=$(date +%s.%N)
  "$bin/memleak-run" --db "$db" --quiet "$yaml" > "$out/soak-$n.txt" 2>&1 &
  pid=$! hwm=0
  # VmHWM never falls, so the last reading before the process ends is its peak up to a few ms of teardown.
  while kill -0 "$pid" 2>/dev/null; do
    h=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$h" ] && hwm=$h
    sleep 0.1
  done
  set +e; wait "$pid"; code=$?; set -e
  end=$(date +%s.%N)
  bytes=$(stat -c %s "$db")
  verdict=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT status FROM cells').fetchone()[0])" "$db")
  printf '%-10s %14s %12s %12.1f %10.1f %s (exit %d)\n' "$n" "$hwm" "$bytes" \
    "$(python3 -c "print($bytes / $n)")" "$(python3 -c "print($end - $start)")" "$verdict" "$code"
  last=$db
done
start=$(date +%s.%N)
"$bin/memleak-run" report --db "$last" --out "$out/report" > /dev/null
end=$(date +%s.%N)
printf 'report of the %s-iteration run: %.2f s\n' "${sizes##* }" "$(python3 -c "print($end - $start)")"
