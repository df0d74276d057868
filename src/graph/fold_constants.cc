// FoldConstants: a call whose arguments are all constants is evaluated now, by the interpreter,
// and its value becomes a constant.
//
//   %wt = transpose(%w) {perm=[2, 3, 1, 0]}     # %w a constant
//   %y = conv2d(%x, %wt)
// becomes
//   %y = conv2d(%x, %wt)                         # %wt now a constant holding the transposed %w
#include <map>

#include "tirtune/graph/executor.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {

Graph FoldConstants(const Graph& graph) {
  ValidateGraph(graph);
  Graph out;
  std::map<ValueId, ValueId> remap;
  for (ValueId id = 0; id < static_cast<ValueId>(graph.values().size()); ++id) {
    const Value& v = graph.value(id);
    if (v.kind == ValueKind::kInput) remap[id] = out.AddInput(v.name, v.type);
    if (v.kind == ValueKind::kConstant) remap[id] = out.AddConstant(v.name, v.data);
  }
  for (const Call& original : graph.calls()) {
    Call call = original;
    bool all_constant = call.kind != CallKind::kGraph;
    for (ValueId& a : call.args) {
      a = remap.at(a);
      all_constant = all_constant && out.value(a).kind == ValueKind::kConstant;
    }
    const Value& result = graph.value(call.output);
    if (all_constant) {
      std::vector<NDArray> args;
      for (ValueId a : call.args) args.push_back(out.value(a).data);
      remap[call.output] = out.AddConstant(result.name, RunCall(graph, original, args));
    } else {
      remap[call.output] = out.AddCall(result.name, call, result.type);
    }
  }
  for (ValueId o : graph.outputs()) out.AddOutput(remap.at(o));
  return out;
}

}  // namespace tirtune::graph
