// ExtractTasks: the distinct PrimFuncs of a graph, deduplicated by structural hash (confirmed by
// structural equality), weighted by their number of calls.
#include "tirtune/graph/extract_tasks.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "tirtune/ir/structural_equal.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {

std::vector<Task> ExtractTasks(const Graph& graph) {
  std::vector<Task> tasks;
  std::multimap<uint64_t, size_t> by_hash;
  std::set<std::string> names;
  for (const Call& call : graph.calls()) {
    if (call.kind != CallKind::kPrimFunc) {
      TT_USER_ERROR("ExtractTasks: %{} is not a PrimFunc call (run LegalizeOps and FuseTIR first)",
                    graph.value(call.output).name);
    }
    uint64_t hash = StructuralHash(call.func);
    bool found = false;
    auto [begin, end] = by_hash.equal_range(hash);
    for (auto it = begin; it != end && !found; ++it) {
      Task& task = tasks[it->second];
      if (StructuralEqual(task.func, call.func)) {
        ++task.weight;
        found = true;
      }
    }
    if (found) continue;
    std::string name = call.func->name;
    for (int suffix = 1; names.count(name); ++suffix) {
      name = fmt::format("{}_{}", call.func->name, suffix);
    }
    names.insert(name);
    by_hash.emplace(hash, tasks.size());
    tasks.push_back(Task{name, call.func, 1, StructuralHashHex(call.func)});
  }
  return tasks;
}

}  // namespace tirtune::graph
