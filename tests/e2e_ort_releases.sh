#!/usr/bin/env bash
# ONNX Runtime releases from 1.1x to 1.30 through one engine_ort.so: a scenario with ort.version as an axis runs every
# cell on every release and the db records which release each cell loaded (metric ort_release, and the C API it was
# driven through); outputs agree with ref on every release; an option a release lacks is an error naming the option
# and the release; a release not fetched is refused before anything runs, naming the fetch.sh command; releases.sh
# runs a scenario once per release (commit = release) and history names the release where memory moved.
# It must never download anything: releases not fetched by engines/ort/fetch.sh make it SKIP (77), saying which.
source "$(dirname "$0")/lib.sh"
build="${MLK_BUILD_DIR:?MLK_BUILD_DIR must point at the build tree}"
plugin="$build/lib/engine_ort.so"
if [ ! -f "$plugin" ]; then
  echo "SKIP: engine_ort.so is not built: ONNX Runtime was not fetched (run engines/ort/fetch.sh, then cmake again)"
  exit 77
fi
need_sqlite
# The releases under test: one 1.1x (C API 17: no AddExternalInitializersFromFilesInMemory, no AllocatorGetStats),
# one 1.2x and the default. fetch.sh --versions tested fetches exactly these.
releases="${MLK_ORT_TEST_VERSIONS:-1.17.3 1.23.2 1.30.0}"
set -- $releases
old=$1 mid=$2 new=$3
# The plugin looks for releases beside the library it was built with (lib.sh points XDG_CACHE_HOME elsewhere).
default_lib=$(grep -a -o '/[^[:space:][:cntrl:]]*/libonnxruntime\.so\.1' "$plugin" | grep -v '%' | head -n 1) # not ort_release.c's format string
cache=$(dirname "$(dirname "$default_lib")")
fetch() { MLK_ORT_CACHE="$cache" "$src/engines/ort/fetch.sh" "$@"; }
unset MLK_ORT_LIBRARY MLK_ORT_VERSION

# ---- What needs no release: the option's checks, before anything runs ----
scen() { # name, then lines after the common head
  local name=$1; shift
  { echo "name: $name"; echo "engine: ort"; printf '%s\n' "$@"; } > "$work/$name.yaml"
}
scen unfetched "model: {generate: mlp, mlp_hidden: 16}" "pipeline: [compile_model, release_compiled]" \
  "matrix:" "  ort.version: [$new, 1.28.0]"
set +e
"$bin/memleak-run" --dry-run --db "$work/x.db" "$work/unfetched.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "a release not fetched: exit 2 before anything runs" eq "$code" 2
check "...naming the scenario line, the release and the fetch.sh command" \
  grep -q "unfetched.yaml:6:[0-9]*: option version: ONNX Runtime 1.28.0 is not fetched (no $cache/1.28.0/lib/libonnxruntime.so.1); fetch it with: .*engines/ort/fetch.sh --versions 1.28.0" "$work/out.txt"
scen badver "model: {generate: mlp, mlp_hidden: 16}" "pipeline: [compile_model, release_compiled]" \
  "engine_options: {ort.version: 1.2x}"
set +e
"$bin/memleak-run" --dry-run --db "$work/x.db" "$work/badver.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "a malformed release: exit 2" eq "$code" 2
check "...saying what a release looks like" grep -q "option version: '1.2x' is not an ONNX Runtime 1.x release such as 1.23.2" "$work/out.txt"
set +e
fetch --versions 1.28.0 > "$work/out.txt" 2>&1
code=$?
set -e
check "fetch.sh refuses a release it has no sha512 for (exit 1), before any download" eq "$code" 1
check "...saying so" grep -q "no pinned onnxruntime-node release 1.28.0" "$work/out.txt"
check "fetch.sh --print-lib: the default at the top of the cache" eq "$(fetch --print-lib "$new")" \
  "$( [ -e "$cache/$new" ] && echo "$cache/$new/lib/libonnxruntime.so.1" || echo "$default_lib")"

missing=""
for v in $releases; do [ -f "$(fetch --print-lib "$v")" ] || missing="$missing $v"; done
if [ -n "$missing" ]; then
  [ "$failed" -eq 0 ] || { finish; exit 1; }
  echo "SKIP: ONNX Runtime$missing not fetched into $cache (engines/ort/fetch.sh --versions \"$releases\")"
  exit 77
fi

