#!/usr/bin/env bash
# The reference engine's per-shape plan cache stays bounded (plan_cache): refengine run over inputs whose shape
# changes every infer keeps the engine's live bytes (its allocation counter) flat once the cache is full, while an
# oversized cache grows with every new shape (so the check can see growth); a fixed shape never replans, and
# refengine plan/run plan for --shape. It must never depend on a fetched model: it generates its own.
source "$(dirname "$0")/lib.sh"

m="$work/trd.onnx"
"$bin/refengine" gen transformer --layers 1 --hidden 32 --heads 2 --seq 8 --dynamic --out "$m" > /dev/null

# 24 distinct shapes, each seen 4 times in turn: batch 1..3 x seq 2..9.
shapes=""
for b in 1 2 3; do for s in 2 3 4 5 6 7 8 9; do shapes="$shapes${shapes:+,}${b}x${s}x32"; done; done
live() { # plan_cache, then: prints one live-bytes figure per infer
  "$bin/refengine" run "$m" --shape "input=$shapes" --option "plan_cache=$1" --iterations 96 --warmup 0 \
    --live-bytes > "$work/run.txt"
  sed -n 's/^live_bytes [0-9]* //p' "$work/run.txt"
}
# max of the values from the FROM-th (1-based) on
max_from() { tail -n "+$1" | sort -n | tail -n 1; }

live 4 > "$work/small.txt"
check "plan_cache=4: 96 infers sampled" eq "$(wc -l < "$work/small.txt")" 96
first_cycle_max=$(head -n 24 "$work/small.txt" | sort -n | tail -n 1)
check "plan_cache=4: live bytes after the first cycle never exceed its peak ($first_cycle_max)" \
  test "$(max_from 25 < "$work/small.txt")" -le "$first_cycle_max"
check "plan_cache=4: the last cycle repeats the second exactly (a plateau)" \
  eq "$(sed -n 73,96p "$work/small.txt" | md5sum)" "$(sed -n 25,48p "$work/small.txt" | md5sum)"
check "plan_cache=4: every infer but those of the compiled shape planned, all but 4 evicted" \
  grep -q "plans: 92 built, 88 evicted, 4 cached (plan_cache 4)" "$work/run.txt"

live 64 > "$work/big.txt"
grew=$(( $(sed -n 24p "$work/big.txt") - $(sed -n 2p "$work/big.txt") ))
check "plan_cache=64: live bytes grow while new shapes arrive (+$grew bytes over the first cycle)" test "$grew" -gt 20000
check "plan_cache=64: then stay flat (every shape cached)" eq "$(sort -u < <(sed -n '25,96p' "$work/big.txt") | wc -l)" 1
check "plan_cache=64: 23 plans, none evicted" grep -q "plans: 23 built, 0 evicted, 23 cached" "$work/run.txt"
check "the bounded cache holds less than the big one" \
  test "$(max_from 1 < "$work/small.txt")" -lt "$(max_from 1 < "$work/big.txt")"

# A fixed shape: the compiled plan serves every infer, nothing is planned or allocated after the first.
"$bin/refengine" run "$m" --shape input=2x8x32 --iterations 20 --warmup 0 --live-bytes > "$work/fixed.txt"
check "fixed shape: no plan built at run time" grep -q "plans: 0 built, 0 evicted, 0 cached" "$work/fixed.txt"
check "fixed shape: live bytes identical after every infer" \
  eq "$(sed -n 's/^live_bytes [0-9]* //p' "$work/fixed.txt" | sort -u | wc -l)" 1

# plan and run plan for the shapes given; the default (symbolic dims taken as 1) says so.
"$bin/refengine" plan "$m" --json > "$work/p1.json"
"$bin/refengine" plan "$m" --shape input=4x64x32 --json > "$work/p2.json"
check "plan: default shapes named, guessed" grep -q '"shapes":"input=1x1x32","guessed_dims":true' "$work/p1.json"
check "plan: --shape planned" grep -q '"shapes":"input=4x64x32","guessed_dims":false' "$work/p2.json"
b1=$(sed 's/.*"planned_bytes":\([0-9]*\).*/\1/' "$work/p1.json")
b2=$(sed 's/.*"planned_bytes":\([0-9]*\).*/\1/' "$work/p2.json")
check "plan: 4x64 needs far more than 1x1 ($b2 vs $b1 bytes)" test "$b2" -gt $((b1 * 100))
set +e
"$bin/refengine" plan "$m" --shape input=4x64x31 > "$work/bad.txt" 2>&1
code=$?
"$bin/refengine" plan "$m" --shape nosuch=1x2 > "$work/bad2.txt" 2>&1
code2=$?
set -e
check "plan: a shape contradicting a fixed dim fails (exit 2: the input is refused)" eq "$code" 2
check "plan: ... and says which" grep -q "option shape.input: dim 2 is 31, the model declares 32" "$work/bad.txt"
check "plan: an unknown input name fails naming it" grep -q "the model has no input 'nosuch'" "$work/bad2.txt"
finish
