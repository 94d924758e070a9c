#!/usr/bin/env python3
"""torture.py: memleak-run's torture suite (issue 14), in the spirit of SQLite's crash and I/O-error tests, over real
runs of the harness: SIGKILL of memleak-run at random moments of run, report and merge, then --resume; SIGKILL and
SIGSTOP of the worker; writes failing under RLIMIT_FSIZE at every size in turn; the parent's allocations failing one
at a time (tests/torture/failmalloc.c); several --resumes of one run at once, and resumes from another folder or after
the weights changed (issue 25). After each: the db passes integrity_check, every cell is there once with a
final status, the samples of cells finished before the kill are byte-identical afterwards, and every cell holds the
(iteration, step) samples of a clean run. It must never pass without trying what it reports, and never leave files.

usage: torture.py [--short | --long] [--seed N] [--phases kill,worker,io,alloc,resume]   (MLK_BIN_DIR, MLK_BUILD_DIR as ctest
sets them). SIGTERM or SIGINT stops it with the figures of what it tried so far (a nightly cut short still reports).
"""
import argparse
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

SCENARIO = """name: torture
engine: ref
model: {generate: mlp, mlp_hidden: 16}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
iterations: %d
warmup: 2
stall_s: %s
matrix:
  threads: [1, 2]
"""


