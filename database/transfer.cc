// CopyDatabase.
#include "tirtune/database/transfer.h"

#include <algorithm>
#include <map>

namespace tirtune {

CopyStats CopyDatabase(Database& from, Database& to, size_t batch_size) {
  CopyStats stats;
  std::map<WorkloadId, WorkloadId> ids;  // id in `from` -> id in `to`
  for (const WorkloadEntry& w : from.Workloads()) {
    ids[w.id] = to.CommitWorkload(w.func).id;
    ++stats.workloads;
  }
  std::vector<TuningRecord> batch;
  auto flush = [&] {
    stats.records_new += to.CommitRecords(batch);
    batch.clear();
  };
  from.ForEachRecord([&](const TuningRecord& r) {
    auto it = ids.find(r.workload);
    if (it == ids.end()) return;  // its workload was unreadable (`from` warned)
    TuningRecord copy = r;
    copy.workload = it->second;
    batch.push_back(std::move(copy));
    ++stats.records_read;
    if (batch.size() >= std::max<size_t>(batch_size, 1)) flush();
  });
  if (!batch.empty()) flush();
  return stats;
}

}  // namespace tirtune
