#!/usr/bin/env bash
# QDQ models (quantize_static's format: QuantizeLinear/DequantizeLinear around float Conv and MatMul, uint8
# activations, int8 per-channel weights, int32 biases; tests/qdq_models.py; issue 24) in the reference engine against
# ONNX Runtime through tests/crosscheck_basis.sh, with fuse_qdq on (the default: QLinearConv and an integer GEMM, as
# ORT fuses them) and off (the float Q/DQ arithmetic as written). It must never download anything: without ORT or
# python3-onnx it prints SKIP and exits 77.
source "$(dirname "$0")/lib.sh"
build="${MLK_BUILD_DIR:?MLK_BUILD_DIR must point at the build tree}"
need_ort_crosscheck "$build"

m="$work/models"
/usr/bin/python3 "$src/tests/qdq_models.py" "$m"
based() { # model, then crosscheck_basis.sh arguments: the quantized basis picked and the outputs agree
  local model=$1
  shift
  MLK_BUILD_DIR="$build" "$src/tests/crosscheck_basis.sh" "$model" "$@" > "$work/xc.txt" 2>&1 &&
    grep -q "outputs agree" "$work/xc.txt" && grep -q "is quantized:" "$work/xc.txt" || { cat "$work/xc.txt"; return 1; }
}
# Measured here: the conv model's last dequantized activation equal to ORT's (max 0, both paths), its pooled
# output within 2e-6; the matmul model 1 of 864 values a step away, the same one ORT unoptimized has (a nudge of up
# to 512 steps moves nothing: the second basis decides).
for opt in fuse_qdq=on fuse_qdq=off; do
  check "conv (3 QDQ Conv, Relu before Q), $opt: ORT agrees" \
    based "$m/conv.onnx" --opt dim.batch=2 --opt dim.h=40 --opt dim.w=48 --ref-opt "$opt"
  check "conv, $opt: the activation after the last QuantizeLinear is ORT's, value for value" \
    grep -q "output 1 (a3_dq).*mean |diff| 0, max 0$" "$work/xc.txt"
  check "matmul (shared dequantized input, per-column and per-tensor weights, Softmax), $opt: ORT agrees" \
    based "$m/matmul.onnx" --opt dim.batch=2 --opt dim.seq=9 --ref-opt "$opt"
done
check "conv at 2 ref threads: ORT agrees" \
  based "$m/conv.onnx" --opt dim.batch=1 --opt dim.h=64 --opt dim.w=64 --ref-opt threads=2
finish
