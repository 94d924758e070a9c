#!/usr/bin/env bash
# Special files at every path memleak-run opens (issue 25, item 4): a FIFO, a folder, /dev/zero, a socket and a link
# to nothing, given as the scenario, the model, an input, the db (run, report, compare, history, baseline, merge's
# input and output, import-gbench's), a Google Benchmark report, an engine plugin (--dry-run too), a gnuplot script,
# the report's folder and files, the model cache and an allocator preload: each is exit 2 within 2 s naming the path.
source "$(dirname "$0")/lib.sh"
need_sqlite
ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); } # bash's clock: no process per reading
printf 'name: sf\nengine: ref\nmodel: {generate: mlp, mlp_hidden: 16}\npipeline: [compile_model, create_request, infer, release_request, release_compiled]\niterations: 3\n' > "$work/ok.yaml"
"$bin/memleak-run" --db "$work/ok.db" --quiet "$work/ok.yaml" > /dev/null
model=$(find "$work/cache" -name '*.onnx' | head -1)
cat > "$work/bench.json" <<'JSON'
{"context": {"date": "2024-05-01T02:00:00+02:00", "host_name": "h", "num_cpus": 2},
 "benchmarks": [{"name": "BM_x", "run_name": "BM_x", "run_type": "iteration", "repetitions": 1, "iterations": 10,
                 "real_time": 100.0, "cpu_time": 100.0, "time_unit": "ns"}]}
JSON
"$bin/memleak-run" import-gbench --db "$work/g0.db" "$work/bench.json" > /dev/null

# make KIND PATH: put a special file of KIND at PATH (nothing there before)
make() {
  rm -rf "$2"
  case $1 in
    fifo) mkfifo "$2" ;;
    folder) mkdir "$2" ;;
    zero) ln -s /dev/zero "$2" ;;
    socket) /usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$2" ;;
    dangling) ln -s "$work/nothing-here" "$2" ;;
  esac
}
# try WHAT PATH-IN-MESSAGE COMMAND...: exit 2, within 2 s, a message naming the path
try() {
  local what=$1 name=$2; shift 2
  local t0 code el
  t0=$(ms)
  set +e
  timeout -s KILL 10 "$@" > "$work/out.txt" 2>&1 < /dev/null
  code=$?
  set -e
  el=$(( $(ms) - t0 ))
  check "$what: exit 2" eq "$code" 2
  check "$what: promptly ($el ms)" test "$el" -lt "$prompt_ms"
  check "$what: names $name" grep -qF "$name" "$work/out.txt"
  [ "$code" = 2 ] || sed 's/^/    /' "$work/out.txt" | head -5
}

