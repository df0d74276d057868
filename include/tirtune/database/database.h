// The tuning database: workloads (PrimFuncs identified by their stable structural hash plus
// structural equality) and tuning records (a measured trace of one workload on one target).
// Backends: SQLite (the default), PostgreSQL (one database shared by tuners on several hosts),
// in-memory, and JSON-lines (export/import, review diffs); all of them satisfy the same contract
// (tests/database/contract_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/support/error.h"

namespace tirtune {

/// The outcome of measuring one candidate. Stored as the stable strings of RecordStatusName.
enum class RecordStatus : uint8_t {
  kOk,            // "ok": built, verified, timed
  kBuildError,    // "build_error": lowering or code generation failed
  kRuntimeError,  // "runtime_error": the kernel crashed or threw
  kTimeout,       // "timeout": the kernel did not finish in time
  kWrongResult,   // "wrong_result": the output differed from the reference
  kRunnerLost,    // "runner_lost": the worker process died for a reason not tied to the kernel
  kDeviceLost,    // "device_lost": two device-pool agents died running it; not retried again
};

/// "ok", "build_error", "runtime_error", "timeout", "wrong_result", "runner_lost", "device_lost".
std::string_view RecordStatusName(RecordStatus status);
/// The status named `name`, or nullopt.
std::optional<RecordStatus> ParseRecordStatus(std::string_view name);

/// Identifies a workload inside one database (not across databases: export/import maps ids).
using WorkloadId = int64_t;

/// A workload as stored: the function, its printed text (which parses back to it) and its key.
struct WorkloadEntry {
  WorkloadId id = -1;
  /// StructuralHashHex of the function. Not unique: two different functions may collide, and are
  /// then told apart by structural equality.
  std::string shash;
  /// The function's name when it was first committed (names do not take part in identity).
  std::string name;
  /// Print(func): the text stored in the database.
  std::string text;
  PrimFunc func;
  /// Unix time in seconds of the first commit.
  double created_at = 0;
};

/// One measurement of one candidate schedule.
struct TuningRecord {
  WorkloadId workload = -1;
  /// The target string, e.g. "llvm -mcpu=znver5 -num-cores=2". Stored with whitespace
  /// canonicalized (CanonicalTarget); a query for one target never returns another's records.
  std::string target;
  /// The Trace::ToJson document that produced the candidate. With workload and target, its
  /// compact text identifies the record: committing the same one again is a no-op.
  nlohmann::json trace;
  RecordStatus status = RecordStatus::kOk;
  /// Every timed run, in seconds. Required (non-empty) for kOk; each finite, >= 0 and
  /// <= kMaxRunSecs.
  std::vector<double> run_secs;
  /// The median of run_secs, computed by the database (ignored on commit); nullopt without samples.
  std::optional<double> median_secs;
  /// What went wrong, for failures.
  std::string error;
  /// Description of the device that ran the measurement, e.g. "AMD EPYC 9B45 (2 cores)".
  std::string device;
  /// Version of the program that measured it, e.g. "tirtune 0.1.0".
  std::string program_version;
  /// Unix time in seconds of the measurement; 0 on commit means "now".
  double created_at = 0;
};

/// Run times above this (about 11.6 days) are treated as corrupt rather than as measurements.
inline constexpr double kMaxRunSecs = 1e6;
/// More samples than this in one record are treated as corrupt.
inline constexpr size_t kMaxRunSamples = 100000;

/// Summary of the records of one (workload, target) pair.
struct RecordGroupStats {
  WorkloadId workload = -1;
  std::string target;
  size_t num_records = 0;
  /// Records with status kOk.
  size_t num_ok = 0;
  /// The smallest median among ok records.
  std::optional<double> best_median_secs;
};

/// Receives one line per skipped row or other recoverable problem found while reading.
using WarningHandler = std::function<void(const std::string& message)>;

struct OpenOptions {
  /// Create the database when the file does not exist; otherwise UserError "no database".
  /// PostgreSQL: create the tables in a database without them (the database itself must exist).
  bool create_if_missing = true;
  /// Where warnings go; empty: stderr ("warning: ..."). Rows that cannot be read (a trace that
  /// is not a trace, a status nobody knows, absurd numbers) are skipped with a warning.
  WarningHandler on_warning;
  /// SQLite: how long a writer waits for another process's write transaction. Default 30 s.
  int busy_timeout_ms = 30000;
  /// PostgreSQL: how long connecting may take before the server counts as unreachable, unless
  /// the URL sets connect_timeout. Default 10 s.
  int connect_timeout_s = 10;
};

/// A tuning database. Objects are not thread-safe: use one per thread (SQLite and PostgreSQL: one
/// connection each; several processes may share one SQLite file, and processes on several hosts
/// one PostgreSQL database). Methods throw UserError for bad input or an unusable file or server
/// (a PostgreSQL server that stopped: the object reconnects on its next call), naming the
/// database and the problem; nothing is half-written on a throw.
class Database {
 public:
  virtual ~Database() = default;

