-- schema.sql: memleak's results store (SQLite). Columns match the figures measured; NULL means not measured, never 0.
-- It must never be edited in place once released: a change bumps schema_version and adds a migration in harness/store.c.
CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER NOT NULL
);

-- One memleak-run invocation: enough to reproduce it from the db alone.
CREATE TABLE IF NOT EXISTS runs (
  id            INTEGER PRIMARY KEY,
  uuid          TEXT NOT NULL UNIQUE,     -- identity across dbs: shards of one batch share it (--run-key), merge keys on it
  scenario_name TEXT NOT NULL,
  scenario_path TEXT,
  scenario_text TEXT NOT NULL,
  commit_sha    TEXT,
  branch        TEXT,
  host          TEXT,
  cpu           TEXT,
  kernel        TEXT,
  glibc         TEXT,
  tool_version  TEXT,
  argv          TEXT,
  started_at    TEXT NOT NULL,
  finished_at   TEXT,
  status        TEXT NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'failed'))
);

-- One matrix cell of a run, run in its own worker process.
CREATE TABLE IF NOT EXISTS cells (
  id               INTEGER PRIMARY KEY,
  run_id           INTEGER NOT NULL REFERENCES runs(id),
  idx              INTEGER NOT NULL,
  engine           TEXT NOT NULL,
  model            TEXT NOT NULL,
  model_hash       TEXT,
  axes             TEXT NOT NULL,          -- JSON object: this cell's axis values
  config_key       TEXT NOT NULL,          -- stable across runs: engine, model hash, axis values
  allocator        TEXT NOT NULL,          -- as requested
  allocator_active TEXT,                   -- as detected in the worker (marker symbols)
  allocator_lib    TEXT,                   -- the library serving malloc (dladdr)
  heap_shim        INTEGER,                -- 1 when exact heap accounting was active
  status           TEXT NOT NULL CHECK (status IN ('pending', 'running', 'pass', 'leak', 'plateau', 'crashed',
                                                   'timeout', 'hung', 'oom', 'error', 'inconclusive')),
  signal           INTEGER,
  exit_code        INTEGER,
  metric           TEXT,                   -- the series judged: heap_live_bytes or rss_anon_bytes
  slope_per_iter   REAL,                   -- Theil-Sen, bytes per iteration, whole measured series
  late_slope_per_iter REAL,
  mk_p             REAL,                   -- Mann-Kendall one-sided p (increasing), late part
  growth_bytes     REAL,
  detail           TEXT,
  error            TEXT,
  started_at       TEXT,
  finished_at      TEXT,
  UNIQUE (run_id, idx)
);

-- One sample after each step (and after each iteration), streamed from the worker.
CREATE TABLE IF NOT EXISTS samples (
  cell_id         INTEGER NOT NULL REFERENCES cells(id),
  seq             INTEGER NOT NULL,        -- order within the cell
  phase           TEXT NOT NULL,           -- setup, warmup, measure, teardown
  iteration       INTEGER,                 -- NULL in setup and teardown
  step            TEXT NOT NULL,           -- a pipeline step, 'malloc_trim', or 'iteration' (end of iteration)
  wall_ns         INTEGER,
  cpu_ns          INTEGER,
  minflt          INTEGER,
  majflt          INTEGER,
  vm_rss_kib      INTEGER,
  vm_hwm_kib      INTEGER,                 -- the step's own peak (VmHWM reset before it)
  vm_size_kib     INTEGER,
  vm_peak_kib     INTEGER,
  rss_anon_kib    INTEGER,
  rss_file_kib    INTEGER,
  rss_shmem_kib   INTEGER,
  threads         INTEGER,
  heap_live_bytes INTEGER,
  heap_peak_bytes INTEGER,
  heap_allocs     INTEGER,
  heap_frees      INTEGER,
  fds             INTEGER,                 -- open file descriptors (schema 2)
  mapped_bytes    INTEGER,                 -- mapped through mmap/mremap, as the heap shim followed it (schema 2)
  mappings        INTEGER,                 -- live mappings made through mmap/mremap, same source (schema 2)
  alloc_bytes     INTEGER,                 -- heap: off: the allocator's own count of bytes in use (schema 2)
  alloc_held      INTEGER,                 -- what the allocator holds from the system, live and cached (schema 2)
  mapped_peak_bytes INTEGER,               -- the most mapped within the step (mmap/munmap as the shim saw them; schema 4)
  shim_bytes      INTEGER,                 -- the heap shim's own tables resident in the process, part of RssAnon: the
                                           -- anon series leaves them out (schema 6)
  PRIMARY KEY (cell_id, seq)
) WITHOUT ROWID;

