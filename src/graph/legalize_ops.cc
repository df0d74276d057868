// LegalizeOps: each operator call becomes a call of the PrimFunc its operator builds.
//
//   %y = conv2d(%x, %w) {pad=1} : float32[1, 8, 8, 4]
// becomes
//   %y = call_tir @conv2d(%x, %w) : float32[1, 8, 8, 4]
// where @conv2d(data, weight, conv2d_nhwc) is CreatePrimFunc of the te compute. The operators
// inside a group (a composite of FuseOpsByPattern) are legalized in place.
#include <memory>

#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {

Graph LegalizeOps(const Graph& graph) {
  ValidateGraph(graph);
  Graph out = graph;
  for (int i = 0; i < static_cast<int>(out.calls().size()); ++i) {
    Call& call = out.mutable_call(i);
    if (call.kind == CallKind::kGraph) {  // a composite of FuseOpsByPattern: its operators
      call.body = std::make_shared<const Graph>(LegalizeOps(*call.body));
      continue;
    }
    if (call.kind != CallKind::kOp) continue;
    const OpDef* op = FindOp(call.op);
    std::vector<TensorType> arg_types;
    for (ValueId a : call.args) arg_types.push_back(graph.value(a).type);
    call.func = LegalizeOp(*op, arg_types, call.attrs, call.op);
    call.kind = CallKind::kPrimFunc;
    call.pattern = op->pattern;  // until AnnotateOpPattern computes it
  }
  return out;
}

}  // namespace tirtune::graph
