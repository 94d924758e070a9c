#!/usr/bin/env bash
# The fusions ONNX Runtime's optimizer writes into published models (com.microsoft EmbedLayerNormalization, Attention
# with the mask index, a raw mask, and causal with an attention bias, MultiHeadAttention, SkipLayerNormalization,
# SkipSimplifiedLayerNormalization, FastGelu, BiasGelu, Gelu, QuickGelu, FusedConv, FusedGemm, FusedMatMul,
# MatMulNBits, QAttention; SimplifiedLayerNormalization and ONNX Gelu; issue 24) in small float32 and float16
# models: the reference engine agrees with ORT, float32 element-wise (rtol 1e-4 of each output's max), float16 within
# 2x ORT's own float32-vs-float16 difference, quantized by the statistical bases (tests/crosscheck_basis.sh picks
# each). It must never download anything: without ORT or python3-onnx it prints SKIP and exits 77.
source "$(dirname "$0")/lib.sh"
build="${MLK_BUILD_DIR:?MLK_BUILD_DIR must point at the build tree}"
need_ort_crosscheck "$build"

m="$work/models"
/usr/bin/python3 "$src/tests/transformer_ms_models.py" "$m"
based() { # model, kind crosscheck_basis.sh must name, then its arguments
  local model=$1 kind=$2
  shift 2
  MLK_BUILD_DIR="$build" "$src/tests/crosscheck_basis.sh" "$model" "$@" > "$work/xc.txt" 2>&1 &&
    grep -q "outputs agree" "$work/xc.txt" && grep -q "is $kind:" "$work/xc.txt" || { cat "$work/xc.txt"; return 1; }
  grep "^ok: output 0" "$work/xc.txt" | cut -c 1-160 | sed "s/^/  $(basename "$model"): /"
}
# Measured here: float32 max relative difference 1.5e-6 (encoder) and 4.6e-8 (causal); float16 at most half its bound
# (2x ORT's own float32-vs-float16 difference).
for b in "2 7" "1 16"; do
  read -r batch seq <<<"$b"
  check "encoder (EmbedLayerNorm, Attention with masks, Skip*Norm, Gelu family), batch $batch seq $seq: ORT agrees" \
    based "$m/encoder.onnx" float --opt dim.batch="$batch" --opt dim.seq="$seq"
  check "encoder-f16, batch $batch seq $seq: ORT agrees within its own float16 difference" \
    based "$m/encoder-f16.onnx" float16 --opt dim.batch="$batch" --opt dim.seq="$seq"
done
check "causal (unidirectional, qkv_hidden_sizes 32/32/16, attention bias): ORT agrees" \
  based "$m/causal.onnx" float --opt dim.batch=2 --opt dim.seq=9
check "causal-f16: ORT agrees within its own float16 difference" \
  based "$m/causal-f16.onnx" float16 --opt dim.batch=2 --opt dim.seq=9
check "fused (FusedConv with 5 activations and Z, FusedGemm, FusedMatMul transA/transB/alpha): ORT agrees" \
  based "$m/fused.onnx" float --opt dim.batch=3
check "mha (MultiHeadAttention: cross with bias and key padding mask, causal self with attention bias): ORT agrees" \
  based "$m/mha.onnx" float --opt dim.batch=2 --opt dim.seq=5 --opt dim.mlen=7
check "mha-f16: ORT agrees within its own float16 difference" \
  based "$m/mha-f16.onnx" float16 --opt dim.batch=2 --opt dim.seq=5 --opt dim.mlen=7
check "nbits (MatMulNBits: 4-bit with packed, default, float zero points, 8-bit, partial block, bias): ORT agrees" \
  based "$m/nbits.onnx" float --opt dim.batch=2 --opt dim.seq=3
check "qattention (DynamicQuantizeLinear + QAttention, three weight forms, mask): ORT agrees (quantized basis)" \
  based "$m/qattention.onnx" quantized --opt dim.batch=2 --opt dim.seq=6
check "encoder at 2 ref threads: ORT agrees" \
  based "$m/encoder.onnx" float --opt dim.batch=2 --opt dim.seq=7 --ref-opt threads=2
finish