-- The verdict of each series a cell is judged on (schema 2): every memory signal gets its own detector, quantum and
-- floor, and a leak in any series makes the cell a leak. Series (harness/core/names.h, MLK_SERIES_LIST):
--   heap      live heap bytes: the heap shim's exact count (malloc family and C++ new), else (heap: off) the
--             allocator's own count (samples.alloc_bytes: glibc, jemalloc, tcmalloc; none for mimalloc)
--   anon      anonymous resident memory malloc cannot explain: RssAnon minus what the allocator holds (samples.
--             alloc_held), else minus the live heap, else all of RssAnon; always minus the shim's own (shim_bytes)
--   mapped    mapped memory, VmSize: file mappings, untouched mmaps, thread stacks
--   fds       open file descriptors
--   threads   threads
--   mappings  live mmap'd regions, as the heap shim followed them
CREATE TABLE IF NOT EXISTS series_results (
  cell_id        INTEGER NOT NULL REFERENCES cells(id),
  series         TEXT NOT NULL,
  unit           TEXT NOT NULL,            -- bytes or count
  verdict        TEXT NOT NULL CHECK (verdict IN ('pass', 'leak', 'plateau')),
  slope_per_iter REAL,                     -- Theil-Sen over the measured iterations, unit per iteration
  late_slope_per_iter REAL,
  mk_p           REAL,
  growth         REAL,                     -- late median minus early median, unit
  floor_per_iter REAL NOT NULL,            -- the floor a leak must reach
  quantum        REAL NOT NULL,            -- the series' resolution (4096 for pages, 1 for bytes and counts)
  noise          REAL,
  n              INTEGER NOT NULL,         -- samples judged
  detail         TEXT,
  PRIMARY KEY (cell_id, series)
) WITHOUT ROWID;

-- Engine-specific figures after a step (arena stats and the like).
CREATE TABLE IF NOT EXISTS metrics (
  cell_id INTEGER NOT NULL REFERENCES cells(id),
  seq     INTEGER NOT NULL,
  name    TEXT NOT NULL,
  value   INTEGER NOT NULL,
  PRIMARY KEY (cell_id, seq, name)
) WITHOUT ROWID;

-- Per cell and step, over the measured iterations.
CREATE TABLE IF NOT EXISTS step_stats (
  cell_id              INTEGER NOT NULL REFERENCES cells(id),
  step                 TEXT NOT NULL,
  n                    INTEGER NOT NULL,
  peak_kib             INTEGER,            -- max of the step's own VmHWM
  rss_growth_per_iter  REAL,               -- Theil-Sen slope of VmRSS after the step, bytes per iteration
  heap_growth_per_iter REAL,               -- same for live heap bytes; NULL without the shim
  heap_delta_median    REAL,               -- median change of live heap bytes across the step
  rss_delta_median     REAL,               -- median change of VmRSS across the step, bytes
  wall_ms_median       REAL,
  wall_ms_p90          REAL,
  cpu_ms_median        REAL,
  final_rss_kib        INTEGER,            -- VmRSS after the step in the last measured iteration
  final_anon_kib       INTEGER,            -- RssAnon, same moment
  final_heap_bytes     INTEGER,            -- live heap bytes, same moment; NULL without the shim
  -- Memory requested within the step, touched or not (schema 4): a buffer sized but never touched moves neither
  -- VmRSS nor VmHWM, and the kernel's VmPeak cannot be reset per step, so the heap shim's own peaks are used.
  heap_peak_bytes      INTEGER,            -- the highest live heap between the step's probes; NULL without the shim
  mapped_peak_bytes    INTEGER,            -- the most mapped through mmap/mremap between them; NULL without the shim
  PRIMARY KEY (cell_id, step)
);

-- A run pinned as the baseline of a branch (memleak-run baseline pin RUN --branch B); the newest pin wins.
CREATE TABLE IF NOT EXISTS baselines (
  id        INTEGER PRIMARY KEY,
  run_uuid  TEXT NOT NULL,
  branch    TEXT NOT NULL,
  pinned_at TEXT NOT NULL
);

-- One memleak-run compare: a run against a baseline (a pinned run, or the rolling median of recent runs).
CREATE TABLE IF NOT EXISTS comparisons (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  baseline      TEXT NOT NULL,             -- 'run <uuid>' or 'rolling median of N runs on <branch>'
  created_at    TEXT NOT NULL
);

