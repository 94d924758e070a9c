#!/usr/bin/env bash
# Memory requested, not only resident (issue 12): a step that mallocs 512 MiB and frees it untouched, and one that maps
# 512 MiB and unmaps it, are flagged by compare against runs of the same config without them (the heap shim's peaks
# within the step: heap_peak_bytes, mapped_peak_bytes), while the step's VmHWM stays flat; history tracks the figure.
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_species.so" ] || { echo "SKIP: engine_species.so not built"; exit 77; }
cat > "$work/r.yaml" <<YAML
name: e2e-requested
engine: species
model: {generate: mlp, mlp_hidden: 64}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 20
warmup: 2
thresholds: {latency_abs_ms: 100000} # memory findings only: latency moves with load
engine_options: {inner: ref}
YAML
for sp in scratch scratch_map; do
  db="$work/$sp.db"
  set +e
  # the same config three times: twice as it was (the baseline), then with the scratch buffer ($MLK_SPECIES)
  MLK_SPECIES=none "$bin/memleak-run" --db "$db" --quiet --commit a1 --branch main "$work/r.yaml" > /dev/null 2>&1
  MLK_SPECIES=none "$bin/memleak-run" --db "$db" --quiet --commit a2 --branch main "$work/r.yaml" > /dev/null 2>&1
  MLK_SPECIES=$sp "$bin/memleak-run" --db "$db" --quiet --commit a3 --branch main "$work/r.yaml" > "$work/run.txt" 2>&1
  code=$?
  "$bin/memleak-run" compare --db "$db" > "$work/cmp-$sp.txt" 2>&1
  ccode=$?
  set -e
  check "$sp: the run passes (nothing stays: no leak)" eq "$code" 0
  check "$sp: compare against the runs without it finds a regression" eq "$ccode" 1
  metric=heap_peak_bytes
  [ "$sp" = scratch_map ] && metric=mapped_peak_bytes
  check "$sp: the regression is $metric of infer" grep -qE "^ +regression +memory +infer $metric " "$work/cmp-$sp.txt"
  req=$(q "SELECT s.$metric FROM step_stats s JOIN cells c ON c.id = s.cell_id WHERE c.run_id = 3 AND s.step = 'infer'")
  check "$sp: the step requested 512 MiB or more ($req B)" test "${req:-0}" -ge $((512 << 20))
  check "$sp: VmHWM is not a finding" eq "$(grep -cE "^ +regression .* peak_kib" "$work/cmp-$sp.txt" || true)" 0
  hwm=$(q "SELECT max(s.peak_kib) - min(s.peak_kib) FROM step_stats s WHERE s.step = 'infer'")
  check "$sp: infer's HWM moved by under 16 MiB across the runs (${hwm} KiB)" test "${hwm:-99999999}" -lt 16384
  key=$(q "SELECT config_key FROM cells LIMIT 1")
  set +e
  "$bin/memleak-run" history --db "$db" --config "$key" --step infer --metric "$metric" > "$work/hist.txt" 2>&1
  hcode=$?
  set -e
  check "$sp: history reads $metric across the runs (exit $hcode)" test "$hcode" -le 1
  check "$sp: history lists the three runs" test "$(grep -cE "a[123]" "$work/hist.txt")" -ge 3
done
finish
