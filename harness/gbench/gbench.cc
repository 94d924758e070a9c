// gbench.cc: the C shim over Google Benchmark 1.7.1 (gbench.h): benchmarks as C functions, user counters, a run.
// It must never let an exception out of an extern "C" function: each one catches everything and returns a status.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "gbench.h"

namespace {

constexpr int kMaxArgs = 8;

int fail(mlk_error *err, int code, const char *what, const char *detail)
{
    if (err) {
        err->code = code;
        std::snprintf(err->msg, sizeof err->msg, "google benchmark: %s%s%s", what, detail ? ": " : "",
                      detail ? detail : "");
    }
    return code;
}

}  // namespace

// The registration record: owned by the lambda Google Benchmark keeps, so ClearRegisteredBenchmarks frees it.
struct mlk_gb_bench {
    benchmark::internal::Benchmark *b = nullptr;
    mlk_gb_fn fn = nullptr;
    void *ctx = nullptr;
    int n_args = -1; // -1: no args given yet; then the count every instance of the family has
};

// What a benchmark function sees: the library's State plus how many args it may read.
struct mlk_gb_state {
    benchmark::State *st;
    int n_args;
};

extern "C" mlk_gb_bench *mlk_gb_register(const char *name, mlk_gb_fn fn, void *ctx, mlk_error *err)
{
    if (!name || !*name || !fn) {
        fail(err, MLK_E_USAGE, "register", !fn ? "no benchmark function" : "a benchmark needs a name");
        return nullptr;
    }
    try {
        auto rec = std::make_shared<mlk_gb_bench>();
        rec->fn = fn;
        rec->ctx = ctx;
        mlk_gb_bench *raw = rec.get();
        raw->b = benchmark::RegisterBenchmark(name, [rec](benchmark::State &st) {
            mlk_gb_state s{&st, rec->n_args < 0 ? 0 : rec->n_args};
            rec->fn(&s, rec->ctx); // C code: it cannot throw
        });
        return raw;
    } catch (const std::bad_alloc &) {
        fail(err, MLK_E_NOMEM, "register", "out of memory");
    } catch (...) {
        fail(err, MLK_E_INTERNAL, "register", "the library threw");
    }
    return nullptr;
}

// Apply one builder call, turning exceptions into statuses.
template <class F> static int with_bench(mlk_gb_bench *b, F &&f)
{
    if (!b || !b->b)
        return MLK_E_USAGE;
    try {
        f(b->b);
        return MLK_OK;
    } catch (const std::bad_alloc &) {
        return MLK_E_NOMEM;
    } catch (...) {
        return MLK_E_INTERNAL;
    }
}

extern "C" int mlk_gb_set_unit(mlk_gb_bench *b, int unit)
{
    static const benchmark::TimeUnit units[] = {benchmark::kNanosecond, benchmark::kMicrosecond,
                                                benchmark::kMillisecond, benchmark::kSecond};
    if (unit < MLK_GB_NS || unit > MLK_GB_S)
        return MLK_E_USAGE;
    return with_bench(b, [&](benchmark::internal::Benchmark *x) { x->Unit(units[unit]); });
}

extern "C" int mlk_gb_use_real_time(mlk_gb_bench *b)
{
    return with_bench(b, [](benchmark::internal::Benchmark *x) { x->UseRealTime(); });
}

extern "C" int mlk_gb_measure_process_cpu_time(mlk_gb_bench *b)
{
    return with_bench(b, [](benchmark::internal::Benchmark *x) { x->MeasureProcessCPUTime(); });
}

// The library checks these with BM_CHECK, which aborts: check first.
extern "C" int mlk_gb_set_iterations(mlk_gb_bench *b, int64_t n)
{
    if (n < 1)
        return MLK_E_USAGE;
    return with_bench(b, [&](benchmark::internal::Benchmark *x) { x->Iterations(n); });
}

extern "C" int mlk_gb_set_repetitions(mlk_gb_bench *b, int n)
{
    if (n < 1)
        return MLK_E_USAGE;
    return with_bench(b, [&](benchmark::internal::Benchmark *x) { x->Repetitions(n); });
}

extern "C" int mlk_gb_set_min_time(mlk_gb_bench *b, double seconds)
{
    if (!(seconds > 0))
        return MLK_E_USAGE;
    return with_bench(b, [&](benchmark::internal::Benchmark *x) { x->MinTime(seconds); });
}

extern "C" int mlk_gb_add_args(mlk_gb_bench *b, const int64_t *args, int n)
{
    if (!b || n < 1 || n > kMaxArgs || !args || (b->n_args >= 0 && b->n_args != n))
        return MLK_E_USAGE;
    int rc = with_bench(b, [&](benchmark::internal::Benchmark *x) { x->Args(std::vector<int64_t>(args, args + n)); });
    if (!rc)
        b->n_args = n;
    return rc;
}

extern "C" bool mlk_gb_keep_running(mlk_gb_state *st) { return st && st->st->KeepRunning(); }

extern "C" int64_t mlk_gb_range(const mlk_gb_state *st, int i)
{
    return st && i >= 0 && i < st->n_args ? st->st->range(static_cast<std::size_t>(i)) : 0;
}

