-- Schema version 2 (tirtune 0.1), the current one. The code that creates it is
-- database/sqlite_schema.cc (kSchemaV2); this copy is for reading, and
-- tests/database/sqlite_test.cc checks that the two agree.
CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT;
CREATE TABLE workload (
  id INTEGER PRIMARY KEY,
  shash TEXT NOT NULL,         -- StructuralHashHex; not unique (collisions are told apart by IR)
  name TEXT NOT NULL,
  ir TEXT NOT NULL,            -- printed PrimFunc, parses back to it
  created_at REAL NOT NULL     -- unix seconds
) STRICT;
CREATE INDEX workload_shash ON workload (shash);
CREATE TABLE target (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE     -- canonical target string
) STRICT;
CREATE TABLE tuning_record (
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workload (id),
  target_id INTEGER NOT NULL REFERENCES target (id),
  trace_hash TEXT NOT NULL,    -- FNV-1a of the trace text: the record's identity
  trace TEXT NOT NULL,         -- compact Trace::ToJson text
  status TEXT NOT NULL,        -- ok, build_error, runtime_error, timeout, wrong_result, runner_lost
  run_secs TEXT NOT NULL,      -- JSON array of seconds
  median_secs REAL,            -- NULL without samples
  error TEXT NOT NULL,
  device TEXT NOT NULL,
  program_version TEXT NOT NULL,
  created_at REAL NOT NULL,    -- unix seconds
  UNIQUE (workload_id, target_id, trace_hash)
) STRICT;
CREATE INDEX tuning_record_best ON tuning_record (workload_id, target_id, status, median_secs);
INSERT INTO schema_version VALUES (2);
