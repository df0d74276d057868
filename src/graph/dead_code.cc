// EliminateDeadCode: keeps the calls and constants some output depends on, and every input (the
// graph's signature).
#include <map>

#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {

Graph EliminateDeadCode(const Graph& graph) {
  ValidateGraph(graph);
  std::vector<bool> live(graph.values().size(), false);
  std::vector<ValueId> work(graph.outputs().begin(), graph.outputs().end());
  while (!work.empty()) {
    ValueId id = work.back();
    work.pop_back();
    if (live[id]) continue;
    live[id] = true;
    const Value& v = graph.value(id);
    if (v.kind == ValueKind::kCall) {
      for (ValueId a : graph.call(v.producer).args) work.push_back(a);
    }
  }
  Graph out;
  std::map<ValueId, ValueId> remap;
  for (ValueId id = 0; id < static_cast<ValueId>(graph.values().size()); ++id) {
    const Value& v = graph.value(id);
    if (v.kind == ValueKind::kInput) remap[id] = out.AddInput(v.name, v.type);
    if (v.kind == ValueKind::kConstant && live[id]) remap[id] = out.AddConstant(v.name, v.data);
  }
  for (const Call& original : graph.calls()) {
    if (!live[original.output]) continue;
    Call call = original;
    for (ValueId& a : call.args) a = remap.at(a);
    const Value& result = graph.value(call.output);
    remap[call.output] = out.AddCall(result.name, call, result.type);
  }
  for (ValueId o : graph.outputs()) out.AddOutput(remap.at(o));
  return out;
}

}  // namespace tirtune::graph
