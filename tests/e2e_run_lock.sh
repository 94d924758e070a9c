#!/usr/bin/env bash
# One live process per run (issue 25): a second --resume (or a second process joining by --run-key, or a --dry-run of
# the resume) while the owner runs exits 2 within 2 s naming the owner's pid, and the owner's cells keep every sample
# a clean run stores; a claim whose process is gone (killed, or its pid reused by another process) does not keep the
# run; of several --resumes started at once exactly one runs the cells.
source "$(dirname "$0")/lib.sh"
need_sqlite
ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }
cat > "$work/lock.yaml" <<'YAML'
name: e2e-lock
engine: ref
model: {generate: mlp, mlp_hidden: 32}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 1500
warmup: 2
matrix: {threads: [1, 2, 3]}
YAML
# The clean run every other outcome is compared with: per cell, its samples and its 'iteration' samples.
db="$work/clean.db"
"$bin/memleak-run" --db "$db" --quiet "$work/lock.yaml" > /dev/null
counts() { q "SELECT group_concat(n, ',') FROM (SELECT c.idx, (SELECT count(*) || '/' || count(DISTINCT seq) || '/' || sum(step = 'iteration') FROM samples WHERE cell_id = c.id) AS n FROM cells c ORDER BY c.idx)"; }
clean=$(counts)
check "the clean run stored samples" test -n "$clean"

db="$work/l.db"
"$bin/memleak-run" --db "$db" --quiet --run-key batch-1 "$work/lock.yaml" > "$work/owner.txt" 2>&1 &
owner=$!
for _ in $(seq 400); do
  [ "$(q "SELECT count(*) FROM samples" 2>/dev/null || echo 0)" -gt 0 ] && break
  sleep 0.05
done
check "the owner's claim names its pid" eq "$(q "SELECT pid FROM run_owners")" "$owner"
for how in "--resume 1" "--dry-run --resume 1" "--run-key batch-1 $work/lock.yaml"; do
  t0=$(ms)
  set +e
  # shellcheck disable=SC2086
  "$bin/memleak-run" --db "$db" --quiet $how > "$work/second.txt" 2>&1
  code=$?
  set -e
  el=$(( $(ms) - t0 ))
  check "a second process ($how) while the owner runs: exit 2" eq "$code" 2
  check "a second process ($how): refused promptly ($el ms)" test "$el" -lt "$prompt_ms"
  check "a second process ($how): names the owner's pid" grep -q "run 1 is being run by memleak-run pid $owner " "$work/second.txt"
done
still=$(kill -0 "$owner" 2>/dev/null && echo yes || echo no)
check "the owner was still running when the second ones were refused" eq "$still" yes
set +e
wait "$owner"
code=$?
set -e
check "the owner completes (exit 0)" eq "$code" 0
check "the owner's samples equal the clean run's" eq "$(counts)" "$clean"
check "the owner released its claim" eq "$(q "SELECT count(*) FROM run_owners")" 0
check "one run" eq "$(q "SELECT count(*) || status FROM runs")" 1done

# A claim whose owner is gone: SIGKILL mid-run leaves it; the next --resume drops it. A live process on the same pid
# with another start time (pid reuse) does not keep it either; one whose pid and start time match does.
db="$work/k.db"
"$bin/memleak-run" --db "$db" --quiet "$work/lock.yaml" > /dev/null 2>&1 &
victim=$!
for _ in $(seq 400); do
  [ "$(q "SELECT count(*) FROM cells WHERE status NOT IN ('pending','running')" 2>/dev/null || echo 0)" -ge 1 ] && break
  sleep 0.05
done
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
check "SIGKILL leaves the claim behind" eq "$(q "SELECT count(*) FROM run_owners")" 1
sleep 600 &
other=$!
trap 'kill "$other" 2> /dev/null || true; rm -rf "$work"' EXIT
# The dead owner's claim moved onto a live process's pid: its start time still says it is not that process.
q "UPDATE run_owners SET pid = $other"
cp "$db" "$work/k2.db"
set +e
"$bin/memleak-run" --db "$db" --quiet --resume 1 > "$work/r.txt" 2>&1
code=$?
set -e
check "a reused pid does not keep the run: --resume runs (exit 0)" eq "$code" 0
check "after it, every cell once with a clean run's samples" eq "$(counts)" "$clean"
# The same claim with the live process's real start time: that process owns it.
db="$work/k2.db"
start=$(sed 's/.*) //' "/proc/$other/stat" | cut -d' ' -f20)
q "UPDATE run_owners SET pid = $other, start_ticks = $start"
set +e
"$bin/memleak-run" --db "$db" --quiet --resume 1 > "$work/r.txt" 2>&1
code=$?
set -e
check "a live owner (pid and start time match) keeps the run: exit 2" eq "$code" 2
check "named by its pid" grep -q "being run by memleak-run pid $other " "$work/r.txt"
kill "$other"
wait "$other" 2>/dev/null || true
set +e
"$bin/memleak-run" --db "$db" --quiet --resume 1 > "$work/r.txt" 2>&1
code=$?
set -e
check "once that process ended, --resume runs (exit 0)" eq "$code" 0

# Three --resumes of one interrupted run at once: one runs the cells, the others are refused; nothing is lost.
db="$work/c.db"
"$bin/memleak-run" --db "$db" --quiet "$work/lock.yaml" > /dev/null 2>&1 &
victim=$!
for _ in $(seq 400); do
  [ "$(q "SELECT count(*) FROM samples" 2>/dev/null || echo 0)" -gt 0 ] && break
  sleep 0.05
done
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
pids=()
for i in 1 2 3; do
  "$bin/memleak-run" --db "$db" --quiet --resume 1 > "$work/c$i.txt" 2>&1 &
  pids+=($!)
done
codes=""
for p in "${pids[@]}"; do
  set +e
  wait "$p"
  codes="$codes$?"
  set -e
done
sorted=$(echo "$codes" | fold -w1 | sort | tr -d '\n')
check "concurrent resumes: one ran, two were refused (exit codes $codes)" eq "$sorted" 022
check "concurrent resumes: the refused ones named the owner" test "$(grep -l "being run by memleak-run pid" "$work"/c?.txt | wc -l)" -eq 2
check "concurrent resumes: a clean run's samples" eq "$(counts)" "$clean"
check "concurrent resumes: the run is done" eq "$(q "SELECT status FROM runs")" done
finish