-- What a comparison flagged, per cell, step and metric.
CREATE TABLE IF NOT EXISTS findings (
  comparison_id INTEGER NOT NULL REFERENCES comparisons(id),
  cell_id       INTEGER NOT NULL REFERENCES cells(id),
  config_key    TEXT NOT NULL,
  step          TEXT NOT NULL,
  metric        TEXT NOT NULL,             -- peak_kib, final_rss_kib, final_anon_kib, final_heap_bytes, growth, wall_ms
  kind          TEXT NOT NULL CHECK (kind IN ('regression', 'improvement')),
  current       REAL NOT NULL,
  baseline      REAL NOT NULL,
  delta_rel     REAL,
  delta_abs     REAL,
  p_value       REAL,                      -- Mann-Whitney U, latency only
  detail        TEXT,
  PRIMARY KEY (comparison_id, cell_id, step, metric)
);

-- Persistent step changes in a config's history, each reported once, at its first bad run.
CREATE TABLE IF NOT EXISTS change_points (
  config_key  TEXT NOT NULL,
  step        TEXT NOT NULL,
  metric      TEXT NOT NULL,
  run_uuid    TEXT NOT NULL,               -- the first run of the new level
  commit_sha  TEXT,
  before      REAL NOT NULL,
  after       REAL NOT NULL,
  t_stat      REAL,
  detected_at TEXT NOT NULL,
  PRIMARY KEY (config_key, step, metric, run_uuid)
);

CREATE INDEX IF NOT EXISTS cells_by_config ON cells (config_key);
CREATE INDEX IF NOT EXISTS cells_by_run ON cells (run_id);

-- Tool cells (tool: memcheck | lsan): one leak record each, a valgrind loss record or a LeakSanitizer leak block.
-- Per kind, the sum of bytes is valgrind's text LEAK SUMMARY (XML mode drops it); total_bytes adds the blocks a
-- definitely lost record owns indirectly, as valgrind's XML reports it.
CREATE TABLE IF NOT EXISTS leaks (
  cell_id     INTEGER NOT NULL REFERENCES cells(id),
  seq         INTEGER NOT NULL,            -- order in the tool's report
  tool        TEXT NOT NULL CHECK (tool IN ('memcheck', 'lsan')),
  kind        TEXT NOT NULL CHECK (kind IN ('definitely', 'indirectly', 'possibly', 'reachable')),
  bytes       INTEGER NOT NULL,            -- its own blocks
  total_bytes INTEGER NOT NULL,            -- with the blocks it owns indirectly (memcheck); = bytes for lsan
  blocks      INTEGER NOT NULL,            -- its own blocks
  in_engine   INTEGER NOT NULL,            -- 1: a frame lies outside the harness and the system libraries
  PRIMARY KEY (cell_id, seq)
) WITHOUT ROWID;

-- Tool cells (tool: massif): the heap_tree=peak snapshot.
CREATE TABLE IF NOT EXISTS heap_peaks (
  cell_id          INTEGER PRIMARY KEY REFERENCES cells(id),
  peak_bytes       INTEGER NOT NULL,       -- heap_bytes + heap_extra_bytes
  heap_bytes       INTEGER NOT NULL,       -- mem_heap_B: bytes the program asked for
  heap_extra_bytes INTEGER NOT NULL,       -- mem_heap_extra_B: allocator headers and rounding
  stacks_bytes     INTEGER,                -- mem_stacks_B (0 unless massif ran with --stacks=yes)
  snapshot         INTEGER NOT NULL,
  n_snapshots      INTEGER NOT NULL,
  time             INTEGER,                -- when the peak happened, in time_unit
  time_unit        TEXT,                   -- 'i' (instructions), 'ms' or 'B'
  below_threshold_bytes INTEGER            -- what massif lumped into sites below its 1% threshold
);

-- The peak snapshot's allocation sites (leaves of massif's peak tree), largest first.
CREATE TABLE IF NOT EXISTS heap_peak_sites (
  cell_id INTEGER NOT NULL REFERENCES cells(id),
  seq     INTEGER NOT NULL,                -- 0: the largest
  bytes   INTEGER NOT NULL,
  PRIMARY KEY (cell_id, seq)
) WITHOUT ROWID;

