// AnnotateOpPattern: every PrimFunc call gets the pattern computed from its function, replacing
// the operator's declared one.
#include "tirtune/graph/op_pattern.h"
#include "tirtune/graph/passes.h"

namespace tirtune::graph {

Graph AnnotateOpPattern(const Graph& graph) {
  Graph out = graph;
  for (int i = 0; i < static_cast<int>(out.calls().size()); ++i) {
    Call& call = out.mutable_call(i);
    if (call.kind == CallKind::kPrimFunc) call.pattern = AnalyzeOpPattern(call.func);
  }
  return out;
}

}  // namespace tirtune::graph
