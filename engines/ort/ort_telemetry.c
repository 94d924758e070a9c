/* ort_telemetry.c: ONNX Runtime's own telemetry, switched through the environment before the library is loaded.
 * It must never override a value the user set, nor accept telemetry=on where ORT would silently ignore it. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ort_internal.h"

/* ORT 1.29 and 1.30 on Linux have telemetry: events (SessionCreation, ModelLoadStart, SystemMetrics, ...) queue in
 * the heap, a few KiB per session, are flushed to $XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime/onnxruntime.db
 * and uploaded when the network allows. The heap queue looks like a leak for the first ~500 sessions, then saws up
 * and down. ORT reads ORT_DISABLE_TELEMETRY before anything is queued or written (DisableTelemetryEvents alone still
 * writes the db), so telemetry=off sets it before the library is loaded. ORT also turns telemetry off by itself on a
 * CI machine, named by these variables (read off the library; any value but empty, 0, false or no counts). */
const char *const ort_ci_vars[] = {"CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS",
                                   "JENKINS_URL", "CODEBUILD_BUILD_ID", "BUILDKITE", "TEAMCITY_VERSION",
                                   "APPVEYOR", "BITBUCKET_BUILD_NUMBER", "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI", NULL};
static int telemetry_env_set_here;

static const char *ci_var_set(const char **value)
{
    for (size_t i = 0; ort_ci_vars[i]; i++) {
        const char *v = getenv(ort_ci_vars[i]);
        if (v && *v && strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no")) {
            *value = v;
            return ort_ci_vars[i];
        }
    }
    return NULL;
}

/* telemetry=on is refused where ORT would ignore it, rather than measure something else than asked: a user's own
 * ORT_DISABLE_TELEMETRY, or a CI variable. check_options calls it too, so a scenario fails before anything runs. */
int ort_telemetry_check_on(engine_error *err)
{
    const char *v = getenv("ORT_DISABLE_TELEMETRY");
    if (v && !telemetry_env_set_here)
        return ort_fail(err, ORT_E_INVALID, "option telemetry: 'on', but ORT_DISABLE_TELEMETRY=%s is set in the "
                        "environment and ONNX Runtime would ignore the option; unset it", v);
    const char *ci_value = NULL;
    const char *ci = ci_var_set(&ci_value);
    if (ci)
        return ort_fail(err, ORT_E_INVALID, "option telemetry: 'on', but %s=%s is set and ONNX Runtime turns its "
                        "telemetry off on CI machines; unset it to measure ORT with telemetry", ci, ci_value);
    return 0;
}

int ort_telemetry_env(int on, engine_error *err)
{
    if (on) {
        int rc = ort_telemetry_check_on(err);
        if (rc)
            return rc;
        if (telemetry_env_set_here) {
            unsetenv("ORT_DISABLE_TELEMETRY");
            telemetry_env_set_here = 0;
        }
        return 0;
    }
    if (!getenv("ORT_DISABLE_TELEMETRY")) {
        if (setenv("ORT_DISABLE_TELEMETRY", "1", 1) != 0)
            return ort_fail(err, ORT_E_NOMEM, "load_engine: cannot set ORT_DISABLE_TELEMETRY");
        telemetry_env_set_here = 1;
    }
    return 0;
}