-- The stack of a leak record or a peak site, innermost frame first: for a leak, depth 0 is the allocation
-- function (malloc); for a peak site, its caller. NULL: not known (no debug information).
CREATE TABLE IF NOT EXISTS tool_frames (
  cell_id INTEGER NOT NULL REFERENCES cells(id),
  source  TEXT NOT NULL CHECK (source IN ('leak', 'peak_site')),
  seq     INTEGER NOT NULL,                -- leaks.seq or heap_peak_sites.seq
  depth   INTEGER NOT NULL,
  fn      TEXT,
  file    TEXT,
  line    INTEGER,
  obj     TEXT,
  PRIMARY KEY (cell_id, source, seq, depth)
) WITHOUT ROWID;

-- The input shapes each cell ran with (issue 22), as --dry-run prints them: "name: 1x3x{H=cycle:256,320}x640; ...",
-- read from the model's graph inputs and the scenario before the run ("1?" marks a dim nothing set, which ran as 1).
-- A model whose inputs come from .pb files, or that only its engine reads, has no row.
CREATE TABLE IF NOT EXISTS cell_inputs (
  cell_id INTEGER PRIMARY KEY REFERENCES cells(id),
  shapes  TEXT NOT NULL
);

-- Tool cells: what ran (issue 25). program: the tool's executable as exec'd (valgrind's own binary: Debian's
-- /usr/bin/valgrind is a sh wrapper that would add LD_LIBRARY_PATH and GLIBCXX_FORCE_NEW to the measured process;
-- the lsan worker); args: the tool's arguments before the worker's own, one a line; env: the entries of the worker's
-- environment a tool, the loader or the allocator reads (LD_*, VALGRIND_*, *SAN_OPTIONS, GLIBCXX_FORCE_NEW, MALLOC_*,
-- GLIBC_TUNABLES), one a line, and nothing else of it.
CREATE TABLE IF NOT EXISTS tool_exec (
  cell_id INTEGER PRIMARY KEY REFERENCES cells(id),
  program TEXT NOT NULL,
  args    TEXT NOT NULL,
  env     TEXT NOT NULL
);

-- Where heap and mappings grow, at normal speed (issue 9, heap_sites: sample | exact): per plain cell, how its
-- allocation sites were recorded. The shim records the stack of sampled (or all) allocations and of every mmap, and
-- the worker snapshots each site's live bytes at a few checkpoints of the measured iterations. mode 'maps': no stacks
-- (heap_sites: off, or heap: off), growing mappings found by diffing /proc/self/maps between two checkpoints.
CREATE TABLE IF NOT EXISTS site_reports (
  cell_id          INTEGER PRIMARY KEY REFERENCES cells(id),
  mode             TEXT NOT NULL CHECK (mode IN ('sample', 'exact', 'maps')),
  sample_bytes     INTEGER,                -- mean sampling interval in bytes (Poisson by bytes); NULL unless sample
  n_checkpoints    INTEGER NOT NULL,       -- snapshots taken, each after an iteration's sample
  first_iteration  INTEGER NOT NULL,       -- the iterations of the first and last checkpoints
  last_iteration   INTEGER NOT NULL,
  n_sites          INTEGER,                -- distinct stacks recorded over the whole cell; NULL for maps
  sampled_allocs   INTEGER,                -- stacks taken: sampled allocations, and every mapping
  dropped_sites    INTEGER,                -- stacks not recorded, the site table being full (their bytes go to site 0)
  dropped_blocks   INTEGER,                -- sampled blocks the live-block table had no room for (not attributed)
  dropped_mappings INTEGER,                -- mappings the mapping table had no room for (not counted)
  unwind_ns        REAL,                   -- mean cost of one stack capture in the shim
  symbolize_ms     REAL                    -- the worker's time to name the reported sites (before teardown)
);

-- iterations: auto (issue 23): the measured iterations a cell used and why it stopped: 'decided' (every series
-- decided at a decision point), 'max' (its bound), 'budget' (its wall-time budget). No row for a fixed count.
CREATE TABLE IF NOT EXISTS cell_stops (
  cell_id     INTEGER PRIMARY KEY REFERENCES cells(id),
  iterations  INTEGER NOT NULL,
  reason      TEXT NOT NULL CHECK (reason IN ('decided', 'max', 'budget')),
  points      INTEGER NOT NULL,            -- decision points judged
  undecided   TEXT                         -- the series still undecided when it stopped (comma-separated), or NULL
);

