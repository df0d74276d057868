// Replacing groups of calls by calls of nested graphs: shared by FuseOps, FuseOpsByPattern and
// MergeCompositeFunctions.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tirtune/graph/graph.h"

namespace tirtune::graph::detail {

/// The nested graph of the calls `members` (indices in stored order): its inputs are the values
/// the members use from outside, in order of first use, appended to `args`; its output is the
/// last member's value.
std::shared_ptr<const Graph> GroupBody(const Graph& graph, const std::vector<int>& members,
                                       std::vector<ValueId>* args);

/// Rebuilds `graph` with the groups of `group_of` (indexed like graph.calls(); calls with the
/// same id form a group, whose last call must be the only one whose value is used outside it).
/// Each group becomes one call at its last member, made by `make(members)` — a call of kind
/// kGraph whose body and args GroupCalls fills in — or stays as it is when `make` returns
/// nullopt (allowed for groups of one call only).
Graph GroupCalls(const Graph& graph, const std::vector<int>& group_of,
                 const std::function<std::optional<Call>(const std::vector<int>&)>& make);

}  // namespace tirtune::graph::detail