extern "C" int64_t mlk_gb_iterations(const mlk_gb_state *st) { return st ? st->st->iterations() : 0; }

extern "C" void mlk_gb_pause_timing(mlk_gb_state *st)
{
    if (st)
        st->st->PauseTiming();
}

extern "C" void mlk_gb_resume_timing(mlk_gb_state *st)
{
    if (st)
        st->st->ResumeTiming();
}

extern "C" void mlk_gb_skip_with_error(mlk_gb_state *st, const char *msg)
{
    if (!st)
        return;
    try {
        st->st->SkipWithError(msg ? msg : "failed"); // copies the message into the run's report
    } catch (...) {
        // Only the message could not be copied; the run is still marked failed by the library's flag.
    }
}

static benchmark::Counter::Flags counter_flags(unsigned flags)
{
    unsigned f = 0;
    if (flags & MLK_GB_COUNTER_RATE)
        f |= benchmark::Counter::kIsRate;
    if (flags & MLK_GB_COUNTER_AVG_THREADS)
        f |= benchmark::Counter::kAvgThreads;
    if (flags & MLK_GB_COUNTER_ITER_INVARIANT)
        f |= benchmark::Counter::kIsIterationInvariant;
    if (flags & MLK_GB_COUNTER_AVG_ITERS)
        f |= benchmark::Counter::kAvgIterations;
    if (flags & MLK_GB_COUNTER_INVERT)
        f |= benchmark::Counter::kInvert;
    return static_cast<benchmark::Counter::Flags>(f);
}

extern "C" int mlk_gb_set_counter(mlk_gb_state *st, const char *name, double value, unsigned flags)
{
    if (!st || !name || !*name)
        return MLK_E_USAGE;
    try {
        benchmark::Counter::OneK k =
            flags & MLK_GB_COUNTER_1024 ? benchmark::Counter::kIs1024 : benchmark::Counter::kIs1000;
        st->st->counters[name] = benchmark::Counter(value, counter_flags(flags), k);
        return MLK_OK;
    } catch (const std::bad_alloc &) {
        return MLK_E_NOMEM;
    } catch (...) {
        return MLK_E_INTERNAL;
    }
}

extern "C" int mlk_gb_set_label(mlk_gb_state *st, const char *label)
{
    if (!st || !label)
        return MLK_E_USAGE;
    try {
        st->st->SetLabel(label);
        return MLK_OK;
    } catch (const std::bad_alloc &) {
        return MLK_E_NOMEM;
    } catch (...) {
        return MLK_E_INTERNAL;
    }
}

extern "C" void mlk_gb_print_help(void)
{
    try {
        benchmark::PrintDefaultHelp();
    } catch (...) {
    }
}

// Values 1.7.1 answers by printing its help and exiting 0, which would let a CI step pass without a report.
static const char *refused_value(int argc, char **argv)
{
    static const struct {
        const char *flag, *values[5]; // values: nullptr-terminated; none listed: anything but "" is fine
    } checks[] = {{"--benchmark_format=", {"console", "json", "csv", nullptr}},
                  {"--benchmark_out_format=", {"console", "json", "csv", nullptr}},
                  {"--benchmark_time_unit=", {"ns", "us", "ms", "s", nullptr}},
                  {"--benchmark_color=", {nullptr}}};
    for (int i = 1; i < argc; i++)
        for (const auto &c : checks) {
            std::size_t n = std::strlen(c.flag);
            if (!argv[i] || std::strncmp(argv[i], c.flag, n))
                continue;
            const char *v = argv[i] + n;
            bool ok = !c.values[0] && *v;
            for (int k = 0; c.values[k]; k++)
                ok = ok || !std::strcmp(v, c.values[k]);
            if (!ok)
                return argv[i];
        }
    return nullptr;
}

extern "C" int mlk_gb_run(int *argc, char **argv, mlk_error *err)
{
    if (!argc || *argc < 1 || !argv)
        return fail(err, MLK_E_USAGE, "run", "no argv");
    if (const char *bad = refused_value(*argc, argv))
        return fail(err, MLK_E_USAGE, "unsupported value", bad);
    try {
        benchmark::Initialize(argc, argv);
        if (benchmark::ReportUnrecognizedArguments(*argc, argv)) {
            benchmark::Shutdown();
            return fail(err, MLK_E_USAGE, "unrecognized arguments", argv[1]);
        }
        std::size_t n = benchmark::RunSpecifiedBenchmarks();
        benchmark::Shutdown();
        return n > 1000000 ? 1000000 : static_cast<int>(n);
    } catch (const std::bad_alloc &) {
        return fail(err, MLK_E_NOMEM, "run", "out of memory");
    } catch (const std::exception &e) {
        return fail(err, MLK_E_INTERNAL, "run", e.what());
    } catch (...) {
        return fail(err, MLK_E_INTERNAL, "run", "the library threw");
    }
}

extern "C" void mlk_gb_clear(void)
{
    try {
        benchmark::ClearRegisteredBenchmarks();
    } catch (...) {
    }
}
