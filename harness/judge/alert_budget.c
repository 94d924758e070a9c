/* alert_budget.c: a cell's figures against the scenario's absolute budgets (scenario.h budgets:), as findings
 * (alert.h). It must never call a figure that was not measured over budget. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alert.h"
#include "fmt.h"

int mlk_budget_findings(const mlk_scenario *s, const mlk_step_figures *f, const char *where, mlk_finding *out,
                        int max)
{
    if (!s || strcmp(f->step, "iteration"))
        return 0;
    int n = 0, at = 0;
    for (const mlk_budget *b; n < max && (b = mlk_scenario_budget(s, f->label, &at));) {
        const struct {
            double cap;
            int metric;
            double scale; /* the figure's unit in bytes */
        } caps[] = {{b->peak_bytes, MLK_M_PEAK, 1024},
                    {b->final_rss_bytes, MLK_M_FINAL_RSS, 1024},
                    {b->heap_bytes, MLK_M_FINAL_HEAP, 1},
                    {b->growth_bytes, MLK_M_GROWTH, 1}};
        for (size_t k = 0; k < sizeof caps / sizeof *caps && n < max; k++) {
            double v = f->v[caps[k].metric], cap = caps[k].cap / caps[k].scale;
            if (caps[k].cap < 0 || isnan(v) || v <= cap)
                continue;
            mlk_finding *x = &out[n++];
            mlk_finding_set(x, f->config_key, f->label, where, f->step, mlk_metric_name(caps[k].metric), 1, v, cap,
                            cap > 0 ? v / cap : INFINITY);
            char c[40];
            mlk_fmt_bytes(c, sizeof c, caps[k].cap, false);
            snprintf(x->note, sizeof x->note, "over its budget of %s%s (budgets: %s)", c,
                     caps[k].metric == MLK_M_GROWTH ? "/iter" : "", b->cells ? b->cells : "every cell");
            x->cell_id = f->cell_id;
        }
    }
    return n;
}