mkdir -p "$work/engines" "$work/plots" "$work/out"
cp "$MLK_BIN_DIR/../lib/"engine_ref.so "$work/engines/"
cp "$MLK_SOURCE_DIR/plots/"*.gp "$work/plots/"
for kind in fifo folder zero socket dangling; do
  p="$work/sp-$kind"
  make "$kind" "$p"
  # inputs of a run
  try "$kind as the scenario" "$p" "$bin/memleak-run" --db "$work/x.db" --quiet "$p"
  printf 'name: sf\nengine: ref\nmodel: %s\npipeline: [compile_model, release_compiled]\niterations: 3\n' "$p" > "$work/m.yaml"
  try "$kind as the model" "$p" "$bin/memleak-run" --db "$work/x.db" --quiet --dry-run "$work/m.yaml"
  printf 'name: sf\nengine: ref\nmodel: {path: %s, inputs: [%s]}\npipeline: [compile_model, release_compiled]\niterations: 3\n' "$model" "$p" > "$work/i.yaml"
  try "$kind as an input" "$p" "$bin/memleak-run" --db "$work/x.db" --quiet --dry-run "$work/i.yaml"
  printf 'name: sf\nengine: ref\nmodel: %s\npipeline: [compile_model, release_compiled]\niterations: 3\nmatrix: {allocator: [{name: mine, preload: %s}]}\n' "$model" "$p" > "$work/a.yaml"
  try "$kind as an allocator preload" "$p" "$bin/memleak-run" --db "$work/x.db" --quiet --dry-run "$work/a.yaml"
  if [ "$kind" != folder ]; then
    try "$kind as the model cache" "$p" "$bin/memleak-run" --db "$work/x.db" --quiet --dry-run --model-cache "$p" "$work/ok.yaml"
  fi
  # what a tool cell's valgrind reads or runs, named by the environment
  if command -v valgrind > /dev/null; then
    printf 'name: sf\nengine: ref\nmodel: %s\npipeline: [compile_model, release_compiled]\ntool: memcheck\n' "$model" > "$work/t.yaml"
    for var in MLK_VALGRIND MLK_VALGRIND_SUPP MLK_TOOL_KEEP; do
      try "$kind as \$$var" "$p" env "$var=$p" "$bin/memleak-run" --db "$work/x.db" --quiet --dry-run "$work/t.yaml"
    done
  fi
  try "$kind as \$MLK_HEAP_SHIM" "$p" env MLK_HEAP_SHIM="$p" "$bin/memleak-run" --db "$work/x.db" --quiet --dry-run "$work/ok.yaml"
  # the engine plugin, with --dry-run and without
  make "$kind" "$work/engines/engine_ref.so"
  try "$kind as the engine plugin (--dry-run)" "engine_ref.so" "$bin/memleak-run" --db "$work/x.db" --quiet --dry-run --engine-dir "$work/engines" "$work/ok.yaml"
  try "$kind as the engine plugin" "engine_ref.so" "$bin/memleak-run" --db "$work/x.db" --quiet --engine-dir "$work/engines" "$work/ok.yaml"
  rm -rf "$work/engines/engine_ref.so"
  cp "$MLK_BIN_DIR/../lib/"engine_ref.so "$work/engines/"
  # the db of every command
  try "$kind as the run's db" "$p" "$bin/memleak-run" --db "$p" --quiet "$work/ok.yaml"
  try "$kind as report's db" "$p" "$bin/memleak-run" report --db "$p" --out "$work/out"
  try "$kind as compare's db" "$p" "$bin/memleak-run" compare --db "$p"
  try "$kind as history's db" "$p" "$bin/memleak-run" history --all --db "$p"
  try "$kind as baseline's db" "$p" "$bin/memleak-run" baseline list --db "$p"
  try "$kind as merge's input" "$p" "$bin/memleak-run" merge "$work/merged.db" "$p"
  try "$kind as merge's output" "$p" "$bin/memleak-run" merge "$p" "$work/ok.db"
  try "$kind as import-gbench's report" "$p" "$bin/memleak-run" import-gbench --db "$work/g.db" "$p"
  check "$kind as import-gbench's report: no db made" test ! -e "$work/g.db"
  try "$kind as import-gbench's db" "$p" "$bin/memleak-run" import-gbench --db "$p" "$work/bench.json"
  # the report's folder, a file in it, and a gnuplot script
  if [ "$kind" != folder ]; then
    try "$kind as the report's folder" "$p" "$bin/memleak-run" report --db "$work/ok.db" --out "$p" --no-plots
  fi
  for f in summary.md junit.xml index.html; do
    make "$kind" "$work/out/$f"
    try "$kind as the report's $f" "$f" "$bin/memleak-run" report --db "$work/ok.db" --out "$work/out" --no-plots
    rm -rf "$work/out/$f"
  done
  make "$kind" "$work/plots/memory.gp"
  try "$kind as a gnuplot script" "memory.gp" "$bin/memleak-run" report --db "$work/ok.db" --out "$work/out" --plots-dir "$work/plots"
  rm -rf "$work/plots/memory.gp"
  cp "$MLK_SOURCE_DIR/plots/memory.gp" "$work/plots/"
  rm -rf "$p"
done
finish
