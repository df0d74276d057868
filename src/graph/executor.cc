// The reference executor: each call runs on the interpreter in topological order.
#include "tirtune/graph/executor.h"

#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/validate.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {

NDArray RunCall(const Graph& graph, const Call& call, const std::vector<NDArray>& args) {
  const TensorType& type = graph.value(call.output).type;
  switch (call.kind) {
    case CallKind::kGraph:
      return RunGraph(*call.body, args)[0];
    case CallKind::kOp:
    case CallKind::kPrimFunc: {
      PrimFunc func = call.func;
      if (call.kind == CallKind::kOp) {
        std::vector<TensorType> arg_types;
        for (ValueId a : call.args) arg_types.push_back(graph.value(a).type);
        func = LegalizeOp(*FindOp(call.op), arg_types, call.attrs, call.op);
      }
      NDArray out = NDArray::Empty(type.shape, type.dtype);
      std::vector<NDArray> params = args;
      params.push_back(out);
      Interpret(func, params);
      return out;
    }
  }
  TT_UNREACHABLE("call kind");
}

std::vector<NDArray> RunGraph(const Graph& graph, const std::vector<NDArray>& inputs) {
  ValidateGraph(graph);
  std::vector<ValueId> input_ids = graph.Inputs();
  if (inputs.size() != input_ids.size()) {
    TT_USER_ERROR("the graph takes {} inputs, {} given", input_ids.size(), inputs.size());
  }
  std::vector<NDArray> env(graph.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(input_ids[i]);
    if (inputs[i].shape() != v.type.shape || inputs[i].dtype() != v.type.dtype) {
      TT_USER_ERROR("input %{} is {}, the array given is not", v.name, v.type.str());
    }
    env[input_ids[i]] = inputs[i];
  }
  for (size_t i = 0; i < graph.values().size(); ++i) {
    if (graph.values()[i].kind == ValueKind::kConstant) env[i] = graph.values()[i].data;
  }
  for (int index : TopologicalOrder(graph)) {
    const Call& call = graph.call(index);
    std::vector<NDArray> args;
    for (ValueId a : call.args) args.push_back(env[a]);
    env[call.output] = RunCall(graph, call, args);
  }
  std::vector<NDArray> outputs;
  for (ValueId o : graph.outputs()) outputs.push_back(env[o]);
  return outputs;
}

std::vector<NDArray> MakeRandomInputs(const Graph& graph, uint64_t seed) {
  std::vector<NDArray> inputs;
  uint64_t i = 0;
  for (ValueId id : graph.Inputs()) {
    const TensorType& type = graph.value(id).type;
    NDArray a = NDArray::Empty(type.shape, type.dtype);
    RandomRange range = RandomRangeFor(type.dtype);
    a.FillRandom(seed + i++, range.lo, range.hi);
    inputs.push_back(a);
  }
  return inputs;
}

}  // namespace tirtune::graph
