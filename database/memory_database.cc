// The in-memory backend.
#include "memory_database.h"

#include "tirtune/ir/structural_equal.h"
#include "workload_text.h"

namespace tirtune {

using database_internal::MemoryDatabase;

std::unique_ptr<Database> MakeMemoryDatabase(const OpenOptions& options) {
  return std::make_unique<MemoryDatabase>(options);
}

namespace database_internal {

MemoryDatabase::MemoryDatabase(const OpenOptions& options)
    : warn_(WarningsOrStderr(options.on_warning)) {}

std::optional<WorkloadId> MemoryDatabase::FindEqual(const WorkloadEntry& entry) const {
  auto [begin, end] = workloads_by_hash_.equal_range(entry.shash);
  for (auto it = begin; it != end; ++it) {
    if (StructuralEqual(workloads_.at(it->second).func, entry.func)) return it->second;
  }
  return std::nullopt;
}

std::optional<WorkloadEntry> MemoryDatabase::FindWorkload(const PrimFunc& func) {
  std::optional<WorkloadId> id = FindEqual(MakeWorkloadEntry(func));
  if (!id) return std::nullopt;
  return workloads_.at(*id);
}

WorkloadEntry MemoryDatabase::CommitWorkload(const PrimFunc& func) {
  WorkloadEntry entry = MakeWorkloadEntry(func);
  if (std::optional<WorkloadId> id = FindEqual(entry)) return workloads_.at(*id);
  entry.id = next_workload_id_;
  PersistWorkload(entry);
  ++next_workload_id_;
  workloads_by_hash_.emplace(entry.shash, entry.id);
  return workloads_.emplace(entry.id, std::move(entry)).first->second;
}

WorkloadId MemoryDatabase::AddLoadedWorkload(WorkloadEntry entry) {
  if (std::optional<WorkloadId> id = FindEqual(entry)) return *id;
  if (entry.id < 1 || workloads_.count(entry.id)) entry.id = next_workload_id_;
  next_workload_id_ = std::max(next_workload_id_, entry.id + 1);
  workloads_by_hash_.emplace(entry.shash, entry.id);
  return workloads_.emplace(entry.id, std::move(entry)).first->first;
}

std::vector<WorkloadEntry> MemoryDatabase::Workloads() {
  std::vector<WorkloadEntry> out;
  for (const auto& [id, entry] : workloads_) out.push_back(entry);
  return out;
}

std::string MemoryDatabase::RecordKey(const TuningRecord& r, const std::string& trace_hash) {
  return std::to_string(r.workload) + '\n' + r.target + '\n' + trace_hash;
}

void MemoryDatabase::Insert(TuningRecord record, std::string key) {
  size_t index = records_.size();
  Group& group = groups_[{record.workload, record.target}];
  ++group.num_records;
  if (record.status == RecordStatus::kOk) group.ok.emplace(*record.median_secs, index);
  record_keys_.emplace(key, index);
  records_.push_back({std::move(record), std::move(key)});
}

size_t MemoryDatabase::CommitRecords(const std::vector<TuningRecord>& records) {
  std::vector<CheckedRecord> checked;
  checked.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    checked.push_back(CheckForCommit(records[i], i));
    if (!HasWorkload(checked.back().record.workload)) {
      TT_USER_ERROR("{}: record {}: no workload has id {}", Describe(), i,
                    checked.back().record.workload);
    }
  }
  // New records only, each once even when the batch repeats one.
  std::vector<const CheckedRecord*> fresh;
  std::vector<std::string> keys;
  std::unordered_set<std::string> batch_keys;
  for (const CheckedRecord& c : checked) {
    std::string key = RecordKey(c.record, c.trace_hash);
    if (record_keys_.count(key) || !batch_keys.insert(key).second) continue;
    fresh.push_back(&c);
    keys.push_back(std::move(key));
  }
  if (fresh.empty()) return 0;
  PersistRecords(fresh);
  for (size_t i = 0; i < fresh.size(); ++i) Insert(fresh[i]->record, std::move(keys[i]));
  return fresh.size();
}

size_t MemoryDatabase::FindOk(const CheckedRecord& c, size_t index) {
  auto found = record_keys_.find(RecordKey(c.record, c.trace_hash));
  if (found == record_keys_.end() || records_[found->second].record.status != RecordStatus::kOk) {
    TT_USER_ERROR("{}: record {}: workload {} has no ok record of this trace on '{}'", Describe(),
                  index, c.record.workload, c.record.target);
  }
  return found->second;
}

void MemoryDatabase::Replace(std::map<size_t, TuningRecord> updated) {
  std::vector<const WorkloadEntry*> workloads;
  for (const auto& [id, entry] : workloads_) workloads.push_back(&entry);
  std::vector<const TuningRecord*> after;
  for (size_t i = 0; i < records_.size(); ++i) {
    auto it = updated.find(i);
    after.push_back(it == updated.end() ? &records_[i].record : &it->second);
  }
  PersistRewrite(workloads, after);
  for (auto& [index, record] : updated) {
    Group& group = groups_[{record.workload, record.target}];
    group.ok.erase({*records_[index].record.median_secs, index});
    if (record.status == RecordStatus::kOk) group.ok.emplace(*record.median_secs, index);
    records_[index].record = std::move(record);
  }
}

size_t MemoryDatabase::AddRunSecs(const std::vector<TuningRecord>& records) {
  // Every record is checked and found before anything changes.
  std::map<size_t, TuningRecord> updated;  // index into records_ -> its new version
  std::vector<CheckedRecord> checked = CheckForAddRunSecs(records);
  for (size_t i = 0; i < checked.size(); ++i) {
    const size_t index = FindOk(checked[i], i);
    auto it = updated.try_emplace(index, records_[index].record).first;
    AppendRunSecs(it->second, checked[i].record.run_secs, i);
  }
  const size_t n = updated.size();
  if (n > 0) Replace(std::move(updated));
  return n;
}

size_t MemoryDatabase::MarkFailed(const std::vector<TuningRecord>& records) {
  std::map<size_t, TuningRecord> updated;  // index into records_ -> its failed version
  std::vector<CheckedRecord> checked = CheckForMarkFailed(records);
  for (size_t i = 0; i < checked.size(); ++i) {
    const size_t index = FindOk(checked[i], i);
    TuningRecord& r = updated.try_emplace(index, records_[index].record).first->second;
    r.status = checked[i].record.status;
    r.error = checked[i].record.error;
    r.run_secs.clear();
    r.median_secs.reset();
  }
  const size_t n = updated.size();
  if (n > 0) Replace(std::move(updated));
  return n;
}

bool MemoryDatabase::AddLoadedRecord(const TuningRecord& record) {
  std::string key = RecordKey(record, TraceHash(record.trace.dump()));
  if (record_keys_.count(key)) return false;
  Insert(record, std::move(key));
  return true;
}

std::vector<TuningRecord> MemoryDatabase::TopK(WorkloadId workload, std::string_view target,
                                               size_t k) {
  std::vector<TuningRecord> out;
  auto it = groups_.find({workload, CanonicalTarget(target)});
  if (it == groups_.end()) return out;
  for (const auto& [median, index] : it->second.ok) {
    if (out.size() >= k) break;
    out.push_back(records_[index].record);
  }
  return out;
}

std::vector<TuningRecord> MemoryDatabase::RecordsOf(WorkloadId workload) {
  std::vector<TuningRecord> out;
  for (const StoredRecord& s : records_) {
    if (s.record.workload == workload) out.push_back(s.record);
  }
  return out;
}

void MemoryDatabase::ForEachRecord(const std::function<void(const TuningRecord&)>& fn) {
  for (const StoredRecord& s : records_) fn(s.record);
}

std::vector<RecordGroupStats> MemoryDatabase::Stats() {
  std::vector<RecordGroupStats> out;
  for (const auto& [key, group] : groups_) {
    RecordGroupStats s;
    s.workload = key.first;
    s.target = key.second;
    s.num_records = group.num_records;
    s.num_ok = group.ok.size();
    if (!group.ok.empty()) s.best_median_secs = group.ok.begin()->first;
    out.push_back(std::move(s));
  }
  return out;
}

size_t MemoryDatabase::Prune(size_t keep,
                             const std::function<bool(const TuningRecord&)>& also_keep) {
  std::vector<bool> kept(records_.size(), false);
  for (const auto& [key, group] : groups_) {
    size_t n = 0;
    for (const auto& [median, index] : group.ok) {
      if (n++ < keep) {
        kept[index] = true;
      } else if (!also_keep) {
        break;
      } else {
        kept[index] = also_keep(records_[index].record);
      }
    }
  }
  std::vector<const WorkloadEntry*> workloads;
  for (const auto& [id, entry] : workloads_) workloads.push_back(&entry);
  std::vector<const TuningRecord*> left;
  for (size_t i = 0; i < records_.size(); ++i) {
    if (kept[i]) left.push_back(&records_[i].record);
  }
  size_t removed = records_.size() - left.size();
  if (removed == 0) return 0;
  PersistRewrite(workloads, left);
  std::vector<StoredRecord> old = std::move(records_);
  records_.clear();
  record_keys_.clear();
  groups_.clear();
  for (size_t i = 0; i < old.size(); ++i) {
    if (kept[i]) Insert(std::move(old[i].record), std::move(old[i].key));
  }
  return removed;
}

}  // namespace database_internal
}  // namespace tirtune
