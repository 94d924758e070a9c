-- schema.sql: memleak's results store (SQLite). Columns match the figures measured; NULL means not measured, never 0.
-- It must never be edited in place once released: a change bumps schema_version and adds a migration in harness/store.c.
CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER NOT NULL
);

-- One memleak-run invocation: enough to reproduce it from the db alone.
CREATE TABLE IF NOT EXISTS runs (
  id            INTEGER PRIMARY KEY,
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
                                                   'timeout', 'oom', 'error')),
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
  PRIMARY KEY (cell_id, seq)
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
  PRIMARY KEY (cell_id, step)
);

CREATE INDEX IF NOT EXISTS cells_by_config ON cells (config_key);
CREATE INDEX IF NOT EXISTS cells_by_run ON cells (run_id);
