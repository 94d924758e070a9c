#!/usr/bin/env bash
# memleak-run with engine: opencv: every step of a generated model runs through OpenCV's DNN module, load_engine to
# unload_engine in every iteration, and no cell leaks; OpenCV's estimate lands in the metrics table; the options
# move memory where they should (fusion keeps a second copy of the convolution weights, mmap=off keeps the model's
# bytes until release_model); compiling again and again (a fresh import each time) keeps nothing (pass or plateau).
# Without Debian's libopencv-dnn-dev it prints SKIP and exits 77.
source "$(dirname "$0")/lib.sh"
build="${MLK_BUILD_DIR:?MLK_BUILD_DIR must point at the build tree}"
[ -f "$build/lib/engine_opencv.so" ] || {
  echo "SKIP: engine_opencv.so is not built: install Debian's libopencv-dnn-dev (ci/setup.sh does), then cmake again"
  exit 77
}
need_sqlite

db="$work/steps.db"
cat > "$work/steps.yaml" <<'YAML'
name: e2e-opencv-steps
engine: opencv
model: {generate: resnet18, image_size: 64}
setup: []
pipeline: [load_engine, read_model, compile_model, create_request, infer, release_request, release_compiled,
           release_model, unload_engine]
teardown: []
iterations: 12
warmup: 2
matrix:
  mmap: [on, off]
  fusion: [on, off]
timeout_s: 300
YAML
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/steps.yaml" > "$work/steps.txt" 2>&1
code=$?
set -e
check "engine: opencv, every step in the pipeline: exit 0" eq "$code" 0
check "all 4 cells pass (or plateau: no leak)" \
  eq "$(q "SELECT count(*) FROM cells WHERE engine='opencv' AND status IN ('pass', 'plateau')")" 4
check "every step of every measured iteration was sampled (9 x 12 x 4)" \
  eq "$(q "SELECT count(*) FROM samples WHERE phase='measure' AND step NOT IN ('iteration', 'malloc_trim')")" 432
check "the 9 steps, each sampled" eq "$(q "SELECT count(DISTINCT step) FROM samples WHERE phase='measure' AND step NOT IN ('iteration', 'malloc_trim')")" 9
check "OpenCV's weights estimate is recorded" test "$(q "SELECT max(value) FROM metrics WHERE name='opencv_weights_bytes'")" -gt 40000000
check "...and its blobs estimate" test "$(q "SELECT count(*) FROM metrics WHERE name='opencv_blobs_bytes'")" -gt 0

# Median live heap after a step, for the cell with these axis values.
live() { # mmap, fusion, step
  q "SELECT s.heap_live_bytes FROM samples s JOIN cells c ON c.id = s.cell_id
     WHERE s.phase = 'measure' AND s.step = '$3' AND c.axes LIKE '%\"mmap\":\"$1\"%' AND c.axes LIKE '%\"fusion\":\"$2\"%'
     ORDER BY s.heap_live_bytes LIMIT 1 OFFSET 6"
}
fused=$(live on on infer)
plain=$(live on off infer)
check "fusion on keeps a second copy of the convolution weights: $(( (fused - plain) >> 20 )) MiB more live heap" \
  test $((fused - plain)) -gt $((32 << 20))
model=$(find "$XDG_CACHE_HOME/memleak/models" -name '*.onnx' | head -n 1)
size=$(stat -c %s "$model")
kept=$(( $(live off off read_model) - $(live on off read_model) ))
check "mmap=off keeps the model's bytes ($((size >> 20)) MiB) from read_model on: $((kept >> 20)) MiB more" \
  test "$kept" -ge $((size * 9 / 10))

# A compile/release loop on one model: the first compile takes read_model's net, every later one imports the model
# again; threads reach OpenCV (process-wide), and blob reuse (read once per process) is set per cell.
db="$work/loop.db"
cat > "$work/loop.yaml" <<'YAML'
name: e2e-opencv-compile-loop
engine: opencv
model: {generate: mlp, mlp_hidden: 256}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: 30
warmup: 5
matrix:
  mmap: [on, off]
  threads: [1, 2]
  blob_reuse: [on, off]
timeout_s: 300
YAML
set +e
"$bin/memleak-run" --db "$db" --quiet "$work/loop.yaml" > "$work/loop.txt" 2>&1
code=$?
set -e
check "compile loop: exit 0" eq "$code" 0
# A second OpenCV thread's first malloc may open a glibc arena (64 MiB of VmSize) after the warmup: a plateau.
check "compile loop: all 8 cells pass or plateau (no leak)" \
  eq "$(q "SELECT count(*) FROM cells WHERE status IN ('pass', 'plateau')")" 8
check "threads=2 reaches OpenCV: a second thread runs infer" \
  test "$(q "SELECT max(s.threads) FROM samples s JOIN cells c ON c.id = s.cell_id WHERE c.axes LIKE '%\"threads\":\"2\"%' AND s.step = 'infer'")" -ge 2
# Libraries OpenCV links may start threads of their own when they load (Debian's OpenBLAS, once python3-numpy or
# liblapack pulls in libopenblas0-pthread, starts a pool per core): those are there from load_engine on, whatever
# `threads` says. What threads=1 promises is that OpenCV itself starts none after that.
check "threads=1 cells sampled load_engine" test "$(q "SELECT count(*) FROM samples s JOIN cells c ON c.id = s.cell_id WHERE c.axes LIKE '%\"threads\":\"1\"%' AND s.step = 'load_engine' AND s.threads > 0")" -gt 0
check "threads=1: OpenCV starts no thread after the engine loaded" \
  eq "$(q "SELECT max(s.threads) FROM samples s JOIN cells c ON c.id = s.cell_id WHERE c.axes LIKE '%\"threads\":\"1\"%' AND s.step = 'infer'")" \
  "$(q "SELECT max(s.threads) FROM samples s JOIN cells c ON c.id = s.cell_id WHERE c.axes LIKE '%\"threads\":\"1\"%' AND s.step = 'load_engine'")"
finish
