// Workloads as stored: the entry for a function about to be committed, and the function read
// back from stored text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tirtune/database/database.h"

namespace tirtune::database_internal {

/// An entry (id left at -1) for `func`: its hash, name, printed text and the current time.
WorkloadEntry MakeWorkloadEntry(const PrimFunc& func);

/// Parses stored workload text; on failure returns nullopt and sets `problem`.
std::optional<PrimFunc> ParseWorkloadText(std::string_view text, std::string* problem);

}  // namespace tirtune::database_internal
