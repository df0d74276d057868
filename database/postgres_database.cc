// The PostgreSQL backend: one database shared by tuners on several hosts. Each object is one
// connection. Every write is one statement or one transaction, so a writer that dies or loses
// the server leaves whole batches only; records go in with ON CONFLICT DO NOTHING, so duplicate
// deliveries and concurrent writers of the same record are harmless, and they are inserted in
// key order, so two writers of overlapping batches cannot deadlock. Workloads are deduplicated
// by hash and structural equality under an advisory lock per hash.
#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "postgres_connection.h"
#include "postgres_schema.h"
#include "record_check.h"
#include "tirtune/ir/structural_equal.h"
#include "workload_text.h"

namespace tirtune {
namespace database_internal {
namespace {

/// The columns every record query selects, in this order.
constexpr const char* kRecordColumns =
    "r.id, r.workload_id, t.key, r.trace, r.status, r.run_secs, r.median_secs, r.error, r.device, "
    "r.program_version, r.created_at";
constexpr int kRecordParams = 12;  // columns of one inserted record
/// Rows per INSERT statement (PostgreSQL takes at most 65535 parameters per statement).
constexpr size_t kRowsPerInsert = 1000;
/// Rows per page of ForEachRecord, which does not hold a transaction open while `fn` runs.
constexpr int64_t kRowsPerPage = 2000;
/// How often a batch that lost a deadlock or serialization check is tried.
constexpr int kMaxCommitAttempts = 5;

/// `text` with every byte that is not part of valid UTF-8, and every NUL, replaced by U+FFFD:
/// PostgreSQL refuses both in text columns, and an odd byte in a compiler's error message must
/// not cost the whole batch.
std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xe  ? 3
                 : (c >> 3) == 0x1e ? 4
                                    : 0;
    bool valid = len > 0 && c != 0 && i + len <= text.size();
    for (size_t j = 1; valid && j < len; ++j) {
      valid = (static_cast<unsigned char>(text[i + j]) & 0xc0) == 0x80;
    }
    if (valid && len > 1) {
      // Overlong forms, surrogates and code points past U+10FFFF are invalid too.
      uint32_t cp = c & (0x7f >> len);
      for (size_t j = 1; j < len; ++j)
        cp = cp << 6 | (static_cast<unsigned char>(text[i + j]) & 0x3f);
      static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      valid = cp >= kMin[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    }
    if (valid) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

/// The advisory lock object of a workload hash: its first 32 bits (collisions only serialize).
int64_t WorkloadLockObject(const std::string& shash) {
  uint32_t value = 0;
  for (size_t i = 0; i < shash.size() && i < 8; ++i) {
    char c = shash[i];
    uint32_t digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 0;
    value = value << 4 | digit;
  }
  return static_cast<int32_t>(value);
}

class PostgresDatabase : public Database {
 public:
  PostgresDatabase(const std::string& url, const OpenOptions& options)
      : warn_(WarningsOrStderr(options.on_warning)), db_(url, options.connect_timeout_s) {
    EnsurePostgresSchema(db_, options.create_if_missing);
  }

  std::string Describe() const override { return db_.description(); }

  std::optional<WorkloadEntry> FindWorkload(const PrimFunc& func) override {
    db_.EnsureConnected();
    return FindEqual(MakeWorkloadEntry(func));
  }

  WorkloadEntry CommitWorkload(const PrimFunc& func) override {
    WorkloadEntry entry = MakeWorkloadEntry(func);
    db_.EnsureConnected();
    if (std::optional<WorkloadEntry> found = FindEqual(entry)) return *found;
    PgTransaction tx(db_);
    // Two processes committing the same new function: the second waits here for the first to
    // commit, and then finds its row.
    db_.QueryPrepared(
        "lock_workload", "SELECT pg_advisory_xact_lock($1::int, $2::int)",
        PgParams().Add(int64_t{kWorkloadLockClass}).Add(WorkloadLockObject(entry.shash)),
        "locking the workload");
    if (std::optional<WorkloadEntry> found = FindEqual(entry)) {
      tx.Commit();
      return *found;
    }
    PgRows id = db_.QueryPrepared(
        "insert_workload",
        "INSERT INTO workload (shash, name, ir, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
        PgParams()
            .Add(std::string_view(entry.shash))
            .Add(std::string_view(ValidUtf8(entry.name)))
            .Add(std::string_view(entry.text))
            .Add(entry.created_at),
        "committing a workload");
    entry.id = id.Int(0, 0);
    tx.Commit();
    parsed_.Remember(entry.id, entry.func);
    return entry;
  }

  std::vector<WorkloadEntry> Workloads() override {
    db_.EnsureConnected();
    PgRows rows = db_.QueryPrepared(
        "all_workloads", "SELECT id, shash, name, ir, created_at FROM workload ORDER BY id", {},
        "reading workloads");
    std::vector<WorkloadEntry> out;
    for (int i = 0; i < rows.size(); ++i) {
      if (std::optional<WorkloadEntry> e = ReadWorkloadRow(rows, i)) out.push_back(std::move(*e));
    }
    return out;
  }

  size_t CommitRecords(const std::vector<TuningRecord>& records) override {
    std::vector<CheckedRecord> checked;
    checked.reserve(records.size());
    for (size_t i = 0; i < records.size(); ++i) checked.push_back(CheckForCommit(records[i], i));
    if (checked.empty()) return 0;
    db_.EnsureConnected();
    CheckWorkloadsExist(checked);
    // Targets are committed on their own, before the records: a target without records is
    // harmless, and a target row locked inside the batch's transaction could deadlock two writers.
    std::vector<int64_t> target_ids;
    target_ids.reserve(checked.size());
    for (const CheckedRecord& c : checked) target_ids.push_back(TargetId(c.record.target));
    return Retried([&] { return InsertRecords(checked, target_ids); });
  }

  size_t AddRunSecs(const std::vector<TuningRecord>& records) override {
    std::vector<CheckedRecord> checked = CheckForAddRunSecs(records);
    if (checked.empty()) return 0;
    db_.EnsureConnected();
    return Retried([&] { return UpdateRunSecs(checked); });
  }

  size_t MarkFailed(const std::vector<TuningRecord>& records) override {
    std::vector<CheckedRecord> checked = CheckForMarkFailed(records);
    if (checked.empty()) return 0;
    db_.EnsureConnected();
    return Retried([&] { return UpdateFailed(checked); });
  }

  std::vector<TuningRecord> TopK(WorkloadId workload, std::string_view target, size_t k) override {
    std::vector<TuningRecord> out;
    std::string canonical = CanonicalTarget(target);
    db_.EnsureConnected();
    std::optional<int64_t> target_id = FindTargetId(canonical);
    if (!target_id || k == 0) return out;
    // Rows that cannot be read are skipped, so a page may hold fewer than asked for: read on.
    for (int64_t offset = 0; out.size() < k;) {
      int64_t want = static_cast<int64_t>(
          std::min<size_t>(k - out.size(), std::numeric_limits<int64_t>::max()));
      PgRows rows = db_.QueryPrepared(
          "top_k",
          fmt::format("SELECT {} FROM tuning_record r JOIN target t ON t.id = r.target_id "
                      "WHERE r.workload_id = $1 AND r.target_id = $2 AND r.status = 'ok' "
                      "ORDER BY r.median_secs, r.id LIMIT $3 OFFSET $4",
                      kRecordColumns),
          PgParams().Add(int64_t{workload}).Add(*target_id).Add(want).Add(offset),
          "reading the best records");
      for (int i = 0; i < rows.size(); ++i) {
        if (std::optional<TuningRecord> r = ReadRecordRow(rows, i)) out.push_back(std::move(*r));
      }
      if (rows.size() < want) break;
      offset += rows.size();
    }
    return out;
  }

  std::vector<TuningRecord> RecordsOf(WorkloadId workload) override {
    db_.EnsureConnected();
    PgRows rows = db_.QueryPrepared(
        "records_of",
        fmt::format("SELECT {} FROM tuning_record r JOIN target t ON t.id = r.target_id "
                    "WHERE r.workload_id = $1 ORDER BY r.id",
                    kRecordColumns),
        PgParams().Add(int64_t{workload}), "reading records");
    std::vector<TuningRecord> out;
    for (int i = 0; i < rows.size(); ++i) {
      if (std::optional<TuningRecord> r = ReadRecordRow(rows, i)) out.push_back(std::move(*r));
    }
    return out;
  }

  void ForEachRecord(const std::function<void(const TuningRecord&)>& fn) override {
    db_.EnsureConnected();
    // Pages by id rather than one result or a cursor: memory stays flat for millions of rows,
    // and no transaction stays open while `fn` works (it may write to another database).
    for (int64_t after = 0;;) {
      PgRows rows = db_.QueryPrepared(
          "record_page",
          fmt::format("SELECT {} FROM tuning_record r JOIN target t ON t.id = r.target_id "
                      "WHERE r.id > $1 ORDER BY r.id LIMIT $2",
                      kRecordColumns),
          PgParams().Add(after).Add(kRowsPerPage), "reading records");
      for (int i = 0; i < rows.size(); ++i) {
        if (std::optional<TuningRecord> r = ReadRecordRow(rows, i)) fn(*r);
      }
      if (rows.size() < kRowsPerPage) return;
      after = rows.Int(rows.size() - 1, 0);
    }
  }

  std::vector<RecordGroupStats> Stats() override {
    db_.EnsureConnected();
    // COLLATE "C": targets ordered by bytes, as in the other backends, whatever the database's
    // locale.
    PgRows rows = db_.QueryPrepared(
        "stats",
        "SELECT r.workload_id, t.key, count(*), count(*) FILTER (WHERE r.status = 'ok'), "
        "min(r.median_secs) FILTER (WHERE r.status = 'ok') "
        "FROM tuning_record r JOIN target t ON t.id = r.target_id "
        "GROUP BY r.workload_id, t.key ORDER BY r.workload_id, t.key COLLATE \"C\"",
        {}, "summarizing records");
    std::vector<RecordGroupStats> out;
    for (int i = 0; i < rows.size(); ++i) {
      RecordGroupStats s;
      s.workload = rows.Int(i, 0);
      s.target = rows.Text(i, 1);
      s.num_records = static_cast<size_t>(rows.Int(i, 2));
      s.num_ok = static_cast<size_t>(rows.Int(i, 3));
      if (!rows.IsNull(i, 4)) s.best_median_secs = rows.Double(i, 4);
      out.push_back(std::move(s));
    }
    return out;
  }

  size_t Size() override {
    db_.EnsureConnected();
    PgRows rows =
        db_.QueryPrepared("count", "SELECT count(*) FROM tuning_record", {}, "counting records");
    return static_cast<size_t>(rows.Int(0, 0));
  }

  size_t Prune(size_t keep, const std::function<bool(const TuningRecord&)>& also_keep) override {
    db_.EnsureConnected();
    // The records kept are chosen by reading them, best first: a row that cannot be used is
    // never kept, however fast it claims to be, and goes with the rest after its warning. The
    // table is locked against writers meanwhile, so that a record another tuner commits during
    // the prune is never removed unread. The ranking reads three numbers a row; whole rows are
    // read a page at a time, only until each group has `keep` usable ones (all of them when
    // `also_keep` is given).
    PgTransaction tx(db_);
    db_.Exec("LOCK TABLE tuning_record IN SHARE ROW EXCLUSIVE MODE", "locking the records");
    PgRows ranked = db_.Query(
        "SELECT id, workload_id, target_id FROM tuning_record WHERE status = 'ok' "
        "ORDER BY workload_id, target_id, median_secs, id",
        PgParams(), "ranking the records");
    constexpr int kPage = 256;
    std::string keep_ids;
    const int n = ranked.size();
    for (int begin = 0; begin < n;) {
      int end = begin;
      while (end < n && ranked.Int(end, 1) == ranked.Int(begin, 1) &&
             ranked.Int(end, 2) == ranked.Int(begin, 2)) {
        ++end;
      }
      size_t kept = 0;
      for (int page = begin; page < end && (kept < keep || also_keep); page += kPage) {
        std::string ids;
        for (int i = page; i < std::min(end, page + kPage); ++i) {
          ids += (ids.empty() ? "" : ",") + std::to_string(ranked.Int(i, 0));
        }
        PgRows rows = db_.Query(
            fmt::format("SELECT {} FROM tuning_record r JOIN target t ON t.id = r.target_id "
                        "WHERE r.id = ANY($1::bigint[]) ORDER BY r.median_secs, r.id",
                        kRecordColumns),
            PgParams().Add(std::string_view("{" + ids + "}")), "reading the best records");
        for (int i = 0; i < rows.size() && (kept < keep || also_keep); ++i) {
          std::optional<TuningRecord> r = ReadRecordRow(rows, i);
          if (r && (kept < keep || also_keep(*r))) {
            keep_ids += (keep_ids.empty() ? "" : ",") + std::to_string(rows.Int(i, 0));
            ++kept;
          }
        }
      }
      begin = end;
    }
    PgRows done = db_.Query("DELETE FROM tuning_record WHERE NOT (id = ANY($1::bigint[]))",
                            PgParams().Add(std::string_view("{" + keep_ids + "}")),
                            "pruning records");
    tx.Commit();
    return static_cast<size_t>(done.AffectedRows());
  }

 private:
  std::optional<WorkloadEntry> FindEqual(const WorkloadEntry& entry) {
    PgRows rows = db_.QueryPrepared(
        "find_workloads",
        "SELECT id, shash, name, ir, created_at FROM workload WHERE shash = $1 ORDER BY id",
        PgParams().Add(std::string_view(entry.shash)), "looking up a workload");
    for (int i = 0; i < rows.size(); ++i) {
      std::optional<WorkloadEntry> stored = ReadWorkloadRow(rows, i);
      if (stored && StructuralEqual(stored->func, entry.func)) return stored;
    }
    return std::nullopt;
  }

  /// A workload row (id, shash, name, ir, created_at); nullopt with a warning when its text does
  /// not parse. Parsed functions are cached by id (rows never change).
  std::optional<WorkloadEntry> ReadWorkloadRow(const PgRows& rows, int i) {
    WorkloadEntry e;
    e.id = rows.Int(i, 0);
    e.shash = rows.Text(i, 1);
    e.name = rows.Text(i, 2);
    e.text = rows.Text(i, 3);
    e.created_at = rows.Double(i, 4);
    std::string problem;
    if (!parsed_.Resolve(e, &problem)) {
      warn_(fmt::format("{}: workload {}: {}; skipped", Describe(), e.id, problem));
      return std::nullopt;
    }
    return e;
  }

  /// A row of kRecordColumns; nullopt with a warning when it cannot be used.
  std::optional<TuningRecord> ReadRecordRow(const PgRows& rows, int i) {
    int64_t id = rows.Int(i, 0);
    auto skip = [&](const std::string& problem) {
      // Once per row and object: a search loop asks for the same top-k again and again.
      if (warned_records_.insert(id).second) {
        warn_(fmt::format("{}: record {}: {}; skipped", Describe(), id, problem));
      }
      return std::nullopt;
    };
    TuningRecord r;
    r.workload = rows.Int(i, 1);
    r.target = rows.Text(i, 2);
    std::string problem;
    std::optional<nlohmann::json> trace = ParseTraceText(rows.Text(i, 3), &problem);
    if (!trace) return skip(problem);
    r.trace = std::move(*trace);
    std::string_view status = rows.Text(i, 4);
    std::optional<RecordStatus> parsed_status = ParseRecordStatus(status);
    if (!parsed_status) return skip(fmt::format("unknown status '{}'", status));
    r.status = *parsed_status;
    std::optional<std::vector<double>> run_secs = ParseRunSecsText(rows.Text(i, 5), &problem);
    if (!run_secs) return skip(problem);
    r.run_secs = std::move(*run_secs);
    if (!rows.IsNull(i, 6)) r.median_secs = rows.Double(i, 6);
    r.error = rows.Text(i, 7);
    r.device = rows.Text(i, 8);
    r.program_version = rows.Text(i, 9);
    r.created_at = rows.Double(i, 10);
    if (std::optional<std::string> p = RecordProblem(r)) return skip(*p);
    return r;
  }

  /// UserError naming the first record whose workload does not exist. Workloads are never
  /// deleted, so ids seen once are not asked for again.
  void CheckWorkloadsExist(const std::vector<CheckedRecord>& checked) {
    std::string unknown;
    for (const CheckedRecord& c : checked) {
      if (known_workloads_.count(c.record.workload)) continue;
      unknown += unknown.empty() ? "{" : ",";
      unknown += std::to_string(c.record.workload);
    }
    if (unknown.empty()) return;
    PgRows found =
        db_.QueryPrepared("has_workloads", "SELECT id FROM workload WHERE id = ANY($1::bigint[])",
                          PgParams().Add(std::string_view(unknown + "}")), "looking up workloads");
    for (int i = 0; i < found.size(); ++i) known_workloads_.insert(found.Int(i, 0));
    for (size_t i = 0; i < checked.size(); ++i) {
      if (!known_workloads_.count(checked[i].record.workload)) {
        TT_USER_ERROR("{}: record {}: no workload has id {}", Describe(), i,
                      checked[i].record.workload);
      }
    }
  }

  std::optional<int64_t> FindTargetId(const std::string& target) {
    auto it = target_ids_.find(target);
    if (it != target_ids_.end()) return it->second;
    PgRows rows =
        db_.QueryPrepared("find_target", "SELECT id FROM target WHERE key = $1",
                          PgParams().Add(std::string_view(target)), "looking up a target");
    if (rows.size() == 0) return std::nullopt;
    int64_t id = rows.Int(0, 0);
    target_ids_.emplace(target, id);
    return id;
  }

  /// The id of `target`, committing it first when it is new (outside any transaction).
  int64_t TargetId(const std::string& target) {
    if (std::optional<int64_t> id = FindTargetId(target)) return *id;
    db_.QueryPrepared("insert_target",
                      "INSERT INTO target (key) VALUES ($1) ON CONFLICT (key) DO NOTHING",
                      PgParams().Add(std::string_view(target)), "committing a target");
    // Found now: inserted here, or by a concurrent writer that committed first (our insert
    // waited for it), and each statement sees what was committed before it started.
    std::optional<int64_t> id = FindTargetId(target);
    TT_ICHECK(id.has_value(), "target '{}' not found after inserting it", target);
    return *id;
  }

  /// Inserts the records in one statement per kRowsPerInsert, in one transaction when there are
  /// several; returns how many were new.
  size_t InsertRecords(const std::vector<CheckedRecord>& checked,
                       const std::vector<int64_t>& target_ids) {
    const size_t n = checked.size();
    // Ids in batch order (commit order, which top-k ties and RecordsOf follow), while rows go in
    // in key order: every writer takes the unique-index locks in the same order.
    PgRows ids =
        db_.QueryPrepared("record_ids",
                          "SELECT nextval(pg_get_serial_sequence('tuning_record', 'id')) AS id "
                          "FROM generate_series(1, $1::int) ORDER BY id",
                          PgParams().Add(static_cast<int64_t>(n)), "allocating record ids");
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::tie(checked[a].record.workload, target_ids[a], checked[a].trace_hash) <
             std::tie(checked[b].record.workload, target_ids[b], checked[b].trace_hash);
    });
    std::optional<PgTransaction> tx;
    if (n > kRowsPerInsert) tx.emplace(db_);
    size_t added = 0;
    for (size_t begin = 0; begin < n; begin += kRowsPerInsert) {
      size_t end = std::min(n, begin + kRowsPerInsert);
      std::string sql =
          "INSERT INTO tuning_record (id, workload_id, target_id, trace_hash, trace, status, "
          "run_secs, median_secs, error, device, program_version, created_at) VALUES ";
      PgParams params;
      for (size_t j = begin; j < end; ++j) {
        size_t i = order[j];
        const TuningRecord& r = checked[i].record;
        int first = static_cast<int>(j - begin) * kRecordParams + 1;
        sql += j == begin ? "(" : ", (";
        for (int p = 0; p < kRecordParams; ++p) {
          sql += p ? ", $" : "$";
          sql += std::to_string(first + p);
        }
        sql += ")";
        params.Add(ids.Int(static_cast<int>(i), 0))
            .Add(int64_t{r.workload})
            .Add(target_ids[i])
            .Add(std::string_view(checked[i].trace_hash))
            .Add(std::string_view(checked[i].trace_text))
            .Add(RecordStatusName(r.status))
            .Add(std::string_view(RunSecsText(r.run_secs)))
            .Add(r.median_secs)
            .Add(std::string_view(ValidUtf8(r.error)))
            .Add(std::string_view(ValidUtf8(r.device)))
            .Add(std::string_view(ValidUtf8(r.program_version)))
            .Add(r.created_at);
      }
      sql += " ON CONFLICT (workload_id, target_id, trace_hash) DO NOTHING";
      added += static_cast<size_t>(
          db_.Query(sql, params, fmt::format("committing {} records", n)).AffectedRows());
    }
    if (tx) tx->Commit();
    return added;
  }