# Cached: fetch.sh uses no network (an npm that fails would fail it).
mkdir -p "$work/fakebin"
printf '#!/bin/sh\necho "npm must not run" >&2\nexit 1\n' > "$work/fakebin/npm"
chmod +x "$work/fakebin/npm"
check "fetch.sh with every release cached: no npm, exit 0" \
  bash -c "PATH='$work/fakebin:$PATH' MLK_ORT_CACHE='$cache' '$src/engines/ort/fetch.sh' --versions '$releases' > /dev/null"

# ---- Outputs agree with ref on every release ----
m="$work/models"
mkdir -p "$m"
"$bin/refengine" gen mlp --mlp-hidden 64 --out "$m/mlp.onnx" > /dev/null
"$bin/refengine" gen mobilenetv2 --width-mult 0.35 --image-size 64 --out "$m/mbv2.onnx" > /dev/null
for v in $releases; do
  for model in mlp mbv2; do
    check "ORT $v: $model agrees with ref" bash -c "'$build/tests/ort_crosscheck' --ort-opt version=$v '$m/$model.onnx' \
      > '$work/xc.txt' 2>&1 && grep -q 'outputs agree' '$work/xc.txt' || { cat '$work/xc.txt'; false; }"
  done
done

# ---- The axis: every cell runs, the db says which release each ran ----
db="$work/axis.db"
scen axis "setup: [load_engine, read_model]" \
  "pipeline: [compile_model, create_request, infer, release_request, release_compiled]" \
  "teardown: [release_model, unload_engine]" "iterations: 16" "warmup: 2" "matrix:" \
  "  ort.version: [${releases// /, }]" "  model:" \
  "    - {name: mlp, generate: mlp, mlp_hidden: 64}" \
  "    - {name: mbv2, generate: mobilenetv2, width_mult: 0.35, image_size: 64}"
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/axis.yaml" > "$work/axis.txt" 2>&1
code=$?
set -e
check "the release axis runs (exit 0 or 1: verdicts)" test "$code" -le 1
check "six cells, each judged (pass, plateau or leak), none an error" \
  eq "$(q "SELECT count(*) FROM cells WHERE status IN ('pass', 'plateau', 'leak')")" 6
rel="printf('%d.%d.%d', value / 1000000, value / 1000 % 1000, value % 1000)"
check "every cell ran the release its axis value asked for (metric ort_release)" \
  eq "$(q "SELECT count(DISTINCT c.id) FROM cells c JOIN metrics m ON m.cell_id = c.id AND m.name = 'ort_release'
           WHERE json_extract(c.axes, '\$.\"ort.version\"') = $rel")" 6
check "...and no cell ran another" \
  eq "$(q "SELECT count(*) FROM cells c JOIN metrics m ON m.cell_id = c.id AND m.name = 'ort_release'
           WHERE json_extract(c.axes, '\$.\"ort.version\"') != $rel")" 0
api() { echo "$1" | cut -d. -f2 | sed 's/^0*//'; }
want_api() { local a; a=$(api "$1"); [ "$a" -gt 29 ] && a=29; echo "$a"; } # capped at the header's API 29
check "each release is driven through its own C API (capped at the header's 29)" \
  eq "$(q "SELECT group_concat(a, ' ') FROM (SELECT DISTINCT value a FROM metrics WHERE name = 'ort_api_version'
           ORDER BY value)")" "$(want_api "$old") $(want_api "$mid") $(want_api "$new")"
check "the config key names the release" \
  eq "$(q "SELECT count(DISTINCT config_key) FROM cells WHERE config_key LIKE '%ort.version=$mid%'")" 2