class Torture:
    def __init__(self, args):
        self.bin = os.path.abspath(os.environ.get("MLK_BIN_DIR", "build/bin"))
        self.lib = os.path.join(os.environ.get("MLK_BUILD_DIR", os.path.dirname(self.bin)), "lib")
        self.run_exe = os.path.join(self.bin, "memleak-run")
        self.rng = random.Random(args.seed)
        self.work = tempfile.mkdtemp(prefix="mlk-torture.")
        self.env = dict(os.environ, XDG_CACHE_HOME=os.path.join(self.work, "cache"))
        self.env.pop("LD_PRELOAD", None)
        if "MLK_SOURCE_DIR" in os.environ:  # report's gnuplot scripts, when the binaries are not installed
            self.env.setdefault("MLK_PLOTS_DIR", os.path.join(os.environ["MLK_SOURCE_DIR"], "plots"))
        self.scn = self.write("t.yaml", SCENARIO % (20, "300"))
        self.failures = []
        self.counts = {"run kills": 0, "report kills": 0, "merge kills": 0, "worker kills": 0, "worker stops": 0,
                       "I/O failures": 0, "allocation failures": 0, "concurrent resumes": 0,
                       "cross-folder resumes": 0}
        self.n = 0
        self.exits = {"I/O failures": {}, "allocation failures": {}}
        self.total_allocs = 0

    def write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def fail(self, what):
        self.failures.append(what)
        print("FAIL: " + what, flush=True)

    def memleak(self, args, env=None, preexec=None, timeout=120):
        return subprocess.run([self.run_exe] + args, env=env or self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, preexec_fn=preexec, timeout=timeout)

    def fresh_db(self, tag):
        self.n += 1
        return os.path.join(self.work, "%s-%d.db" % (tag, self.n))

    # ---- what a db must hold ----

    @staticmethod
    def connect(db):
        return sqlite3.connect(db, timeout=10)

    def integrity(self, db, what):
        if not os.path.exists(db):
            return True
        try:
            c = self.connect(db)
            ok = c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            c.close()
        except sqlite3.DatabaseError as e:
            ok = False
            what += " (%s)" % e
        if not ok:
            self.fail("integrity_check: " + what)
        return ok

    @staticmethod
    def finished_cells(db):
        """Cells with a final status, and their samples' rows (all columns, in seq order)."""
        out = {}
        if not os.path.exists(db):
            return out
        c = Torture.connect(db)
        try:
            for cid, idx, status in c.execute("SELECT id, idx, status FROM cells"):
                if status not in ("pending", "running"):
                    out[idx] = c.execute("SELECT * FROM samples WHERE cell_id = ? ORDER BY seq", (cid,)).fetchall()
        except sqlite3.DatabaseError:
            pass
        c.close()
        return out

    def sets(self, db):
        c = self.connect(db)
        res = {}
        for cid, idx, status, shim in c.execute("SELECT id, idx, status, heap_shim FROM cells"):
            rows = c.execute("SELECT iteration, step FROM samples WHERE cell_id = ?", (cid,)).fetchall()
            res[idx] = (status, sorted((r[0] if r[0] is not None else -1, r[1]) for r in rows), shim)
        c.close()
        return res

    def check_complete(self, db, what, before=None, allow_error=False):
        """After a resume: one run done, every cell once with a final status and a clean run's samples."""
        if not self.integrity(db, what):
            return
        c = self.connect(db)
        runs = c.execute("SELECT count(*), min(status) FROM runs").fetchone()
        idxs = [r[0] for r in c.execute("SELECT idx FROM cells ORDER BY idx")]
        c.close()
        if runs != (1, "done"):
            self.fail("%s: runs %s, expected one run done" % (what, runs))
        if idxs != [0, 1]:
            self.fail("%s: cells %s, expected 0 and 1 once each" % (what, idxs))
        for idx, (status, s, shim) in self.sets(db).items():
            if status == "error" and allow_error:
                continue
            if status in ("pending", "running"):
                self.fail("%s: cell %d left %s" % (what, idx, status))
            elif s != self.ref[idx][1]:
                self.fail("%s: cell %d holds %d samples, a clean run %d" % (what, idx, len(s), len(self.ref[idx][1])))
            elif shim != self.ref[idx][2]:
                # a verdict judged without the heap shim the clean run had, and nothing said: a silent downgrade
                self.fail("%s: cell %d %s with heap_shim %s, a clean run %s" % (what, idx, status, shim,
                                                                               self.ref[idx][2]))
        after = self.finished_cells(db)
        for idx, rows in (before or {}).items():
            if after.get(idx) != rows:
                self.fail("%s: cell %d, finished before the kill, changed after the resume" % (what, idx))

    def resume(self, db, what, env=None):
        run_id = None
        if os.path.exists(db):
            try:
                c = self.connect(db)
                run_id = c.execute("SELECT max(id) FROM runs").fetchone()[0]
                c.close()
            except sqlite3.DatabaseError:
                pass
        args = ["--db", db, "--quiet"] + (["--resume", str(run_id)] if run_id else [self.scn])
        r = self.memleak(args, env=env)
        if r.returncode != 0:
            cells = ""
            try:
                c = self.connect(db)
                cells = "; ".join("cell %d %s: %s" % row for row in
                                  c.execute("SELECT idx, status, coalesce(error, detail) FROM cells ORDER BY idx"))
                c.close()
            except sqlite3.DatabaseError:
                pass
            self.fail("%s: the resume exited %d: %s [%s]" % (what, r.returncode, r.stderr.strip()[-300:], cells))
        return r

    # ---- the trials ----

    def clean(self):
        db = os.path.join(self.work, "ref.db")
        t0 = time.monotonic()
        r = self.memleak(["--db", db, "--quiet", self.scn])
        self.clean_s = time.monotonic() - t0
        if r.returncode != 0:
            self.fail("the clean run exited %d: %s" % (r.returncode, r.stderr))
            return False
        self.ref_db = db
        self.ref = self.sets(db)
        # a second clean run: its time, now that the model is cached
        t0 = time.monotonic()
        self.memleak(["--db", os.path.join(self.work, "ref2.db"), "--quiet", self.scn])
        self.clean_s = time.monotonic() - t0
        self.db_bytes = sum(os.path.getsize(os.path.join(self.work, f)) for f in os.listdir(self.work)
                            if f.startswith("ref2.db"))
        return True

    def kill_run(self):
        db = self.fresh_db("kill")
        p = subprocess.Popen([self.run_exe, "--db", db, "--quiet", self.scn], env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(self.rng.uniform(0, self.clean_s * 1.1))
        p.kill()
        p.wait()
        self.counts["run kills"] += 1
        what = "kill %d" % self.n
        if not self.integrity(db, what + ", right after the kill"):
            return
        before = self.finished_cells(db)
        self.resume(db, what)
        self.check_complete(db, what, before)

    def kill_report(self):
        out = os.path.join(self.work, "rep-%d" % self.n)
        p = subprocess.Popen([self.run_exe, "report", "--db", self.ref_db, "--out", out], env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(self.rng.uniform(0, 0.3))
        p.kill()
        p.wait()
        self.counts["report kills"] += 1
        self.integrity(self.ref_db, "report kill %d" % self.n)
        r = self.memleak(["report", "--db", self.ref_db, "--out", out])
        if r.returncode != 0 or not os.path.exists(os.path.join(out, "index.html")):
            self.fail("report after a killed report: exit %d %s" % (r.returncode, r.stderr.strip()[-200:]))
        shutil.rmtree(out, ignore_errors=True)

    def kill_merge(self):
        out = self.fresh_db("merge")
        p = subprocess.Popen([self.run_exe, "merge", "--quiet", out, self.ref_db], env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(self.rng.uniform(0, 0.15))
        p.kill()
        p.wait()
        self.counts["merge kills"] += 1
        what = "merge kill %d" % self.n
        if not self.integrity(out, what):
            return
        r = self.memleak(["merge", "--quiet", out, self.ref_db])
        if r.returncode != 0:
            self.fail("%s: merging again exited %d: %s" % (what, r.returncode, r.stderr.strip()[-200:]))
            return
        c, ref = self.connect(out), self.connect(self.ref_db)
        got = [c.execute("SELECT count(*) FROM " + t).fetchone()[0] for t in ("runs", "cells", "samples")]
        want = [ref.execute("SELECT count(*) FROM " + t).fetchone()[0] for t in ("runs", "cells", "samples")]
        c.close()
        ref.close()
        if got != want:
            self.fail("%s: after merging again runs/cells/samples %s, the input holds %s" % (what, got, want))

    def attack_worker(self):
        # cells that measure for a second each: the attack lands mid-cell, never on a worker already exiting; stall_s 3:
        # a stopped worker is hung after 3 s, and a loaded machine (load 6 on 2 cores) once kept a healthy one silent 1 s
        scn = self.write("w.yaml", (SCENARIO % (1000, "3")).replace("iterations: 1000\n", "duration: 1s\n"))
        db = self.fresh_db("worker")
        p = subprocess.Popen([self.run_exe, "--db", db, "--quiet", scn], env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sig = self.rng.choice([signal.SIGKILL, signal.SIGSTOP])
        target = None
        deadline = time.monotonic() + 20
        while target is None and time.monotonic() < deadline and p.poll() is None:
            kids = subprocess.run(["pgrep", "-P", str(p.pid), "-f", "--", "--worker"], stdout=subprocess.PIPE,
                                  text=True).stdout.split()
            if kids:
                time.sleep(self.rng.uniform(0, 0.2))
                try:
                    os.kill(int(kids[0]), sig)
                    target = kids[0]
                except ProcessLookupError:
                    pass
            else:
                time.sleep(0.01)
        code = p.wait(timeout=120)
        self.counts["worker kills" if sig == signal.SIGKILL else "worker stops"] += 1
        what = "worker %s %d" % (signal.Signals(sig).name, self.n)
        if target is None:
            return  # the cells ended before a worker could be caught: nothing was tried
        self.integrity(db, what)
        c = self.connect(db)
        statuses = [r[0] for r in c.execute("SELECT status FROM cells ORDER BY idx")]
        run = c.execute("SELECT status FROM runs").fetchone()[0]
        c.close()
        hit = [s for s in statuses if s != "pass"]
        want = ("crashed", "oom") if sig == signal.SIGKILL else ("hung",)
        if code != 1 or run != "done" or len(statuses) != 2 or len(hit) != 1 or hit[0] not in want:
            self.fail("%s: exit %d, run %s, cells %s (want one of %s, the other pass)" % (what, code, run, statuses,
                                                                                          want))

    def io_failure(self, limit):
        db = self.fresh_db("fsize")

        def limited():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        r = self.memleak(["--db", db, "--quiet", self.scn], preexec=limited)
        self.counts["I/O failures"] += 1
        self.exits["I/O failures"][r.returncode] = self.exits["I/O failures"].get(r.returncode, 0) + 1
        what = "RLIMIT_FSIZE %d" % limit
        if r.returncode < 0 or r.returncode not in (0, 3):
            self.fail("%s: exit %d (want 3, or 0 when it fit): %s" % (what, r.returncode, r.stderr.strip()[-200:]))
        if r.returncode == 3 and not r.stderr.strip():
            self.fail("%s: exit 3 without a message" % what)
        if not self.integrity(db, what):
            return
        before = self.finished_cells(db)
        self.resume(db, what)
        self.check_complete(db, what, before)

    def alloc_failure(self, n, once):
        db = self.fresh_db("oom")
        env = dict(self.env, LD_PRELOAD=self.failmalloc, MLK_FAILMALLOC_AT=str(n),
                   MLK_FAILMALLOC_ONCE="1" if once else "0")
        r = self.memleak(["--db", db, "--quiet", self.scn], env=env)
        self.counts["allocation failures"] += 1
        ex = self.exits["allocation failures"]
        ex[r.returncode] = ex.get(r.returncode, 0) + 1
        what = "allocation %d failing%s" % (n, " once" if once else "")
        if r.returncode < 0 or r.returncode > 3:
            self.fail("%s: exit %d (a signal or worse): %s" % (what, r.returncode, r.stderr.strip()[-300:]))
        elif r.returncode in (2, 3) and not r.stderr.strip():
            self.fail("%s: exit %d without a message" % (what, r.returncode))
        if not self.integrity(db, what):
            return
        before = self.finished_cells(db)
        self.resume(db, what)
        self.check_complete(db, what, before, allow_error=True)

    # ---- one live process per run, and resumes from elsewhere (issue 25) ----

    def interrupted_run(self, db, scn, cwd=None):
        """A run of scn killed at a random moment; True when it left a run to resume."""
        p = subprocess.Popen([self.run_exe, "--db", db, "--quiet", scn], env=self.env, cwd=cwd,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(self.rng.uniform(self.clean_s * 0.3, self.clean_s * 0.95))
        p.kill()
        p.wait()
        if not os.path.exists(db) or not self.integrity(db, "killed run %d" % self.n):
            return False
        c = self.connect(db)
        try:  # killed before its run was stored: nothing to resume, nothing tried
            return c.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
        except sqlite3.DatabaseError:
            return False
        finally:
            c.close()

    def concurrent_resumes(self):
        """2 to 4 --resumes of one interrupted run, started within 0.2 s of each other, one of them perhaps killed:
        each exits 0 (ran, or found nothing left) or 2 naming the owner; after a last resume the run holds a clean
        run's samples and the cells finished before are untouched."""
        db = self.fresh_db("conc")
        what = "concurrent resumes %d" % self.n
        if not self.interrupted_run(db, self.scn):
            return
        before = self.finished_cells(db)
        procs = []
        for _ in range(self.rng.randint(2, 4)):
            procs.append(subprocess.Popen([self.run_exe, "--db", db, "--quiet", "--resume", "1"], env=self.env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
            time.sleep(self.rng.uniform(0, 0.2))
        victim = self.rng.choice(procs + [None] * len(procs))
        if victim is not None:
            time.sleep(self.rng.uniform(0, self.clean_s))
            victim.kill()
        owners = 0
        for p in procs:
            _, err = p.communicate(timeout=120)
            if p is victim and p.returncode == -signal.SIGKILL:
                continue
            if p.returncode == 0:
                owners += 1
            elif p.returncode != 2 or "is being run by memleak-run pid" not in err:
                self.fail("%s: a resume exited %d: %s" % (what, p.returncode, err.strip()[-300:]))
        self.counts["concurrent resumes"] += 1
        if not self.integrity(db, what):
            return
        c = self.connect(db)
        left = c.execute("SELECT count(*) FROM cells WHERE status IN ('pending', 'running')").fetchone()[0]
        c.close()
        if left or victim is not None:
            self.resume(db, what + ", the last resume")
        self.check_complete(db, what, before)

    def cross_folder(self):
        """A run of a scenario beside its model, started from that folder by relative paths and killed; resumed
        from a folder holding another model of the same name (it must measure its own), or after the weights
        changed (exit 2 and nothing touched, then, the weights back, resumed)."""
        what = "cross-folder resume %d" % self.n
        home, elsewhere = os.path.join(self.work, "home"), os.path.join(self.work, "elsewhere")
        if not os.path.exists(home):
            for d, seed in ((home, "1"), (elsewhere, "9")):
                os.makedirs(d)
                subprocess.run([os.path.join(self.bin, "refengine"), "gen", "mlp", "--mlp-hidden", "16",
                                "--external-data", "--seed", seed, "--out", os.path.join(d, "m.onnx")],
                               stdout=subprocess.DEVNULL, check=True)
                with open(os.path.join(d, "s.yaml"), "w") as f:
                    f.write(SCENARIO.replace("{generate: mlp, mlp_hidden: 16}", "m.onnx") % (20, "300"))
            ref = os.path.join(self.work, "home-ref.db")
            r = self.memleak(["--db", ref, "--quiet", os.path.join(home, "s.yaml")])
            if r.returncode:
                self.fail("%s: the clean run exited %d: %s" % (what, r.returncode, r.stderr.strip()[-200:]))
            c = self.connect(ref)
            self.home_hash = c.execute("SELECT DISTINCT model_hash FROM cells").fetchall()
            c.close()
        db = self.fresh_db("cross")
        if not self.interrupted_run(db, "s.yaml", cwd=home):
            return
        self.counts["cross-folder resumes"] += 1
        before = self.finished_cells(db)
        data = os.path.join(home, "m.onnx.data")
        if self.rng.random() < 0.3:  # new weights: refused, nothing touched
            shutil.copy(data, data + ".orig")
            with open(data, "r+b") as f:
                f.seek(self.rng.randrange(os.path.getsize(data)))
                b = f.read(1)
                f.seek(-1, os.SEEK_CUR)
                f.write(bytes([b[0] ^ 0x5a]))
            r = subprocess.run([self.run_exe, "--db", db, "--quiet", "--resume", "1"], env=self.env, cwd=elsewhere,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
            os.replace(data + ".orig", data)
            if r.returncode != 2 or "the model is not the one the run measured" not in r.stderr:
                self.fail("%s: resumed after the weights changed: exit %d %s" % (what, r.returncode,
                                                                                r.stderr.strip()[-200:]))
            if self.finished_cells(db) != before:
                self.fail("%s: a refused resume changed finished cells" % what)
        r = subprocess.run([self.run_exe, "--db", db, "--quiet", "--resume", "1"], env=self.env, cwd=elsewhere,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        if r.returncode != 0:
            self.fail("%s: exit %d: %s" % (what, r.returncode, r.stderr.strip()[-300:]))
            return
        c = self.connect(db)
        models = c.execute("SELECT DISTINCT model FROM cells").fetchall()
        hashes = c.execute("SELECT DISTINCT model_hash FROM cells").fetchall()
        c.close()
        if models != [(os.path.join(home, "m.onnx"),)] or hashes != self.home_hash:
            self.fail("%s: measured %s %s, the run's model is %s %s" % (what, models, hashes,
                                                                        os.path.join(home, "m.onnx"), self.home_hash))
        if self.finished_cells(db) and before:
            after = self.finished_cells(db)
            for idx, rows in before.items():
                if after.get(idx) != rows:
                    self.fail("%s: cell %d, finished before the kill, changed after the resume" % (what, idx))

    def count_allocs(self):
        self.failmalloc = os.path.join(self.lib, "libmlk_failmalloc.so")
        if not os.path.exists(self.failmalloc):
            return 0
        path = os.path.join(self.work, "count")
        env = dict(self.env, LD_PRELOAD=self.failmalloc, MLK_FAILMALLOC_COUNT=path)
        self.memleak(["--db", self.fresh_db("count"), "--quiet", self.scn], env=env)
        try:
            return int(open(path).read())
        except (OSError, ValueError):
            return 0


class Stop(Exception):
    pass


def on_signal(signum, frame):
    raise Stop(signal.Signals(signum).name)


def progress(t, phase, i, total, started):
    if i % 50 == 0 or i == total:
        print("torture: %s %d/%d, %d failures, %.0f s" % (phase, i, total, len(t.failures), time.monotonic() - started),
              flush=True)


def main():
    ap = argparse.ArgumentParser(description="memleak-run's torture suite")
    ap.add_argument("--short", action="store_true", help="the ctest form (the default)")
    ap.add_argument("--long", action="store_true", help="the nightly form (>= 1000 kills)")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("MLK_TORTURE_SEED", "14")))
    ap.add_argument("--phases", default="kill,worker,io,alloc,resume", help="which trials, comma-separated")
    args = ap.parse_args()
    phases = set(args.phases.split(","))
    t = Torture(args)
    started = time.monotonic()
    stopped = None
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    t.clean_s, t.db_bytes = 0.0, 0
    try:
        if not os.access(t.run_exe, os.X_OK):
            print("SKIP: %s not built" % t.run_exe)
            return 77
        if not t.clean():
            return 1
        if "kill" in phases:
            kills = 1000 if args.long else 60
            for i in range(kills):
                x = t.rng.random()
                (t.kill_run if x < 0.7 else t.kill_report if x < 0.85 else t.kill_merge)()
                progress(t, "kills", i + 1, kills, started)
        if "worker" in phases:
            attacks = 60 if args.long else 6
            for i in range(attacks):
                t.attack_worker()
                progress(t, "worker attacks", i + 1, attacks, started)
        if "io" in phases:
            steps = 60 if args.long else 10
            for i in range(steps):
                t.io_failure(max(1, int(t.db_bytes * (i + 0.5) / steps)))
                progress(t, "write limits", i + 1, steps, started)
        if "resume" in phases:
            n = 100 if args.long else 4
            for i in range(n):
                t.concurrent_resumes()
                t.cross_folder()
                progress(t, "concurrent and cross-folder resumes", i + 1, n, started)
        if "alloc" in phases:
            total = t.total_allocs = t.count_allocs()
            if total:
                # long: every allocation in turn up to 5000 of them, else an even stride over all
                picks = [(n, True) for n in (range(1, total + 1, max(1, total // 5000)) if args.long else
                                             sorted(t.rng.sample(range(1, total + 1), min(30, total))))]
                picks += [(n, False) for n in sorted(t.rng.sample(range(1, total + 1),
                                                                  min(200 if args.long else 8, total)))]
                print("torture: the parent made %d allocations in a clean run; %d to fail" % (total, len(picks)),
                      flush=True)
                for i, (n, once) in enumerate(picks):
                    t.alloc_failure(n, once)
                    progress(t, "allocation failures", i + 1, len(picks), started)
            else:
                t.fail("the allocation-failure library (libmlk_failmalloc.so) is missing or counted nothing")
    except Stop as e:
        stopped = str(e)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        shutil.rmtree(t.work, ignore_errors=True)
    c = t.counts
    tried = ", ".join("%d %s" % (v, k) for k, v in c.items())
    print("torture (%s, seed %d, phases %s): %s tried in %.0f s; a clean run took %.2f s and %d db bytes%s" %
          ("long" if args.long else "short", args.seed, args.phases, tried, time.monotonic() - started, t.clean_s,
           t.db_bytes, "; stopped early by " + stopped if stopped else ""))
    for k, ex in t.exits.items():
        print("torture: %s by exit status: %s" % (k, ", ".join("%d: %d" % (code, n) for code, n in sorted(ex.items()))))
    print("torture: %d kills, %d worker kills/stops, %d I/O failures, %d allocation failures, %d concurrent and %d "
          "cross-folder resumes tried; %s" %
          (c["run kills"] + c["report kills"] + c["merge kills"], c["worker kills"] + c["worker stops"],
           c["I/O failures"], c["allocation failures"], c["concurrent resumes"], c["cross-folder resumes"],
           "0 lost" if not t.failures else "%d failures (see FAIL lines)" % len(t.failures)), flush=True)
    return 1 if t.failures or stopped else 0


if __name__ == "__main__":
    sys.exit(main())