-- The window of exact stacks (issue 23): when the live heap grew under sampling, the worker ran a few more iterations
-- (neither probed nor judged) with every allocation's stack taken, and its heap sites' figures are that window's
-- exact counts. Its cost, per cell; no row when no window ran.
CREATE TABLE IF NOT EXISTS site_windows (
  cell_id     INTEGER PRIMARY KEY REFERENCES cells(id),
  iterations  INTEGER NOT NULL,            -- window iterations run
  wall_ms     REAL NOT NULL,               -- their wall time
  stacks      INTEGER                      -- stacks taken in it
);

-- The sites whose live bytes grew across the measured iterations (Theil-Sen slope over the checkpoints > 0 and
-- growing in both halves), fastest first. Still-reachable growth counts: a cache appended to is a growing site.
CREATE TABLE IF NOT EXISTS growth_sites (
  cell_id         INTEGER NOT NULL REFERENCES cells(id),
  seq             INTEGER NOT NULL,        -- 0: the fastest growing
  kind            TEXT NOT NULL CHECK (kind IN ('heap', 'mmap', 'maps')), -- heap: malloc family and operator new;
                                           -- mmap: mmap/mremap calls; maps: a path of /proc/self/maps (no stack)
  bytes_per_iter  REAL NOT NULL,           -- slope of the site's live bytes (an unbiased estimate when sampled)
  blocks_per_iter REAL,                    -- slope of its live blocks (mappings for mmap); NULL for maps
  growth_bytes    INTEGER NOT NULL,        -- live bytes at the last checkpoint minus the first
  live_bytes      INTEGER NOT NULL,        -- at the last checkpoint
  live_blocks     INTEGER,                 -- at the last checkpoint; NULL for maps
  path            TEXT,                    -- mmap, maps: the file mapped (the one with most bytes) or '[anon]'
  PRIMARY KEY (cell_id, seq)
) WITHOUT ROWID;

-- Their stacks, innermost first: depth 0 is the first frame outside the shim and the allocator (the caller of
-- malloc, operator new or mmap). NULL: not known (no symbol, no debug information).
CREATE TABLE IF NOT EXISTS growth_site_frames (
  cell_id INTEGER NOT NULL REFERENCES cells(id),
  seq     INTEGER NOT NULL,                -- growth_sites.seq
  depth   INTEGER NOT NULL,
  fn      TEXT,                            -- demangled when the C++ runtime is loaded
  file    TEXT,
  line    INTEGER,
  obj     TEXT,                            -- the object's path
  offset  INTEGER,                         -- the return address, relative to obj's load address
  PRIMARY KEY (cell_id, seq, depth)
) WITHOUT ROWID;

-- How a long cell's samples were kept (schema 3, issue 14), one row per cell that dropped any; a cell without a row
-- kept every sample. Every sample of the iterations before head_iters and from tail_from on is kept; in between,
-- those of one iteration in `stride` (iterations with (iteration - head_iters) % stride = 0), stride doubling as
-- the run grows so that at most a fixed number of them stay: the store of a cell stays bounded however long it
-- runs. The verdict and step_stats are computed by the parent from every sample as they arrive, never from these.
CREATE TABLE IF NOT EXISTS sample_resolution (
  cell_id    INTEGER PRIMARY KEY REFERENCES cells(id),
  head_iters INTEGER NOT NULL,
  stride     INTEGER NOT NULL,
  tail_from  INTEGER NOT NULL,
  iterations INTEGER NOT NULL              -- iterations the worker ran (warmup included)
);

-- Who is running a run now (schema 5, issue 25): one row per memleak-run process working on it, a shard each
-- (shard_count 0: every cell). A run (or a shard of it) has one live owner: a second process that would run the same
-- cells is refused, naming this pid. A row whose process is gone (no process with this pid and start time in this
-- boot and pid namespace, or the host has booted since) is stale: the next claim deletes it, so a killed owner never
-- keeps its run. A claim from another host or pid namespace cannot be checked that way: it is stale once its owner has
-- not renewed beat_at for 10 minutes. Not merged: it describes processes on this machine, not results.
CREATE TABLE IF NOT EXISTS run_owners (
  run_id      INTEGER NOT NULL REFERENCES runs(id),
  pid         INTEGER NOT NULL,
  start_ticks INTEGER NOT NULL,            -- /proc/PID/stat field 22: a reused pid has another
  boot        TEXT NOT NULL,               -- boot id and pid namespace where pid means this process
  host        TEXT,
  shard_index INTEGER NOT NULL,
  shard_count INTEGER NOT NULL,
  claimed_at  TEXT NOT NULL,
  beat_at     TEXT NOT NULL                -- the owner's last sign of life (about every minute while it runs)
);
