/* test_quantile.c: quantile.h against numpy's "linear" quantiles: odd and even counts, ties, one value, none,
 * the ends, and the sort it leaves behind. It must never depend on anything but its own arrays. */
#include <math.h>

#include "mlk_check.h"
#include "quantile.h"

int main(void)
{
    double odd[] = {5, 1, 4, 2, 3};
    CHECK(mlk_median(odd, 5) == 3);
    CHECK(odd[0] == 1 && odd[4] == 5); /* sorted in place */

    double even[] = {130, 100.5, 120, 110};
    CHECK(mlk_median(even, 4) == 115); /* halfway between the middle two */
    double three[] = {100.5, 130, 120};
    CHECK(fabs(mlk_quantile(three, 3, 0.9) - (120 + (130 - 120) * 0.8)) < 1e-12); /* numpy: 128.0 */
    double ends[] = {3, 1, 2};
    CHECK(mlk_quantile(ends, 3, 0) == 1 && mlk_quantile(ends, 3, 1) == 3);

    double one[] = {42};
    CHECK(mlk_median(one, 1) == 42 && mlk_quantile(one, 1, 0.9) == 42);
    CHECK(isnan(mlk_median(NULL, 0)) && isnan(mlk_quantile(one, -1, 0.5)));

    double ties[] = {7, 7, 7, 7};
    CHECK(mlk_median(ties, 4) == 7);
    /* No overflow at the top of the range: the midpoint of two huge values stays finite. */
    double big[] = {1.5e308, 1.7e308};
    CHECK(isfinite(mlk_median(big, 2)) && fabs(mlk_median(big, 2) - 1.6e308) <= 1e-15 * 1.6e308);
    double neg[] = {-2, 6};
    CHECK(mlk_median(neg, 2) == 2);
    return check_summary();
}
