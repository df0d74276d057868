// SimplifyInference: an inference batch_norm whose statistics are constants becomes a multiply
// and an add by per-channel constants computed here, so that no square root of (possibly
// random) variances is left in the tuned functions and the epilogue of a convolution is two
// broadcast ops.
//
//   %bn = batch_norm(%conv, %gamma, %beta, %mean, %var) {epsilon=1e-05}
// becomes
//   %bn_scaled = multiply(%conv, %bn_scale)     # scale = gamma / sqrt(var + epsilon)
//   %bn = add(%bn_scaled, %bn_shift)            # shift = beta - mean * scale
#include <cmath>
#include <map>
#include <string>

#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {

Graph SimplifyInference(const Graph& graph) {
  ValidateGraph(graph);
  Graph out;
  // A name used neither in the input graph nor in what has been built so far.
  auto fresh = [&](const std::string& base) {
    std::string name = base;
    for (int i = 1; graph.Find(name) >= 0 || out.Find(name) >= 0; ++i) {
      name = base + "_" + std::to_string(i);
    }
    return name;
  };
  std::map<ValueId, ValueId> remap;
  for (ValueId id = 0; id < static_cast<ValueId>(graph.values().size()); ++id) {
    const Value& v = graph.value(id);
    if (v.kind == ValueKind::kInput) remap[id] = out.AddInput(v.name, v.type);
    if (v.kind == ValueKind::kConstant) remap[id] = out.AddConstant(v.name, v.data);
  }
  for (const Call& original : graph.calls()) {
    Call call = original;
    for (ValueId& a : call.args) a = remap.at(a);
    const Value& result = graph.value(call.output);
    bool constant_statistics = call.kind == CallKind::kOp && call.op == "batch_norm";
    for (size_t i = 1; i < call.args.size() && constant_statistics; ++i) {
      const Value& stat = out.value(call.args[i]);
      constant_statistics = stat.kind == ValueKind::kConstant && stat.type.dtype.is_float();
    }
    if (!constant_statistics) {
      remap[call.output] = out.AddCall(result.name, call, result.type);
      continue;
    }
    double epsilon = CheckAttrs(*FindOp("batch_norm"), call.attrs).GetFloat("epsilon");
    const NDArray& gamma = out.value(call.args[1]).data;
    const NDArray& beta = out.value(call.args[2]).data;
    const NDArray& mean = out.value(call.args[3]).data;
    const NDArray& var = out.value(call.args[4]).data;
    NDArray scale = NDArray::Empty(gamma.shape(), gamma.dtype());
    NDArray shift = NDArray::Empty(gamma.shape(), gamma.dtype());
    for (int64_t c = 0; c < gamma.size(); ++c) {
      double s = gamma.GetDouble(c) / std::sqrt(var.GetDouble(c) + epsilon);
      scale.SetDouble(c, s);
      shift.SetDouble(c, beta.GetDouble(c) - mean.GetDouble(c) * s);
    }
    ValueId scale_id = out.AddConstant(fresh(result.name + "_scale"), scale);
    ValueId shift_id = out.AddConstant(fresh(result.name + "_shift"), shift);
    ValueId scaled =
        AddOpCall(&out, fresh(result.name + "_scaled"), "multiply", {call.args[0], scale_id});
    remap[call.output] = AddOpCall(&out, result.name, "add", {scaled, shift_id});
  }
  for (ValueId o : graph.outputs()) out.AddOutput(remap.at(o));
  return out;
}

}  // namespace tirtune::graph