  /// AddRunSecs in one transaction: each row is locked (FOR UPDATE) before its samples are read,
  /// in key order as InsertRecords does, so that two writers neither lose samples nor deadlock.
  // `write()` (one transaction), tried again while it loses a deadlock or serialization check, up
  // to kMaxCommitAttempts times.
  template <typename Write>
  static size_t Retried(const Write& write) {
    for (int attempt = 1;; ++attempt) {
      try {
        return write();
      } catch (const PostgresError& e) {
        if (!e.retryable() || attempt == kMaxCommitAttempts) throw;
      }
    }
  }

  // The stored ok record of `c`, its row locked for the transaction: (id, run_secs); UserError
  // naming record `index` of a batch when there is none.
  PgRows LockOkRecord(const CheckedRecord& c, size_t index) {
    const TuningRecord& r = c.record;
    std::optional<int64_t> target_id = FindTargetId(r.target);
    if (target_id) {
      PgRows rows = db_.QueryPrepared(
          "lock_ok_record",
          "SELECT id, run_secs FROM tuning_record WHERE workload_id = $1 AND target_id = $2 "
          "AND trace_hash = $3 AND status = 'ok' FOR UPDATE",
          PgParams().Add(int64_t{r.workload}).Add(*target_id).Add(std::string_view(c.trace_hash)),
          "reading a stored ok record");
      if (rows.size() > 0) return rows;
    }
    TT_USER_ERROR("{}: record {}: workload {} has no ok record of this trace on '{}'", Describe(),
                  index, r.workload, r.target);
  }

