#!/usr/bin/env bash
# Two OpenVINO releases in one run through the scoped openvino.version axis (engines/openvino/fetch.sh's tested pair, one
# from before 2026.0's change of the C API's element-type numbering and the default): one engine_openvino.so drives
# both, each cell loads the release it asked for (metric openvino_release), both pass and give the reference engine's
# outputs; runs with MLK_OPENVINO_VERSION line up as commits for history; and a release not fetched is refused before
# any cell runs. SKIP (77) unless both releases were fetched
# (engines/openvino/fetch.sh --versions tested; ci/setup.sh does it).
source "$(dirname "$0")/lib.sh"
need_sqlite
[ -f "$MLK_BUILD_DIR/lib/engine_openvino.so" ] || { echo "SKIP: engine_openvino.so not built (engines/openvino/fetch.sh)"; exit 77; }
fetch="$src/engines/openvino/fetch.sh"
# The cache the plugin was built with (lib.sh points XDG_CACHE_HOME elsewhere).
cache=$(env -u XDG_CACHE_HOME "$fetch" --print-dir)
new=$("$fetch" --print-default)
old=$(sed -n 's/^tested_versions="\([0-9.]*\) .*/\1/p' "$fetch")
for v in "$old" "$new"; do
  ls "$cache/$v/libs"/libopenvino_c.so.* > /dev/null 2>&1 ||
    { echo "SKIP: OpenVINO $v not fetched (engines/openvino/fetch.sh --versions tested)"; exit 77; }
done
db="$work/rel.db"
cat > "$work/rel.yaml" <<YAML
name: openvino-releases
engine: ref
model: {generate: transformer, layers: 1, hidden: 32, heads: 2, seq: 16}
setup: [load_engine, read_model, compile_model]
pipeline: [create_request, infer, release_request]
teardown: [release_compiled, release_model, unload_engine]
iterations: 100
warmup: 10
matrix:
  engine: [ref, openvino]
  openvino.version: [$old, $new]
YAML
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/rel.yaml" > "$work/rel.txt" 2>&1
code=$?
set -e
check "two releases in one run: exit 0" eq "$code" 0
[ "$code" -eq 0 ] || cat "$work/rel.txt"
check "four cells: the axis is OpenVINO's alone, so ref's two cells are the same configuration twice" \
  eq "$(q "SELECT count(*) FROM cells")" 4
code_of() { echo "$1" | awk -F. '{printf "%d%03d%03d", $1, $2, $3}'; }
for v in "$old" "$new"; do
  check "the $v cell loaded OpenVINO $v" eq "$(q "SELECT group_concat(DISTINCT m.value) FROM metrics m JOIN cells c
    ON c.id = m.cell_id WHERE c.engine = 'openvino' AND c.axes LIKE '%\"$v\"%' AND m.name = 'openvino_release'")" \
    "$(code_of "$v")"
done
check "every cell passes" eq "$(q "SELECT count(*) FROM cells WHERE status != 'pass'")" 0

# Both releases compute what the reference engine does (f32), whichever numbering of element types they use.
"$bin/refengine" gen mlp --out "$work/mlp.onnx" --mlp-hidden 64 > /dev/null
if [ -x "$MLK_BUILD_DIR/tests/opencv_crosscheck" ]; then
  for v in "$old" "$new"; do
    check "OpenVINO $v: outputs agree with ref" "$MLK_BUILD_DIR/tests/opencv_crosscheck" --lib-dir "$MLK_BUILD_DIR/lib" \
      --engines ref,openvino --rtol 1e-4 --eopt openvino:precision=f32 --eopt "openvino:version=$v" "$work/mlp.onnx"
  done
fi

# Releases as commits (scenarios/openvino-release-history.yaml): MLK_OPENVINO_VERSION picks the release without putting
# it in the config key, so a run per release lines up under one key and history reads them in order.
db="$work/hist.db"
sed '/^  engine: /d; /^  openvino.version: /d; /^matrix:/d; s/^engine: ref/engine: openvino/; s/^iterations: .*/iterations: 20/' \
  "$work/rel.yaml" > "$work/hist.yaml"
echo "engine_options: {threads: 1}" >> "$work/hist.yaml" # options are checked before the run: so is the release
for v in "$old" "$new"; do
  MLK_OPENVINO_VERSION=$v "$bin/memleak-run" --db "$db" --quiet --commit "$v" "$work/hist.yaml" > "$work/hist-$v.txt" 2>&1 ||
    { cat "$work/hist-$v.txt"; check "a run with MLK_OPENVINO_VERSION=$v" false; }
done
check "one config key across the two releases' runs" eq "$(q "SELECT count(DISTINCT config_key) FROM cells")" 1
check "each run loaded its release" eq "$(q "SELECT group_concat(r, ' ') FROM (SELECT r.commit_sha || '=' || max(m.value) r
  FROM runs r JOIN cells c ON c.run_id = r.id JOIN metrics m ON m.cell_id = c.id AND m.name = 'openvino_release'
  GROUP BY r.id ORDER BY r.id)")" "$old=$(code_of "$old") $new=$(code_of "$new")"
check "history reads both runs (exit 0 or 1: a change point is a finding)" \
  test "$("$bin/memleak-run" history --db "$db" --all > "$work/history.txt" 2>&1; echo $?)" -le 1
check "MLK_OPENVINO_VERSION that is not a release: refused" \
  test "$(MLK_OPENVINO_VERSION=2024.6 "$bin/memleak-run" --db "$work/bad.db" --dry-run "$work/hist.yaml" 2>&1 |
    grep -c "MLK_OPENVINO_VERSION: '2024.6' is not an OpenVINO release")" -eq 1

# A pinned release nobody fetched: refused at the scenario's line, naming the fetch command.
sed "s/^  openvino.version: .*/  openvino.version: [$new, 2025.2.0]/" "$work/rel.yaml" > "$work/missing.yaml"
set +e
MLK_OPENVINO_CACHE="$work/empty" "$bin/memleak-run" --db "$work/missing.db" "$work/missing.yaml" > "$work/missing.txt" 2>&1
code=$?
set -e
check "a release not fetched: exit 2" eq "$code" 2
check "...at file:line:col, with the command that fetches it" \
  grep -q "missing.yaml:$(grep -n '^  openvino.version' "$work/missing.yaml" | cut -d: -f1):[0-9]*: option version: OpenVINO .* is not fetched .*MLK_OPENVINO_CACHE=$work/empty engines/openvino/fetch.sh --versions" "$work/missing.txt"
finish
