// The SQLite backend, the default. Each object is one connection in WAL mode: readers never block
// the writer, writes start with BEGIN IMMEDIATE so that concurrent writers queue on the busy
// timeout instead of failing with "database is locked", and a batch of records is one
// transaction, so a killed writer leaves whole batches only. Statements are prepared once.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "record_check.h"
#include "sqlite_connection.h"
#include "sqlite_schema.h"
#include "tirtune/ir/structural_equal.h"
#include "workload_text.h"

namespace tirtune {
namespace database_internal {
namespace {

/// Resets a statement when leaving a scope, ending its read transaction even when the rows were
/// not all read (an open one would keep WAL checkpoints from finishing).
class ResetOnExit {
 public:
  explicit ResetOnExit(SqliteStatement& stmt) : stmt_(stmt) {}
  ~ResetOnExit() { stmt_.Reset(); }

 private:
  SqliteStatement& stmt_;
};

/// The columns every record query selects, in this order.
constexpr const char* kRecordColumns =
    "r.id, r.workload_id, t.key, r.trace, r.status, r.run_secs, r.median_secs, r.error, r.device, "
    "r.program_version, r.created_at";

/// What is wrong with the start of the existing file `path`, empty when nothing is: an empty file
/// (it becomes a new database) or one that starts with the SQLite header and is as long as that
/// header says.
std::string HeaderProblem(const std::string& path) {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size == 0) return "";
  unsigned char header[100] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  if (std::memcmp(header, "SQLite format 3", 16) != 0) {
    return fmt::format("'{}' is not a SQLite database (it does not start with the SQLite header)",
                       path);
  }
  if (!in) return fmt::format("'{}' is not a usable SQLite database (truncated header)", path);
  // A file cut short: SQLite would only notice when it reads a missing page. Checked only without
  // a WAL, because a checkpoint in progress may write page 1 before it extends the file.
  uintmax_t wal_size = std::filesystem::file_size(path + "-wal", ec);
  if (!ec && wal_size > 0) return "";
  auto be32 = [&header](int at) {
    return uint32_t{header[at]} << 24 | uint32_t{header[at + 1]} << 16 |
           uint32_t{header[at + 2]} << 8 | uint32_t{header[at + 3]};
  };
  uint32_t page_size = uint32_t{header[16]} << 8 | header[17];
  if (page_size == 1) page_size = 65536;
  bool size_is_valid = be32(24) == be32(92);  // the page count is current (see the file format)
  uintmax_t expected = uintmax_t{be32(28)} * page_size;
  if (size_is_valid && expected > size) {
    return fmt::format("'{}' is truncated: its header says {} bytes, the file has {}", path,
                       expected, size);
  }
  return "";
}

/// UserError unless `path` is absent (and may be created) or a usable start of a database (see
/// HeaderProblem).
void CheckFileBeforeOpening(const std::string& path, bool create_if_missing) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    TT_USER_ERROR("'{}' is a directory, not a database", path);
  }
  if (!std::filesystem::exists(path, ec)) {
    if (!create_if_missing) TT_USER_ERROR("'{}': no such database", path);
    return;
  }
  // Another process may be writing the file this very moment: creating it, or, as the last
  // connection to close, checkpointing the WAL into it (page 1 first, the file extended later) and
  // then deleting the WAL, which looks like a truncated file between our reads of its size, its
  // header and the WAL. That lasts milliseconds; a damaged file stays damaged.
  std::string problem = HeaderProblem(path);
  for (int wait_ms = 5; !problem.empty() && wait_ms <= 160; wait_ms *= 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    problem = HeaderProblem(path);
  }
  if (!problem.empty()) throw UserError(problem);
}