  /// The stored workload structurally equal to `func`, committing it first when there is none.
  virtual WorkloadEntry CommitWorkload(const PrimFunc& func) = 0;
  /// The stored workload structurally equal to `func`, or nullopt; never writes.
  virtual std::optional<WorkloadEntry> FindWorkload(const PrimFunc& func) = 0;
  /// Every readable workload, by id.
  virtual std::vector<WorkloadEntry> Workloads() = 0;

  /// Commits all of `records` or none of them (UserError when one is invalid, e.g. an unknown
  /// workload, a trace that is not a trace, or absurd run times). Records already stored (same
  /// workload, target and trace) are ignored. Returns how many were new.
  virtual size_t CommitRecords(const std::vector<TuningRecord>& records) = 0;

  /// Adds the samples of a re-measurement: for each of `records` (workload, target, trace and
  /// run_secs are read, the rest ignored), appends its run_secs to the stored ok record with the
  /// same workload, target and trace, whose median follows; an equal record's samples become a
  /// median over every measurement (the tuner re-times close finalists so that one lucky run does
  /// not decide). All or none: UserError, nothing changed, when one is not stored as an ok record
  /// or its samples are invalid. Returns how many were updated.
  virtual size_t AddRunSecs(const std::vector<TuningRecord>& records) = 0;

  /// A re-measurement that failed: for each of `records` (workload, target, trace, status and
  /// error are read, the rest ignored; the status is not ok), the stored ok record with the same
  /// workload, target and trace takes that status and error and loses its samples, like a record
  /// that failed when first measured, so that no best-record query returns it again: a kernel that
  /// once computed a wrong result or crashed is not run, however fast it measured before.
  /// All or none: UserError, nothing changed, when one is ok or not stored as an ok record.
  /// Returns how many were changed.
  virtual size_t MarkFailed(const std::vector<TuningRecord>& records) = 0;

  /// The `k` ok records of (workload, target) with the smallest median, ascending (ties: first
  /// committed first). Never returns failures or another target's records.
  virtual std::vector<TuningRecord> TopK(WorkloadId workload, std::string_view target,
                                         size_t k) = 0;
  /// Every readable record of `workload`, all targets and statuses, in commit order.
  virtual std::vector<TuningRecord> RecordsOf(WorkloadId workload) = 0;
  /// Calls `fn` with every readable record, in commit order (for export).
  virtual void ForEachRecord(const std::function<void(const TuningRecord&)>& fn) = 0;
  /// Per (workload, target) counts and best median, ordered by workload then target.
  virtual std::vector<RecordGroupStats> Stats() = 0;
  /// The number of stored records.
  virtual size_t Size() = 0;

  /// Keeps, for each (workload, target), the `keep` best ok records, and every other ok record
  /// `also_keep` accepts (when given: `tirtune db prune` keeps a library's records, which
  /// `compile` may run in place of the best), and deletes every other record, failures included.
  /// Workloads stay. Returns the number deleted.
  virtual size_t Prune(size_t keep,
                       const std::function<bool(const TuningRecord&)>& also_keep = nullptr) = 0;

  /// Describes the storage for messages, e.g. "SQLite database 'tuning.db'" or "PostgreSQL
  /// database 'postgresql://tuner@db-host:5432/tuning'" (never with a password).
  virtual std::string Describe() const = 0;

  /// The storage's own consistency check (SQLite: PRAGMA integrity_check): one line per problem
  /// found, empty when there is none or the backend has no such check.
  virtual std::vector<std::string> CheckIntegrity() { return {}; }
};

/// Opens or creates the database at `path`, choosing the backend from the name:
/// "postgresql://..." or "postgres://..." → PostgreSQL (a libpq connection URI, e.g.
/// "postgresql://tuner@db-host:5432/tuning"; the password comes from the URL, PGPASSWORD or
/// ~/.pgpass, as libpq does), ".db" or ".sqlite" → SQLite, ".jsonl" → JSON-lines, ":memory:" →
/// in-memory. UserError naming the database and the problem for another name, a missing file
/// (unless created), a file that is not a database of that kind, one written by a newer schema,
/// and for PostgreSQL a malformed URL, a server that cannot be reached within the connect
/// timeout, failed authentication, or a database that does not exist.
std::unique_ptr<Database> OpenDatabase(const std::string& path, const OpenOptions& options = {});

/// Runs the storage's own check (CheckIntegrity) and throws UserError when it finds a problem,
/// naming the database, the first problem and what to do, so that `what` (e.g. "tirtune tune")
/// neither reads wrong records through a damaged index nor writes into a damaged file.
void RequireIntact(Database& db, std::string_view what);

std::unique_ptr<Database> OpenSqliteDatabase(const std::string& path,
                                             const OpenOptions& options = {});
std::unique_ptr<Database> OpenPostgresDatabase(const std::string& url,
                                               const OpenOptions& options = {});
std::unique_ptr<Database> OpenJsonlDatabase(const std::string& path,
                                            const OpenOptions& options = {});
std::unique_ptr<Database> MakeMemoryDatabase(const OpenOptions& options = {});

/// `target` with leading and trailing whitespace removed and inner runs of whitespace replaced by
/// one space. UserError when nothing is left.
std::string CanonicalTarget(std::string_view target);

/// The median of `samples` (the mean of the middle two for an even count); nullopt when empty.
std::optional<double> MedianOf(std::vector<double> samples);

}  // namespace tirtune
