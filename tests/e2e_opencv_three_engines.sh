#!/usr/bin/env bash
# scenarios/three-engines.yaml end to end (fewer iterations): ref, ONNX Runtime, OpenCV and OpenVINO on the same models
# in one run, no cell leaks, and the report draws the engines side by side. SKIP (77) unless both engine_ort.so
# (engines/ort/fetch.sh) and engine_opencv.so (Debian's libopencv-dnn-dev) are built; without engine_openvino.so
# (engines/openvino/fetch.sh) the other three run, and the test says so.
source "$(dirname "$0")/lib.sh"
need_sqlite
build="${MLK_BUILD_DIR:?MLK_BUILD_DIR must point at the build tree}"
[ -f "$build/lib/engine_ort.so" ] || { echo "SKIP: engine_ort.so not built (engines/ort/fetch.sh)"; exit 77; }
[ -f "$build/lib/engine_opencv.so" ] || {
  echo "SKIP: engine_opencv.so not built (install Debian's libopencv-dnn-dev; ci/setup.sh does)"
  exit 77
}
db="$work/three.db"
engines="ref ort opencv openvino"
if [ ! -f "$build/lib/engine_openvino.so" ]; then
  echo "note: engine_openvino.so not built (engines/openvino/fetch.sh): OpenVINO is left out"
  engines="ref ort opencv"
fi
n=$(echo $engines | wc -w)
sed 's/^iterations: .*/iterations: 10/; s/^warmup: .*/warmup: 2/' "$src/scenarios/three-engines.yaml" |
  sed "s/^  engine: \[.*\]/  engine: [$(echo $engines | sed 's/ /, /g')]/" > "$work/three.yaml"
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/three.yaml" > "$work/run.txt" 2>&1
code=$?
set -e
# OpenVINO's 2-thread cells on a busy machine: the TBB allocator OpenVINO ships (libtbbmalloc, which its TBB uses when it
# sits beside libtbb) grows anonymous memory per request while another process holds a core, +15 KiB/iter and not
# levelling off in 200 iterations, flat on a quiet machine or without libtbbmalloc (engines/openvino/README.md). The
# judge calling that a leak is a finding about OpenVINO as shipped, not a failure: those cells may leak, no other may.
# It is not the harness's own memory: with no heap shim at all (--no-heap) the transformer cell of ref-vs-ort.yaml
# (2 threads, mmap off) grew RssAnon +10 KiB/iter over 200 iterations with one core busy (1 run of 2), glibc holding
# nothing more; the shim's own tables are left out of anon (samples.shim_bytes, tests/e2e_shim_own.sh).
ov2="engine = 'openvino' AND json_extract(axes, '\$.threads') = '2' AND status = 'leak'"
others() { q "SELECT count(*) FROM cells WHERE status NOT IN ('pass', 'plateau') AND NOT ($ov2)"; }
ov_note() {
  local n_ov
  n_ov=$(q "SELECT count(*) FROM cells WHERE $ov2")
  [ "$n_ov" -eq 0 ] || echo "note: $n_ov OpenVINO 2-thread cell(s) judged leak (the shim's sampling under contention):" \
    "$(q "SELECT group_concat(model || ' ' || axes, '; ') FROM cells WHERE $ov2")"
}
check "$n engines in one run: exit 0, or 1 when only OpenVINO's 2-thread cells leak" \
  test "$code" -eq 0 -o \( "$code" -eq 1 -a "$(others)" -eq 0 \)
ov_note
check "8 cells per engine" \
  eq "$(q "SELECT group_concat(engine || ':' || n) FROM (SELECT engine, count(*) n FROM cells GROUP BY engine ORDER BY engine)")" \
  "$(printf '%s\n' $engines | sort | sed 's/$/:8/' | paste -sd,)"
check "no other cell leaks or fails" eq "$(others)" 0
check "the engines ran the same two models" eq "$(q "SELECT count(DISTINCT engine || model) FROM cells")" $((2 * n))
check "OpenCV's estimate was recorded" test "$(q "SELECT count(*) FROM metrics WHERE name = 'opencv_weights_bytes'")" -gt 0
"$bin/memleak-run" report --db "$db" --out "$work/report" > /dev/null
check "the report has the engines side by side" test -s "$work/report/plots/engines-infer.png"
check "index.html shows it" grep -q "engines-infer" "$work/report/index.html"
check "the plot's data has a series per engine: $engines" \
  eq "$(head -n 1 "$work/report/data/engines-infer-peak.tsv" | cut -f2-)" "$(printf 'engine=%s\n' $engines | paste -sd '\t')"
check "...and a value for each in every row" \
  eq "$(awk -F '\t' -v nf=$((n + 1)) 'NR > 1 && NF == nf { for (i = 2; i <= nf; i++) if ($i == "") next; print }' \
    "$work/report/data/engines-infer-peak.tsv" | wc -l)" 8
finish