class SqliteDatabase : public Database {
 public:
  SqliteDatabase(const std::string& path, const OpenOptions& options)
      : warn_(WarningsOrStderr(options.on_warning)), db_(Open(path, options)) {
    sqlite3_busy_timeout(db_.get(), options.busy_timeout_ms);
    // WAL: readers and one writer at a time across processes; NORMAL sync is safe in WAL (a power
    // loss may drop the last commits, never corrupt the file; a killed process loses nothing).
    EnterWalMode(options.busy_timeout_ms);
    db_.Exec("PRAGMA synchronous = NORMAL");
    db_.Exec("PRAGMA foreign_keys = ON");
    EnsureSqliteSchema(db_, warn_);
    find_workloads_ = db_.Prepare(
        "SELECT id, shash, name, ir, created_at FROM workload WHERE shash = ?1 ORDER BY id");
    all_workloads_ =
        db_.Prepare("SELECT id, shash, name, ir, created_at FROM workload ORDER BY id");
    insert_workload_ =
        db_.Prepare("INSERT INTO workload (shash, name, ir, created_at) VALUES (?1, ?2, ?3, ?4)");
    has_workload_ = db_.Prepare("SELECT 1 FROM workload WHERE id = ?1");
    find_target_ = db_.Prepare("SELECT id FROM target WHERE key = ?1");
    insert_target_ = db_.Prepare("INSERT INTO target (key) VALUES (?1)");
    insert_record_ = db_.Prepare(
        "INSERT INTO tuning_record (workload_id, target_id, trace_hash, trace, status, run_secs, "
        "median_secs, error, device, program_version, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT DO NOTHING");
    top_k_ = db_.Prepare(
        fmt::format("SELECT {} FROM tuning_record r JOIN target t ON t.id = r.target_id "
                    "WHERE r.workload_id = ?1 AND r.target_id = ?2 AND r.status = 'ok' "
                    "ORDER BY r.median_secs, r.id",
                    kRecordColumns));
    records_of_ = db_.Prepare(
        fmt::format("SELECT {} FROM tuning_record r JOIN target t ON t.id = r.target_id "
                    "WHERE r.workload_id = ?1 ORDER BY r.id",
                    kRecordColumns));
    all_records_ = db_.Prepare(
        fmt::format("SELECT {} FROM tuning_record r JOIN target t ON t.id = r.target_id "
                    "ORDER BY r.id",
                    kRecordColumns));
    stats_ = db_.Prepare(
        "SELECT r.workload_id, t.key, count(*), sum(r.status = 'ok'), "
        "min(CASE WHEN r.status = 'ok' THEN r.median_secs END) "
        "FROM tuning_record r JOIN target t ON t.id = r.target_id "
        "GROUP BY r.workload_id, r.target_id ORDER BY r.workload_id, t.key");
    count_ = db_.Prepare("SELECT count(*) FROM tuning_record");
    find_ok_record_ = db_.Prepare(
        "SELECT id, run_secs FROM tuning_record WHERE workload_id = ?1 AND target_id = ?2 AND "
        "trace_hash = ?3 AND status = 'ok'");
    update_run_secs_ =
        db_.Prepare("UPDATE tuning_record SET run_secs = ?2, median_secs = ?3 WHERE id = ?1");
    mark_failed_ = db_.Prepare(
        "UPDATE tuning_record SET status = ?2, error = ?3, run_secs = '[]', median_secs = NULL "
        "WHERE id = ?1");
  }

  std::string Describe() const override { return fmt::format("SQLite database '{}'", db_.path()); }

  std::vector<std::string> CheckIntegrity() override {
    std::vector<std::string> problems;
    SqliteStatement check = db_.Prepare("PRAGMA integrity_check(100)");
    while (check.Step()) {
      std::string line = check.Text(0);
      if (line != "ok") problems.push_back(line);
    }
    return problems;
  }

  std::optional<WorkloadEntry> FindWorkload(const PrimFunc& func) override {
    return FindEqual(MakeWorkloadEntry(func));
  }

  WorkloadEntry CommitWorkload(const PrimFunc& func) override {
    WorkloadEntry entry = MakeWorkloadEntry(func);
    if (std::optional<WorkloadEntry> found = FindEqual(entry)) return *found;
    SqliteWriteTransaction tx(db_);
    // Another process may have committed it since.
    if (std::optional<WorkloadEntry> found = FindEqual(entry)) {
      tx.Commit();
      return *found;
    }
    insert_workload_.Reset()
        .Bind(1, std::string_view(entry.shash))
        .Bind(2, std::string_view(entry.name))
        .Bind(3, std::string_view(entry.text))
        .Bind(4, entry.created_at)
        .Run();
    entry.id = sqlite3_last_insert_rowid(db_.get());
    tx.Commit();
    parsed_.Remember(entry.id, entry.func);
    return entry;
  }

  std::vector<WorkloadEntry> Workloads() override {
    std::vector<WorkloadEntry> out;
    ResetOnExit reset(all_workloads_);
    all_workloads_.Reset();
    while (all_workloads_.Step()) {
      if (std::optional<WorkloadEntry> e = ReadWorkloadRow(all_workloads_)) {
        out.push_back(std::move(*e));
      }
    }
    return out;
  }

