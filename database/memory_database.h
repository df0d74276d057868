// MemoryDatabase: every workload and record in memory, indexed for top-k. It is the in-memory
// backend and, through its Persist hooks, the index behind the JSON-lines backend.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "record_check.h"
#include "tirtune/database/database.h"

namespace tirtune::database_internal {

class MemoryDatabase : public Database {
 public:
  explicit MemoryDatabase(const OpenOptions& options);

  WorkloadEntry CommitWorkload(const PrimFunc& func) override;
  std::optional<WorkloadEntry> FindWorkload(const PrimFunc& func) override;
  std::vector<WorkloadEntry> Workloads() override;
  size_t CommitRecords(const std::vector<TuningRecord>& records) override;
  size_t AddRunSecs(const std::vector<TuningRecord>& records) override;
  size_t MarkFailed(const std::vector<TuningRecord>& records) override;
  std::vector<TuningRecord> TopK(WorkloadId workload, std::string_view target, size_t k) override;
  std::vector<TuningRecord> RecordsOf(WorkloadId workload) override;
  void ForEachRecord(const std::function<void(const TuningRecord&)>& fn) override;
  std::vector<RecordGroupStats> Stats() override;
  size_t Size() override { return records_.size(); }
  size_t Prune(size_t keep, const std::function<bool(const TuningRecord&)>& also_keep) override;
  std::string Describe() const override { return "in-memory database"; }

 protected:
  // Hooks for a backend that persists what this index holds. Each is called with what is about
  // to change, before the index changes: when it throws, the index stays as it was.
  virtual void PersistWorkload(const WorkloadEntry& entry) {}
  virtual void PersistRecords(const std::vector<const CheckedRecord*>& records) {}
  /// After a prune, an AddRunSecs or a MarkFailed: everything that is left, in order.
  virtual void PersistRewrite(const std::vector<const WorkloadEntry*>& workloads,
                              const std::vector<const TuningRecord*>& records) {}

  /// Adds a workload read from storage, keeping its id when that is free. Returns the id of the
  /// stored workload it ended up as (an equal one already there, or itself).
  WorkloadId AddLoadedWorkload(WorkloadEntry entry);
  /// Adds a record read from storage that RecordProblem accepts; false for a duplicate.
  bool AddLoadedRecord(const TuningRecord& record);
  bool HasWorkload(WorkloadId id) const { return workloads_.count(id) != 0; }

  const WarningHandler& warn() const { return warn_; }

 private:
  struct StoredRecord {
    TuningRecord record;
    std::string key;  // workload, target and trace hash
  };
  /// Records of one (workload, target): ok ones ordered by (median, commit order).
  struct Group {
    std::set<std::pair<double, size_t>> ok;
    size_t num_records = 0;
  };
  using GroupKey = std::pair<WorkloadId, std::string>;

  std::optional<WorkloadId> FindEqual(const WorkloadEntry& entry) const;
  void Insert(TuningRecord record, std::string key);
  /// The index of the stored ok record with `c`'s workload, target and trace; UserError naming
  /// record `index` of a batch when there is none.
  size_t FindOk(const CheckedRecord& c, size_t index);
  /// Stores new versions of records (index into records_ -> the record), persisted first.
  void Replace(std::map<size_t, TuningRecord> updated);
  static std::string RecordKey(const TuningRecord& r, const std::string& trace_hash);

  WarningHandler warn_;
  std::map<WorkloadId, WorkloadEntry> workloads_;
  std::unordered_multimap<std::string, WorkloadId> workloads_by_hash_;
  WorkloadId next_workload_id_ = 1;
  std::vector<StoredRecord> records_;
  std::unordered_map<std::string, size_t> record_keys_;  // key -> index into records_
  std::map<GroupKey, Group> groups_;
};

}  // namespace tirtune::database_internal
