-- Schema version 1 (tirtune 0.0.x), kept to build test fixtures and to document the migration.
-- Targets are text in every record, run times only a JSON array (no median column), no trace hash
-- (so a retried measurement made a second row), neither device nor program version.
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE workload (
  id INTEGER PRIMARY KEY,
  shash TEXT NOT NULL,
  ir TEXT NOT NULL,
  created_at REAL NOT NULL
);
CREATE INDEX workload_shash ON workload (shash);
CREATE TABLE tuning_record (
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workload (id),
  target TEXT NOT NULL,
  trace TEXT NOT NULL,
  status TEXT NOT NULL,
  run_secs TEXT NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL
);
CREATE INDEX tuning_record_workload ON tuning_record (workload_id, target);