  size_t CommitRecords(const std::vector<TuningRecord>& records) override {
    std::vector<CheckedRecord> checked;
    checked.reserve(records.size());
    for (size_t i = 0; i < records.size(); ++i) checked.push_back(CheckForCommit(records[i], i));
    if (checked.empty()) return 0;
    std::map<std::string, int64_t> new_targets;  // cached only once committed
    size_t added = 0;
    SqliteWriteTransaction tx(db_);
    for (size_t i = 0; i < checked.size(); ++i) {
      const TuningRecord& r = checked[i].record;
      if (!known_workloads_.count(r.workload)) {
        bool exists = has_workload_.Reset().Bind(1, r.workload).Step();
        has_workload_.Reset();
        if (!exists)
          TT_USER_ERROR("{}: record {}: no workload has id {}", Describe(), i, r.workload);
        known_workloads_.insert(r.workload);
      }
      int64_t target_id = TargetId(r.target, &new_targets);
      insert_record_.Reset()
          .Bind(1, r.workload)
          .Bind(2, target_id)
          .Bind(3, std::string_view(checked[i].trace_hash))
          .Bind(4, std::string_view(checked[i].trace_text))
          .Bind(5, RecordStatusName(r.status))
          .Bind(6, std::string_view(RunSecsText(r.run_secs)))
          .Bind(7, r.median_secs)
          .Bind(8, std::string_view(r.error))
          .Bind(9, std::string_view(r.device))
          .Bind(10, std::string_view(r.program_version))
          .Bind(11, r.created_at)
          .Run();
      added += static_cast<size_t>(sqlite3_changes(db_.get()));
    }
    tx.Commit();
    target_ids_.insert(new_targets.begin(), new_targets.end());
    return added;
  }

  size_t AddRunSecs(const std::vector<TuningRecord>& records) override {
    std::vector<CheckedRecord> checked = CheckForAddRunSecs(records);
    if (checked.empty()) return 0;
    // Read and written inside one write transaction: another writer's samples are never lost.
    SqliteWriteTransaction tx(db_);
    std::map<int64_t, TuningRecord> updated;  // row id -> run_secs and median after
    for (size_t i = 0; i < checked.size(); ++i) {
      ResetOnExit reset(find_ok_record_);
      FindOkRecord(checked[i], i);
      AddToRow(updated, find_ok_record_.Int(0), find_ok_record_.Text(1), checked[i].record.run_secs,
               i, Describe());
    }
    for (const auto& [id, r] : updated) {
      update_run_secs_.Reset()
          .Bind(1, id)
          .Bind(2, std::string_view(RunSecsText(r.run_secs)))
          .Bind(3, r.median_secs)
          .Run();
    }
    tx.Commit();
    return updated.size();
  }

  size_t MarkFailed(const std::vector<TuningRecord>& records) override {
    std::vector<CheckedRecord> checked = CheckForMarkFailed(records);
    if (checked.empty()) return 0;
    SqliteWriteTransaction tx(db_);
    std::map<int64_t, const TuningRecord*> failed;  // row id -> its failure
    for (size_t i = 0; i < checked.size(); ++i) {
      ResetOnExit reset(find_ok_record_);
      FindOkRecord(checked[i], i);
      failed[find_ok_record_.Int(0)] = &checked[i].record;
    }
    for (const auto& [id, r] : failed) {
      mark_failed_.Reset()
          .Bind(1, id)
          .Bind(2, RecordStatusName(r->status))
          .Bind(3, std::string_view(r->error))
          .Run();
    }
    tx.Commit();
    return failed.size();
  }

  std::vector<TuningRecord> TopK(WorkloadId workload, std::string_view target, size_t k) override {
    std::vector<TuningRecord> out;
    std::optional<int64_t> target_id = FindTargetId(CanonicalTarget(target));
    if (!target_id || k == 0) return out;
    ResetOnExit reset(top_k_);
    top_k_.Reset().Bind(1, workload).Bind(2, *target_id);
    while (out.size() < k && top_k_.Step()) {
      if (std::optional<TuningRecord> r = ReadRecordRow(top_k_)) out.push_back(std::move(*r));
    }
    return out;
  }

  std::vector<TuningRecord> RecordsOf(WorkloadId workload) override {
    std::vector<TuningRecord> out;
    ResetOnExit reset(records_of_);
    records_of_.Reset().Bind(1, workload);
    while (records_of_.Step()) {
      if (std::optional<TuningRecord> r = ReadRecordRow(records_of_)) out.push_back(std::move(*r));
    }
    return out;
  }

  void ForEachRecord(const std::function<void(const TuningRecord&)>& fn) override {
    ResetOnExit reset(all_records_);
    all_records_.Reset();
    while (all_records_.Step()) {
      if (std::optional<TuningRecord> r = ReadRecordRow(all_records_)) fn(*r);
    }
  }

