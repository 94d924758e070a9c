/* names.c: the name tables of names.h expanded into arrays, and their lookups.
 * It must never keep a second copy of a name: every list here comes from names.h's X-macros. */
#include <string.h>

#include "names.h"

int mlk_name_index(const char *const *table, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(table[i], name))
            return i;
    return -1;
}

#define MLK_X_NAME2(e, n) n,
static const char *const step_names[] = {MLK_STEP_LIST(MLK_X_NAME2)};
static const char *const phase_names[] = {MLK_PHASE_LIST(MLK_X_NAME2)};
static const char *const tool_names[] = {MLK_TOOL_LIST(MLK_X_NAME2)};
#undef MLK_X_NAME2
#define MLK_X_ALLOC(e, n, pkg, lib, marker, release) n,
static const char *const alloc_names[] = {MLK_ALLOC_LIST(MLK_X_ALLOC)};
#undef MLK_X_ALLOC
#define MLK_X_METRIC(e, n, label, unit) n,
static const char *const metric_names[] = {MLK_METRIC_LIST(MLK_X_METRIC)};
#undef MLK_X_METRIC
#define MLK_X_METRIC(e, n, label, unit) label,
static const char *const metric_labels[] = {MLK_METRIC_LIST(MLK_X_METRIC)};
#undef MLK_X_METRIC
#define MLK_X_METRIC(e, n, label, unit) unit,
static const char *const metric_units[] = {MLK_METRIC_LIST(MLK_X_METRIC)};
#undef MLK_X_METRIC

const char *mlk_step_name(mlk_step s) { return ((int)s >= 0 && s < MLK_STEP_COUNT) ? step_names[s] : NULL; }
int mlk_step_from_name(const char *name) { return mlk_name_index(step_names, MLK_STEP_COUNT, name); }

#define MLK_X_JOIN(e, n) ", " n
static const char step_list[] = MLK_STEP_LIST(MLK_X_JOIN);
#undef MLK_X_JOIN
const char *mlk_step_names(void) { return step_list + 2; }

const char *mlk_any_step_name(int step)
{
    if (step == MLK_STEP_TRIM)
        return "malloc_trim";
    if (step == MLK_STEP_ITERATION)
        return "iteration";
    const char *n = mlk_step_name((mlk_step)step);
    return n ? n : "?";
}

int mlk_any_step_from_name(const char *name)
{
    if (name && !strcmp(name, "malloc_trim"))
        return MLK_STEP_TRIM;
    if (name && !strcmp(name, "iteration"))
        return MLK_STEP_ITERATION;
    return mlk_step_from_name(name);
}

const char *mlk_phase_name(int phase) { return phase >= 0 && phase < MLK_PHASE_COUNT ? phase_names[phase] : "?"; }
int mlk_phase_from_name(const char *name) { return mlk_name_index(phase_names, MLK_PHASE_COUNT, name); }

const char *mlk_tool_name(int tool) { return tool >= 0 && tool < MLK_TOOL_COUNT ? tool_names[tool] : NULL; }
int mlk_tool_from_name(const char *name)
{
    return name ? mlk_name_index(tool_names, MLK_TOOL_COUNT, name) : MLK_TOOL_NONE;
}

const char *mlk_alloc_name(int kind) { return kind >= 0 && kind < MLK_ALLOC_COUNT ? alloc_names[kind] : NULL; }
int mlk_alloc_from_name(const char *name) { return mlk_name_index(alloc_names, MLK_ALLOC_COUNT, name); }
/* ", glibc, jemalloc, ..." spelled by the preprocessor from the table; callers get it without the first ", ". */
#define MLK_X_JOIN(e, n, pkg, lib, marker, release) ", " n
static const char alloc_list[] = MLK_ALLOC_LIST(MLK_X_JOIN);
#undef MLK_X_JOIN
const char *mlk_alloc_names(void) { return alloc_list + 2; }

#define MLK_X_S(e, n, label, unit) n,
static const char *const series_names[] = {MLK_SERIES_LIST(MLK_X_S)};
#undef MLK_X_S
#define MLK_X_S(e, n, label, unit) label,
static const char *const series_labels[] = {MLK_SERIES_LIST(MLK_X_S)};
#undef MLK_X_S
#define MLK_X_S(e, n, label, unit) unit,
static const char *const series_units[] = {MLK_SERIES_LIST(MLK_X_S)};
#undef MLK_X_S

const char *mlk_series_name(int s) { return s >= 0 && s < MLK_SERIES_COUNT ? series_names[s] : NULL; }
const char *mlk_series_label(int s) { return s >= 0 && s < MLK_SERIES_COUNT ? series_labels[s] : NULL; }
const char *mlk_series_unit(int s) { return s >= 0 && s < MLK_SERIES_COUNT ? series_units[s] : NULL; }
int mlk_series_from_name(const char *name) { return mlk_name_index(series_names, MLK_SERIES_COUNT, name); }
#define MLK_X_JOIN(e, n, label, unit) ", " n
static const char series_list[] = MLK_SERIES_LIST(MLK_X_JOIN);
#undef MLK_X_JOIN
const char *mlk_series_names(void) { return series_list + 2; }

const char *mlk_metric_name(int m) { return m >= 0 && m < MLK_M_COUNT ? metric_names[m] : "?"; }
int mlk_metric_from_name(const char *name) { return mlk_name_index(metric_names, MLK_M_COUNT, name); }
#define MLK_X_JOIN(e, n, label, unit) ", " n
static const char metric_list[] = MLK_METRIC_LIST(MLK_X_JOIN);
#undef MLK_X_JOIN
const char *mlk_metric_names(void) { return metric_list + 2; }
const char *mlk_metric_unit(int m) { return m >= 0 && m < MLK_M_COUNT ? metric_units[m] : "?"; }

const char *mlk_metric_label(const char *name)
{
    int m = mlk_metric_from_name(name);
    return m >= 0 ? metric_labels[m] : name ? name : "?";
}
