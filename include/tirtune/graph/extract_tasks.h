// Task extraction: the distinct PrimFuncs of a fused graph, each with the number of calls that
// use it, as the tuner's list of tasks.
#pragma once

#include <string>
#include <vector>

#include "tirtune/graph/graph.h"

namespace tirtune::graph {

/// One function to tune.
struct Task {
  std::string name;  // the function's name (made unique among the tasks)
  PrimFunc func;
  int weight = 0;            // calls of this function in the graph
  std::string workload_key;  // StructuralHashHex(func): the database's key
};

/// The tasks of a graph in which every call is a PrimFunc call (after LegalizeOps, or FuseTIR),
/// in the order of their first call; structurally equal functions are one task. Throws UserError
/// naming a call that is not a PrimFunc call.
std::vector<Task> ExtractTasks(const Graph& graph);

}  // namespace tirtune::graph