  std::vector<RecordGroupStats> Stats() override {
    std::vector<RecordGroupStats> out;
    ResetOnExit reset(stats_);
    stats_.Reset();
    while (stats_.Step()) {
      RecordGroupStats s;
      s.workload = stats_.Int(0);
      s.target = stats_.Text(1);
      s.num_records = static_cast<size_t>(stats_.Int(2));
      s.num_ok = static_cast<size_t>(stats_.Int(3));
      if (!stats_.IsNull(4)) s.best_median_secs = stats_.Double(4);
      out.push_back(std::move(s));
    }
    return out;
  }

  size_t Size() override {
    ResetOnExit reset(count_);
    count_.Reset().Step();
    return static_cast<size_t>(count_.Int(0));
  }

  size_t Prune(size_t keep, const std::function<bool(const TuningRecord&)>& also_keep) override {
    // The records kept are chosen by reading them, best first: a row that cannot be used is
    // never kept, however fast it claims to be (it would have displaced the good ones), and goes
    // with the rest after its warning. All inside one write transaction.
    SqliteWriteTransaction tx(db_);
    db_.Exec("CREATE TEMP TABLE IF NOT EXISTS prune_keep (id INTEGER PRIMARY KEY)");
    db_.Exec("DELETE FROM prune_keep");
    SqliteStatement ranked = db_.Prepare(
        fmt::format("SELECT {} FROM tuning_record r JOIN target t ON t.id = r.target_id "
                    "WHERE r.status = 'ok' ORDER BY r.workload_id, r.target_id, r.median_secs, "
                    "r.id",
                    kRecordColumns));
    SqliteStatement keep_row = db_.Prepare("INSERT INTO prune_keep (id) VALUES (?1)");
    std::pair<int64_t, std::string> group{-1, ""};
    size_t kept = 0;
    while (ranked.Step()) {
      std::pair<int64_t, std::string> row_group{ranked.Int(1), ranked.Text(2)};
      if (row_group != group) {
        group = std::move(row_group);
        kept = 0;
      }
      if (kept < keep) {
        if (ReadRecordRow(ranked)) {
          keep_row.Reset().Bind(1, ranked.Int(0)).Run();
          ++kept;
        }
      } else if (also_keep) {
        std::optional<TuningRecord> r = ReadRecordRow(ranked);
        if (r && also_keep(*r)) keep_row.Reset().Bind(1, ranked.Int(0)).Run();
      }
    }
    db_.Exec("DELETE FROM tuning_record WHERE id NOT IN (SELECT id FROM prune_keep)");
    size_t removed = static_cast<size_t>(sqlite3_changes(db_.get()));
    db_.Exec("DELETE FROM prune_keep");
    tx.Commit();
    return removed;
  }

 private:
  static SqliteConnection Open(const std::string& path, const OpenOptions& options) {
    CheckFileBeforeOpening(path, options.create_if_missing);
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (options.create_if_missing) flags |= SQLITE_OPEN_CREATE;
    return SqliteConnection(path, flags);
  }

  // PRAGMA journal_mode = WAL, retried while another connection holds the write lock. On a file
  // still in rollback-journal mode (a new one) the switch upgrades a read transaction to a write
  // one, which SQLite refuses at once with "database is locked" rather than calling the busy
  // handler (two upgraders would deadlock); several processes opening a new file together run
  // into it. So the waiting is done here, up to the busy timeout like every other lock.
  void EnterWalMode(int busy_timeout_ms) {
    constexpr const char* kPragma = "PRAGMA journal_mode = WAL";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
    for (int wait_ms = 1;; wait_ms = std::min(2 * wait_ms, 100)) {
      int rc = sqlite3_exec(db_.get(), kPragma, nullptr, nullptr, nullptr);
      if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
        db_.Check(rc, kPragma);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    }
  }

  std::optional<WorkloadEntry> FindEqual(const WorkloadEntry& entry) {
    ResetOnExit reset(find_workloads_);
    find_workloads_.Reset().Bind(1, std::string_view(entry.shash));
    while (find_workloads_.Step()) {
      std::optional<WorkloadEntry> stored = ReadWorkloadRow(find_workloads_);
      if (stored && StructuralEqual(stored->func, entry.func)) return stored;
    }
    return std::nullopt;
  }

