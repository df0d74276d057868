// What the database fuzzers ask of a database that opened: every reader, as `tirtune db` and
// the tuner use them. None may throw; unusable rows are skipped with a warning.
#pragma once

#include <cstddef>

#include "tirtune/database/database.h"

namespace tirtune::testing {

inline void ReadEverything(Database& db) {
  db.CheckIntegrity();
  db.Stats();
  db.Size();
  size_t records = 0;
  db.ForEachRecord([&](const TuningRecord&) { ++records; });
  for (const WorkloadEntry& w : db.Workloads()) {
    for (const TuningRecord& r : db.RecordsOf(w.id)) db.TopK(w.id, r.target, 3);
  }
}

}  // namespace tirtune::testing
