#!/usr/bin/env bash
# The reference engine against the ONNX backend test suite (Debian's libonnx-testdata).
# It must never pass with a failing case: the targets are 0 failed, >= 900 passed in node/ (every skip named by
# reason in the output), >= 130 in the other three; a compile for the data's own input shapes (the default) and one
# for the declared shapes (--declared-shapes) give the same verdicts; each case declared statistical prints its numbers.
set -euo pipefail
data=/usr/share/libonnx-testdata/data
bin="${MLK_BIN_DIR:?MLK_BIN_DIR must point at build/bin}"
if [ ! -d "$data/node" ]; then
  echo "SKIP: $data not found (Debian package libonnx-testdata)"
  exit 77
fi

summary() { tail -n 1 | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/'; }

status=0
out_node=$("$bin/refengine" conformance --quiet "$data/node") || status=1
echo "$out_node" | grep -v '^[0-9]* passed' || true
reasons=$(echo "$out_node" | sed -n '/^skipped, by reason:/,/^[0-9]* passed/p' | grep -c '^ *[0-9][0-9]*  ' || true)
read -r node_pass node_fail node_skip < <(echo "$out_node" | summary)
echo "node: $node_pass passed, $node_fail failed, $node_skip skipped"

out_rest=$("$bin/refengine" conformance --quiet "$data/pytorch-converted" "$data/pytorch-operator" "$data/simple") || status=1
echo "$out_rest" | grep -v '^[0-9]* passed' || true
read -r rest_pass rest_fail rest_skip < <(echo "$out_rest" | summary)
echo "pytorch-converted + pytorch-operator + simple: $rest_pass passed, $rest_fail failed, $rest_skip skipped"

# Threads and arena off must not change any verdict: rerun node/ that way.
out_t2=$("$bin/refengine" conformance --quiet --threads 2 --arena off --iterations 2 "$data/node") || status=1
read -r t2_pass t2_fail t2_skip < <(echo "$out_t2" | summary)
echo "node, threads 2, arena off, 2 iterations: $t2_pass passed, $t2_fail failed, $t2_skip skipped"

out_decl=$("$bin/refengine" conformance --quiet --declared-shapes "$data/node") || status=1
read -r decl_pass decl_fail decl_skip < <(echo "$out_decl" | summary)
echo "node, compiled for the declared shapes: $decl_pass passed, $decl_fail failed, $decl_skip skipped"

# Each case declared in engines/ref/cli/conformance_within.h that node/ holds prints its "within" line (the fraction,
# mean and max difference), whether or not --quiet.
src="${MLK_SOURCE_DIR:-$(dirname "$0")/..}"
declared=0
for c in $(sed -n 's/^ *X("\(test_[a-z0-9_]*\)".*/\1/p' "$src/engines/ref/cli/conformance_within.h"); do
  [ -d "$data/node/$c" ] && declared=$((declared + 1))
done
within=$(echo "$out_node" | grep -c '^within node/' || true)
echo "node: $within statistical cases reported, $declared declared"

fail=0
[ "$within" -eq "$declared" ] || { echo "FAIL: $declared declared statistical cases, $within reported"; fail=1; }
[ "$node_fail" -eq 0 ] || { echo "FAIL: $node_fail failed in node/"; fail=1; }
[ "$decl_fail" -eq 0 ] || { echo "FAIL: $decl_fail failed with --declared-shapes"; fail=1; }
[ "$node_skip" -eq 0 ] || [ "$reasons" -gt 0 ] || { echo "FAIL: $node_skip skips but no reasons listed"; fail=1; }
[ "$rest_fail" -eq 0 ] || { echo "FAIL: $rest_fail failed outside node/"; fail=1; }
[ "$t2_fail" -eq 0 ] || { echo "FAIL: $t2_fail failed with threads 2 / arena off"; fail=1; }
[ "$node_pass" -ge 900 ] || { echo "FAIL: only $node_pass passed in node/ (target 900)"; fail=1; }
[ "$rest_pass" -ge 130 ] || { echo "FAIL: only $rest_pass passed in the other three (target 130)"; fail=1; }
[ "$t2_pass" -eq "$node_pass" ] || { echo "FAIL: threads 2 / arena off passed $t2_pass, not $node_pass"; fail=1; }
[ "$status" -eq 0 ] || [ "$fail" -eq 1 ] || { echo "FAIL: refengine conformance exited non-zero"; fail=1; }
exit "$fail"