  /// A workload row (id, shash, name, ir, created_at); nullopt with a warning when its text does
  /// not parse. Parsed functions are cached by id (rows never change).
  std::optional<WorkloadEntry> ReadWorkloadRow(const SqliteStatement& row) {
    WorkloadEntry e;
    e.id = row.Int(0);
    e.shash = row.Text(1);
    e.name = row.Text(2);
    e.text = row.Text(3);
    e.created_at = row.Double(4);
    std::string problem;
    if (!parsed_.Resolve(e, &problem)) {
      warn_(fmt::format("{}: workload {}: {}; skipped", Describe(), e.id, problem));
      return std::nullopt;
    }
    return e;
  }

  /// A row of kRecordColumns; nullopt with a warning when it cannot be used.
  std::optional<TuningRecord> ReadRecordRow(const SqliteStatement& row) {
    int64_t id = row.Int(0);
    auto skip = [&](const std::string& problem) {
      // Once per row and object: a search loop asks for the same top-k again and again.
      if (warned_records_.insert(id).second) {
        warn_(fmt::format("{}: record {}: {}; skipped", Describe(), id, problem));
      }
      return std::nullopt;
    };
    TuningRecord r;
    r.workload = row.Int(1);
    r.target = row.Text(2);
    std::string problem;
    std::optional<nlohmann::json> trace = ParseTraceText(row.Text(3), &problem);
    if (!trace) return skip(problem);
    r.trace = std::move(*trace);
    std::string status = row.Text(4);
    std::optional<RecordStatus> parsed_status = ParseRecordStatus(status);
    if (!parsed_status) return skip(fmt::format("unknown status '{}'", status));
    r.status = *parsed_status;
    std::optional<std::vector<double>> run_secs = ParseRunSecsText(row.Text(5), &problem);
    if (!run_secs) return skip(problem);
    r.run_secs = std::move(*run_secs);
    if (!row.IsNull(6)) r.median_secs = row.Double(6);
    r.error = row.Text(7);
    r.device = row.Text(8);
    r.program_version = row.Text(9);
    r.created_at = row.Double(10);
    if (std::optional<std::string> p = RecordProblem(r)) return skip(*p);
    return r;
  }

  // Steps find_ok_record_ onto the stored ok record of `c` (its id, then its samples' text);
  // UserError naming record `index` of a batch when there is none. The caller resets it.
  void FindOkRecord(const CheckedRecord& c, size_t index) {
    const TuningRecord& r = c.record;
    std::optional<int64_t> target_id = FindTargetId(r.target);
    if (!target_id || !find_ok_record_.Reset()
                           .Bind(1, r.workload)
                           .Bind(2, *target_id)
                           .Bind(3, std::string_view(c.trace_hash))
                           .Step()) {
      TT_USER_ERROR("{}: record {}: workload {} has no ok record of this trace on '{}'", Describe(),
                    index, r.workload, r.target);
    }
  }

  std::optional<int64_t> FindTargetId(const std::string& target) {
    auto it = target_ids_.find(target);
    if (it != target_ids_.end()) return it->second;
    ResetOnExit reset(find_target_);
    if (!find_target_.Reset().Bind(1, std::string_view(target)).Step()) return std::nullopt;
    int64_t id = find_target_.Int(0);
    target_ids_.emplace(target, id);
    return id;
  }

  /// The id of `target`, inserting it (inside the caller's transaction) when new.
  int64_t TargetId(const std::string& target, std::map<std::string, int64_t>* new_targets) {
    if (std::optional<int64_t> id = FindTargetId(target)) return *id;
    auto it = new_targets->find(target);
    if (it != new_targets->end()) return it->second;
    insert_target_.Reset().Bind(1, std::string_view(target)).Run();
    int64_t id = sqlite3_last_insert_rowid(db_.get());
    new_targets->emplace(target, id);
    return id;
  }

  WarningHandler warn_;
  SqliteConnection db_;
  SqliteStatement find_workloads_, all_workloads_, insert_workload_, has_workload_, find_target_,
      insert_target_, insert_record_, top_k_, records_of_, all_records_, stats_, count_,
      find_ok_record_, update_run_secs_, mark_failed_;
  ParsedWorkloads parsed_;
  std::unordered_set<WorkloadId> known_workloads_;
  std::unordered_set<int64_t> warned_records_;  // ids of unreadable rows already reported
  std::map<std::string, int64_t> target_ids_;   // committed targets only
};

}  // namespace
}  // namespace database_internal

std::unique_ptr<Database> OpenSqliteDatabase(const std::string& path, const OpenOptions& options) {
  return std::make_unique<database_internal::SqliteDatabase>(path, options);
}

}  // namespace tirtune
