#!/usr/bin/env bash
# OpenCV's DNN module beside the reference engine (and ONNX Runtime when engine_ort.so is built): every generated model
# OpenCV reads gives the same outputs as ref within 1e-4 of each output's scale; the models it cannot read are named,
# with OpenCV's reason, and refused at read_model (never a crash); its options reach it and keep the outputs; bad
# options exit 2 before anything runs. Without Debian's libopencv-dnn-dev it prints SKIP and exits 77.
source "$(dirname "$0")/lib.sh"
build="${MLK_BUILD_DIR:?MLK_BUILD_DIR must point at the build tree}"
plugin="$build/lib/engine_opencv.so"
xc="$build/tests/opencv_crosscheck"
if [ ! -f "$plugin" ] || [ ! -x "$xc" ]; then
  echo "SKIP: engine_opencv.so is not built: install Debian's libopencv-dnn-dev (ci/setup.sh does), then cmake again"
  exit 77
fi
with_ort=no
[ -f "$build/lib/engine_ort.so" ] && with_ort=yes

m="$work/models"
mkdir -p "$m"
gen() { "$bin/refengine" gen "$@" > /dev/null; }
gen mlp --out "$m/mlp.onnx"
gen mlp --dynamic --out "$m/mlpd.onnx"
gen mobilenetv2 --width-mult 0.35 --image-size 96 --out "$m/mbv2-small.onnx"
gen mobilenetv2 --out "$m/mbv2.onnx"
gen resnet18 --image-size 64 --out "$m/r18.onnx"
gen resnet18 --image-size 64 --dynamic --out "$m/r18d.onnx"
gen resnet18 --image-size 64 --external-data --out "$m/r18x.onnx"
gen resnet50 --image-size 64 --out "$m/r50.onnx"
gen transformer --layers 2 --hidden 64 --heads 2 --seq 16 --out "$m/tr.onnx"
gen transformer --layers 2 --hidden 64 --heads 2 --seq 16 --dynamic --out "$m/trd.onnx"

# One model through ref, opencv (and ort): 0 all agree, 3 OpenCV could not read it (named), anything else fails.
unreadable=()
cross() { # model name, then crosscheck arguments
  local name=$1; shift
  set +e
  "$xc" "$@" "$m/$name.onnx" > "$work/$name.txt" 2>&1
  local code=$?
  set -e
  case $code in
    0) check "$name: every engine that ran agrees with ref" grep -q "outputs agree$" "$work/$name.txt"
       [ "$with_ort" = no ] || check "$name: ORT ran too" grep -q "^ok: ort output" "$work/$name.txt" ;;
    3) check "$name: refused by OpenCV at read_model, with a reason" grep -q "^opencv: read_model failed: read_model: ." \
         "$work/$name.txt"
       check "$name: named as unreadable" grep -q "^CANNOT READ: opencv: .*$name.onnx (failed at read_model)" \
         "$work/$name.txt"
       check "$name: the engines that read it agree" grep -q "outputs agree where read$" "$work/$name.txt"
       unreadable+=("$name: $(sed -n 's/^opencv: read_model failed: read_model: //p' "$work/$name.txt" | cut -c1-230)") ;;
    *) check "$name: crosscheck exits 0 or 3 (got $code)" false
       cat "$work/$name.txt" ;;
  esac
}
for name in mlp mbv2-small mbv2 r18 r18x r50 tr; do
  cross "$name"
done
cross mlpd --opt dim.batch=3
check "dynamic mlp, dim.batch=3: OpenCV's output is 3x10" grep -q "^ok: opencv output 0 (output, 30 values)" \
  "$work/mlpd.txt"
cross r18d --opt dim.batch=2
cross trd --opt dim.batch=2 --opt dim.seq=8

# What OpenCV 4.6 reads and what it cannot (named, not a failure); those it reads must be among these at least.
for name in mlp mlpd r18 r18d r50; do
  check "OpenCV reads $name" grep -q "outputs agree$" "$work/$name.txt"
done
check "external data is refused by name, not handed to OpenCV's importer (which dies of SIGFPE on it)" \
  grep -q "r18x.onnx keeps its weights in external data ('r18x.onnx.data')" "$work/r18x.txt"
echo "models OpenCV $(grep -a -o 'OpenCV 4\.[0-9.]*' "$work/mbv2.txt" | head -n 1 | cut -c8-) cannot read (${#unreadable[@]}):"
for u in "${unreadable[@]}"; do echo "  $u"; done

# Every option: OpenCV accepts it and the outputs still agree; OpenCV's own estimate is reported as metrics.
for o in mmap=off fusion=off threads=2 threads=0 blob_reuse=off blob_reuse=on; do
  set +e
  "$xc" --engines ref,opencv --eopt "opencv:$o" --infers 2 --metrics "$m/r18.onnx" > "$work/opt.txt" 2>&1
  code=$?
  set -e
  check "opencv $o: agrees with ref (exit $code)" grep -q "outputs agree$" "$work/opt.txt"
done
check "metrics: OpenCV's weights estimate" grep -q "^opencv metrics after infer: opencv_weights_bytes=[1-9]" "$work/opt.txt"
check "metrics: OpenCV's blobs estimate" grep -q " opencv_blobs_bytes=[1-9]" "$work/opt.txt"
set +e
"$xc" --engines ref,opencv --eopt opencv:mmap=off "$m/r18x.onnx" > "$work/x.txt" 2>&1
code=$?
set -e
check "mmap=off: external data refused as well (exit 3)" eq "$code" 3

# Option errors exit 2 before anything runs, naming the key and what is accepted.
bad() { # description, engine_options, text the error must hold
  printf 'name: bad\nengine: opencv\nmodel: {generate: mlp, mlp_hidden: 16}\npipeline: [compile_model, release_compiled]\nengine_options: {%s}\n' "$2" \
    > "$work/bad.yaml"
  set +e
  "$bin/memleak-run" --dry-run --db "$work/bad.db" "$work/bad.yaml" > "$work/bad.txt" 2>&1
  local c=$?
  set -e
  check "$1: exit 2" eq "$c" 2
  check "$1: says so" grep -q "$3" "$work/bad.txt"
}
bad "unknown key" "arena: on" "unknown option 'arena'; accepted: threads, fusion, mmap, blob_reuse, dim.NAME"
bad "bad on|off" "fusion: maybe" "option fusion: 'maybe' is not on|off"
bad "bad threads" "threads: 999" "option threads: '999' is not an integer in \[0, 256\]"
bad "bad dim" "dim.batch: x" "option dim.batch: 'x' is not an integer"
finish
