/* conformance_within.h: the ONNX backend test cases whose float outputs are judged by the statistic (common/within:
 * the fraction of values within a tolerance of the output's scale) instead of element by element, one line each.
 * It must never list a case without a reason a reader can check against the case's own data or generator. */
#ifndef REF_CONFORMANCE_WITHIN_H
#define REF_CONFORMANCE_WITHIN_H

/* X(case name, fraction needed, tolerance of max|want|, why the element-wise check does not fit). The reference
 * values of these cases were typed into onnx's generators with 4 decimals, so every element carries up to 5e-5 of
 * rounding whatever its own size: relative to the element, a small one fails by the rounding alone. Judged against
 * the output's scale instead, with every element required within 2e-4 of it (the rounding step twice, for float32
 * sampling sums on top; roialign_aligned_false's worst element is 8.4e-5 off here). */
#define REF_CASE_WITHIN_ROUNDED "expected values typed with 4 decimals (up to 5e-5 of rounding in each element)"
#define REF_CASE_WITHIN_TABLE(X)                                             \
    X("test_gridsample_bicubic", 1.0, 2e-4, REF_CASE_WITHIN_ROUNDED)          \
    X("test_roialign_aligned_false", 1.0, 2e-4, REF_CASE_WITHIN_ROUNDED)      \
    X("test_roialign_aligned_true", 1.0, 2e-4, REF_CASE_WITHIN_ROUNDED)

#endif