  // The order in which a batch's rows are locked: the same in every writer, so that two never
  // wait for each other.
  static std::vector<size_t> LockOrder(const std::vector<CheckedRecord>& checked) {
    std::vector<size_t> order(checked.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::tie(checked[a].record.workload, checked[a].record.target, checked[a].trace_hash) <
             std::tie(checked[b].record.workload, checked[b].record.target, checked[b].trace_hash);
    });
    return order;
  }

  size_t UpdateFailed(const std::vector<CheckedRecord>& checked) {
    PgTransaction tx(db_);
    std::map<int64_t, const TuningRecord*> failed;  // row id -> its failure
    for (size_t i : LockOrder(checked)) {
      failed[LockOkRecord(checked[i], i).Int(0, 0)] = &checked[i].record;
    }
    for (const auto& [id, r] : failed) {
      db_.QueryPrepared("mark_failed",
                        "UPDATE tuning_record SET status = $2, error = $3, run_secs = '[]', "
                        "median_secs = NULL WHERE id = $1",
                        PgParams()
                            .Add(int64_t{id})
                            .Add(std::string_view(RecordStatusName(r->status)))
                            .Add(std::string_view(r->error)),
                        "marking a record failed");
    }
    tx.Commit();
    return failed.size();
  }

  size_t UpdateRunSecs(const std::vector<CheckedRecord>& checked) {
    const std::vector<size_t> order = LockOrder(checked);
    PgTransaction tx(db_);
    std::map<int64_t, TuningRecord> updated;  // row id -> run_secs and median after
    for (size_t i : order) {
      PgRows row = LockOkRecord(checked[i], i);
      AddToRow(updated, row.Int(0, 0), row.Text(0, 1), checked[i].record.run_secs, i, Describe());
    }
    for (const auto& [id, r] : updated) {
      db_.QueryPrepared("update_run_secs",
                        "UPDATE tuning_record SET run_secs = $2, median_secs = $3 WHERE id = $1",
                        PgParams()
                            .Add(int64_t{id})
                            .Add(std::string_view(RunSecsText(r.run_secs)))
                            .Add(r.median_secs),
                        "adding run times to a record");
    }
    tx.Commit();
    return updated.size();
  }

  WarningHandler warn_;
  PostgresConnection db_;
  ParsedWorkloads parsed_;
  std::unordered_set<WorkloadId> known_workloads_;
  std::unordered_set<int64_t> warned_records_;  // ids of unreadable rows already reported
  std::map<std::string, int64_t> target_ids_;
};

}  // namespace
}  // namespace database_internal

std::unique_ptr<Database> OpenPostgresDatabase(const std::string& url, const OpenOptions& options) {
  return std::make_unique<database_internal::PostgresDatabase>(url, options);
}

}  // namespace tirtune