stats() { q "SELECT count(*) FROM metrics m JOIN cells c ON c.id = m.cell_id
             WHERE m.name = 'ort_num_allocs' AND json_extract(c.axes, '\$.\"ort.version\"') = '$1'"; }
check "arena stats from $mid on (AllocatorGetStats, C API 23)" test "$(stats "$mid")" -gt 0
check "...none from $old (C API $(api "$old")), and no crash for asking" eq "$(stats "$old")" 0
check "releases.sh table lists every release" \
  eq "$("$src/engines/ort/releases.sh" table --db "$db" | grep -c -E "^\| ($old|$mid|$new) \|")" 6

# ---- An option the release lacks: an error naming both, not a crash ----
db="$work/lack.db"
scen lack "model: {generate: mlp, mlp_hidden: 16, external_data: true}" \
  "pipeline: [compile_model, release_compiled]" "iterations: 3" "warmup: 0" \
  "engine_options: {ort.version: $old, ort.mmap: off}"
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/lack.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "mmap=off with external data on $old: exit 1 (the cell is an error)" eq "$code" 1
check "...the cell's error names the option, the C API it needs and the release" \
  eq "$(q "SELECT count(*) FROM cells WHERE status = 'error' AND error LIKE '%option mmap=off with external data needs C API 18%ONNX Runtime $old serves C API $(api "$old")%'")" 1
check "...the same on $mid runs (C API 23)" bash -c "sed 's/ort.version: $old/ort.version: $mid/' '$work/lack.yaml' \
  > '$work/lack2.yaml' && '$bin/memleak-run' --db '$work/lack2.db' --quiet '$work/lack2.yaml' > /dev/null"

# MLK_ORT_LIBRARY overrides the library; a release asked for that it is not is refused at load_engine.
db="$work/over.db"
scen over "model: {generate: mlp, mlp_hidden: 16}" "pipeline: [compile_model, release_compiled]" \
  "iterations: 3" "warmup: 0" "engine_options: {ort.version: $old}"
set +e
MLK_ORT_LIBRARY="$(fetch --print-lib "$mid")" "$bin/memleak-run" --db "$db" --quiet "$work/over.yaml" > /dev/null 2>&1
code=$?
set -e
check "MLK_ORT_LIBRARY of another release than asked: exit 1" eq "$code" 1
check "...naming both releases" \
  eq "$(q "SELECT count(*) FROM cells WHERE error LIKE '%option version $old asked for, but %is ONNX Runtime $mid%'")" 1

# ---- History across releases: each release a run, commit = release ----
db="$work/history.db"
scen hist "setup: [load_engine, read_model]" \
  "pipeline: [compile_model, create_request, infer, release_request, release_compiled]" \
  "teardown: [release_model, unload_engine]" "model: {generate: mlp, mlp_hidden: 64}" "iterations: 12" "warmup: 2"
MLK_BUILD_DIR="$build" "$src/engines/ort/releases.sh" --versions "$new $old $mid" --repeat 5 --db "$db" \
  "$work/hist.yaml" > "$work/hist.txt" 2>&1 || { cat "$work/hist.txt"; check "releases.sh runs" false; }
five() { echo "$1 $1 $1 $1 $1"; }
check "fifteen runs, releases oldest first, each run's commit its release" \
  eq "$(q "SELECT group_concat(commit_sha, ' ') FROM (SELECT commit_sha FROM runs ORDER BY started_at, id)")" \
  "$(five "$old") $(five "$mid") $(five "$new")"
check "each run's cells loaded the run's release" \
  eq "$(q "SELECT count(*) FROM cells c JOIN runs r ON r.id = c.run_id JOIN metrics m ON m.cell_id = c.id
           AND m.name = 'ort_release' WHERE $rel != r.commit_sha")" 0
check "one config key across releases (history lines them up)" eq "$(q "SELECT count(DISTINCT config_key) FROM cells")" 1
# Each newer release keeps more heap per process (5.1 MiB for 1.17.3, 6.2 for 1.23.2, 6.9 for 1.30.0 on this mlp: the
# same every run) and maps a larger library (19, 33, 46 MB): with 5 runs per release (history's back window) each
# step stands against one release's own level.
check "history names $mid as the first release where the heap kept between sessions moved" \
  grep -q "change point: iteration final_heap_bytes at run 6 (commit $mid)" "$work/hist.txt"
check "...and $new as the next" grep -q "change point: iteration final_heap_bytes at run 11 (commit $new)" "$work/hist.txt"
check "...and $mid for peak RSS" grep -q "change point: iteration peak_kib at run 6 (commit $mid)" "$work/hist.txt"
set +e
MLK_BUILD_DIR="$build" "$src/engines/ort/releases.sh" --db "$work/no.db" "$work/over.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "releases.sh refuses a scenario that sets the release itself (exit 2)" eq "$code" 2
check "...saying why" grep -q "sets the ORT option version" "$work/out.txt"
set +e
MLK_BUILD_DIR="$build" "$src/engines/ort/releases.sh" --versions "$old" --db "$db" "$work/hist.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "releases.sh refuses to add to an existing db without --append (exit 2)" eq "$code" 2
first=$(q "SELECT id FROM runs WHERE commit_sha = '$old' ORDER BY id LIMIT 1")
last=$(q "SELECT id FROM runs WHERE commit_sha = '$new' ORDER BY id DESC LIMIT 1")
set +e
"$bin/memleak-run" compare --db "$db" --run "$last" --baseline "$first" > "$work/cmp.txt" 2>&1
code=$?
set -e
check "compare: release $new's run against release $old's (same config key): a verdict, exit 0 or 1" test "$code" -le 1
check "...over every step of the cell" grep -q "over 6 cell steps (0 without a baseline)" "$work/cmp.txt"
finish
