#!/usr/bin/env python3
"""bench_report.py: summarizes ci/bench.sh results (medians over repetitions) and checks the engine's targets.
It must never invent a figure: every number printed comes from results.jsonl or plan-*.json of this run."""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
runs = {}
for line in (out / "results.jsonl").read_text().splitlines():
    rec = json.loads(line)
    runs.setdefault(rec["tag"], []).append(rec["run"])


def med(tag, key):
    vals = [r[key] for r in runs.get(tag, []) if r.get(key) is not None]
    return statistics.median(vals) if vals else None


mib = 1024.0 * 1024.0
print("\n## Reference engine benchmarks (medians over %d repetitions)\n" % len(next(iter(runs.values()))))
print("| model | weights MiB | compile ms | infer ms, 1 thread | infer ms, 2 threads | speedup | VmHWM MiB mmap on | VmHWM MiB mmap off |")
print("|---|---|---|---|---|---|---|---|")
models = ["mlp", "mobilenetv2", "resnet18", "resnet50", "transformer"]
for m in models:
    t1, t2 = med(m + "/t1", "infer_median_ms"), med(m + "/t2", "infer_median_ms")
    hwm = lambda tag: max(med(tag, k) for k in ("hwm_read_kib", "hwm_compile_kib", "hwm_infer_kib")) / 1024.0
    w = runs[m + "/t1"][0]["weight_bytes"] / mib
    print("| %s | %.1f | %.1f | %.2f | %.2f | %.2fx | %.1f | %.1f |" % (
        m, w, med(m + "/t1", "compile_ms"), t1, t2, t1 / t2, hwm(m + "/t1"), hwm(m + "/t1-mmap-off")))

print("\n| model | naive bytes | planned bytes | lower bound | planned/lower | planned/naive |")
print("|---|---|---|---|---|---|")
ok = True
for m in models:
    p = json.loads((out / ("plan-%s.json" % m)).read_text())
    print("| %s | %d | %d | %d | %.4f | %.4f |" % (m, p["naive_bytes"], p["planned_bytes"], p["lower_bound_bytes"],
                                                 p["planned_over_lower_bound"], p["planned_over_naive"]))
    if p["planned_over_lower_bound"] > 1.05:
        print("TARGET MISSED: %s planned/lower bound %.4f > 1.05" % (m, p["planned_over_lower_bound"]))
        ok = False
    if m in ("mobilenetv2", "resnet50") and p["planned_over_naive"] > 0.25:
        print("TARGET MISSED: %s planned/naive %.4f > 0.25" % (m, p["planned_over_naive"]))
        ok = False

on, off = "resnet50_ext/mmap-on", "resnet50_ext/mmap-off"
anon_on, anon_off = med(on, "rss_anon_after_compile_kib") * 1024, med(off, "rss_anon_after_compile_kib") * 1024
weights = runs[on][0]["weight_bytes"]
saved = (anon_off - anon_on) / weights
print("\nresnet50, external data: RssAnon after compile %.1f MiB (mmap on) vs %.1f MiB (mmap off); "
      "weights %.1f MiB; difference = %.1f%% of the weight bytes (target >= 90%%)"
      % (anon_on / mib, anon_off / mib, weights / mib, 100 * saved))
print("resnet50, external data: RssFile after compile %.1f MiB (mmap on) vs %.1f MiB (mmap off)"
      % (med(on, "rss_file_after_compile_kib") / 1024, med(off, "rss_file_after_compile_kib") / 1024))
if saved < 0.9:
    print("TARGET MISSED: mmap saving %.1f%% < 90%%" % (100 * saved))
    ok = False
for ct in (1, 2):
    tag = "resnet50_ext/compile-threads-%d" % ct
    print("resnet50, compile_threads=%d: compile %.0f ms, compile VmHWM %.1f MiB"
          % (ct, med(tag, "compile_ms"), med(tag, "hwm_compile_kib") / 1024))
print("\nall targets met" if ok else "\nsome targets missed")
sys.exit(0 if ok else 1)
