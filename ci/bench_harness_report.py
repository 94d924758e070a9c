#!/usr/bin/env python3
"""bench_harness_report.py: summarizes ci/bench_harness.sh: detection sweeps, probe cost, shim overhead.
It must never invent a figure: everything printed is read from this run's db and JSON files."""
import json
import sqlite3
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
db = sqlite3.connect(out / "sweep.db")
ok = True
print("\n## memleak-run benchmarks\n")
for scen, metric in (("heap-infer", "heap bytes, infer loop"), ("rss-infer", "RSS alone, infer loop"),
                     ("heap-compile", "heap bytes, compile every iteration"),
                     ("rss-compile", "RSS alone, compile every iteration"),
                     ("rss-infer-eager", "RSS alone, infer loop, allocators told to release freed memory at once")):
    rows = db.execute("""SELECT json_extract(axes, '$.fault'), count(*), sum(cells.status = 'leak'), group_concat(DISTINCT cells.status)
                         FROM cells JOIN runs ON runs.id = run_id WHERE scenario_name = ?
                         GROUP BY 1 ORDER BY CAST(substr(json_extract(axes, '$.fault'), 5) AS INTEGER)""", (scen,)).fetchall()
    floor = db.execute("SELECT scenario_text FROM runs WHERE scenario_name = ?", (scen,)).fetchone()[0]
    floor = [l for l in floor.splitlines() if "leak_bytes_per_iter" in l][0].split(":")[-1].strip(" }")
    print(f"### {metric} (floor {floor} B/iter, 100 measured iterations, 16 clean-matrix cells per row)\n")
    print("| planted | cells flagged leak | verdicts seen |")
    print("|---|---|---|")
    false_alarms, smallest = None, None
    for fault, n, leaks, seen in rows:
        print(f"| {fault} | {leaks}/{n} | {seen} |")
        if fault == "none":
            false_alarms = leaks
        elif leaks == n and smallest is None:
            smallest = fault[4:]
        elif leaks != n:
            smallest = None  # only a size from which every larger size is flagged too counts
    print(f"\nfalse alarms on the clean matrix: {false_alarms}/16; smallest leak flagged in every cell: "
          f"{smallest} B/iter")
    for alloc in ("glibc", "jemalloc", "tcmalloc", "mimalloc"):
        per = db.execute("""SELECT json_extract(axes, '$.fault'), count(*), sum(cells.status = 'leak')
                             FROM cells JOIN runs ON runs.id = run_id WHERE scenario_name = ? AND allocator = ?
                             AND json_extract(axes, '$.fault') != 'none'
                             GROUP BY 1 ORDER BY CAST(substr(json_extract(axes, '$.fault'), 5) AS INTEGER)""",
                         (scen, alloc)).fetchall()
        first = None
        for f, n, l in per:
            first = (first or f[4:]) if l == n else None
        print(f"  {alloc}: smallest flagged in all 4 cells (threads 1,2 x trim off/on): "
              f"{first + ' B/iter' if first else 'none of ' + ', '.join(f[4:] for f, _, _ in per)}")
    print()
    target = 64 if scen.startswith("heap") else 4096
    if false_alarms != 0 or smallest is None or int(smallest) > target:
        print(f"target missed: {metric} needs zero false alarms and a smallest leak <= {target} B/iter\n")
        if scen in ("heap-infer", "rss-infer-eager"):
            ok = False  # the targets are judged on the infer loop; the compile loop is reported for what it shows

probe, probe_shim = json.loads((out / "probe.json").read_text()), json.loads((out / "probe_shim.json").read_text())
print(f"probe: {probe['median_us_per_sample']:.2f} us per sample (median of 40 batches of 2000), "
      f"{probe_shim['median_us_per_sample']:.2f} us with the heap shim preloaded (target <= 20 us)")
if probe["median_us_per_sample"] > 20:
    print("TARGET MISSED: probe cost")
    ok = False

runs = [json.loads(l) for l in (out / "shim.jsonl").read_text().splitlines()]
print("\n| model | arena | infer ms no shim (best / median run) | with shim (best / median run) | overhead best / median |")
print("|---|---|---|---|---|")
for model in ("mlp", "mobilenetv2"):
    for arena in ("on", "off"):
        side = {s: [r["run"]["infer_median_ms"] for r in runs
                    if r["model"] == model and r["arena"] == arena and r["shim"] == s] for s in ("off", "on")}
        best = {s: min(v) for s, v in side.items()}
        med = {s: statistics.median(v) for s, v in side.items()}
        over_best = (best["on"] / best["off"] - 1) * 100
        over_med = (med["on"] / med["off"] - 1) * 100
        print(f"| {model} | {arena} | {best['off']:.4f} / {med['off']:.4f} | {best['on']:.4f} / {med['on']:.4f} "
              f"| {over_best:+.1f}% / {over_med:+.1f}% |")
        if over_best > 5:
            print(f"TARGET MISSED: shim overhead {over_best:.1f}% on {model} arena {arena}")
            ok = False
print("\nall targets met" if ok else "\nsome targets missed")
sys.exit(0 if ok else 1)
