// Workloads as stored: the entry for a function about to be committed, and the function read
// back from stored text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tirtune/database/database.h"

namespace tirtune::database_internal {

/// An entry (id left at -1) for `func`: its hash, name, printed text and the current time.
WorkloadEntry MakeWorkloadEntry(const PrimFunc& func);

/// Parses stored workload text; on failure returns nullopt and sets `problem`.
std::optional<PrimFunc> ParseWorkloadText(std::string_view text, std::string* problem);

/// The stored workloads a database object has parsed, by id, so that each text is parsed once.
class ParsedWorkloads {
 public:
  void Remember(WorkloadId id, const PrimFunc& func) { by_id_[id] = func; }
  /// Fills `entry.func` from the remembered function or by parsing `entry.text`; false, with the
  /// reason in `problem`, when the text does not parse.
  bool Resolve(WorkloadEntry& entry, std::string* problem) {
    if (auto it = by_id_.find(entry.id); it != by_id_.end()) {
      entry.func = it->second;
      return true;
    }
    std::optional<PrimFunc> func = ParseWorkloadText(entry.text, problem);
    if (!func) return false;
    entry.func = *func;
    by_id_.emplace(entry.id, *func);
    return true;
  }

 private:
  std::unordered_map<WorkloadId, PrimFunc> by_id_;
};

}  // namespace tirtune::database_internal
