// The graph validator (see validate.h for the rules, numbered as here).
#include "tirtune/graph/validate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tirtune/graph/op_registry.h"

namespace tirtune::graph {
namespace {

[[noreturn]] void Fail(const std::string& node, const std::string& what) {
  throw GraphError(fmt::format("{}: {}", node, what));
}

bool IsValue(const Graph& graph, ValueId id) {
  return id >= 0 && id < static_cast<ValueId>(graph.values().size());
}

// "%y = conv2d(%x, %w)", the way messages name a call.
std::string NodeName(const Graph& graph, const Call& call) {
  std::vector<std::string> args;
  for (ValueId a : call.args) {
    args.push_back(IsValue(graph, a) ? "%" + graph.value(a).name : fmt::format("%<{}>", a));
  }
  std::string callee = call.kind == CallKind::kPrimFunc && call.func.defined()
                           ? "call_tir @" + call.func->name
                           : call.op;
  std::string out = IsValue(graph, call.output) ? "%" + graph.value(call.output).name : "%?";
  return fmt::format("{} = {}({})", out, callee, fmt::join(args, ", "));
}

std::vector<int64_t> ConstShape(const Buffer& buffer) {
  std::vector<int64_t> shape;
  for (const Expr& e : buffer->shape) {
    const int64_t* v = AsConstInt(e);
    shape.push_back(v ? *v : -1);
  }
  return shape;
}

// Rule 3.
void CheckOpCall(const Graph& graph, const Call& call, const std::string& node) {
  const OpDef* op = FindOp(call.op);
  if (!op) Fail(node, fmt::format("unknown operator '{}'", call.op));
  std::vector<TensorType> arg_types;
  for (ValueId a : call.args) arg_types.push_back(graph.value(a).type);
  TensorType inferred;
  try {
    inferred = InferType(*op, arg_types, call.attrs);
  } catch (const UserError& e) {
    Fail(node, e.what());
  }
  const TensorType& declared = graph.value(call.output).type;
  if (inferred != declared) {
    Fail(node, fmt::format("shape mismatch: the result is declared {} but {} gives {}",
                           declared.str(), call.op, inferred.str()));
  }
}

// Rule 4.
void CheckPrimFuncCall(const Graph& graph, const Call& call, const std::string& node) {
  if (!call.func.defined()) Fail(node, "a PrimFunc call without a function");
  const auto& params = call.func->params;
  if (params.size() != call.args.size() + 1) {
    Fail(node, fmt::format("@{} has {} parameters, the call passes {} arguments and the output",
                           call.func->name, params.size(), call.args.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    ValueId id = i < call.args.size() ? call.args[i] : call.output;
    const TensorType& type = graph.value(id).type;
    TensorType param{ConstShape(params[i]), params[i]->dtype};
    if (param != type) {
      Fail(node,
           fmt::format("shape mismatch: parameter {} of @{} is {} but %{} is {}", params[i]->name,
                       call.func->name, param.str(), graph.value(id).name, type.str()));
    }
  }
}

// Rule 5.
void CheckGroupCall(const Graph& graph, const Call& call, const std::string& node) {
  if (!call.body) Fail(node, "a group call without a body");
  const Graph& body = *call.body;
  try {
    ValidateGraph(body);
  } catch (const GraphError& e) {
    Fail(node, fmt::format("in the group's body: {}", e.what()));
  }
  std::vector<ValueId> inputs = body.Inputs();
  if (inputs.size() != call.args.size()) {
    Fail(node, fmt::format("the group takes {} inputs, the call passes {}", inputs.size(),
                           call.args.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (body.value(inputs[i]).type != graph.value(call.args[i]).type) {
      Fail(node, fmt::format("shape mismatch: group input %{} is {} but %{} is {}",
                             body.value(inputs[i]).name, body.value(inputs[i]).type.str(),
                             graph.value(call.args[i]).name, graph.value(call.args[i]).type.str()));
    }
  }
  if (body.outputs().size() != 1 ||
      body.value(body.outputs()[0]).type != graph.value(call.output).type) {
    Fail(node, "the group must return one value of the call's type");
  }
}

}  // namespace

std::vector<int> TopologicalOrder(const Graph& graph) {
  const auto& calls = graph.calls();
  int n = static_cast<int>(calls.size());
  // Kahn's algorithm over call-to-call edges, taking the lowest ready index first so that a graph
  // already in order keeps it.
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> users(n);
  for (int i = 0; i < n; ++i) {
    for (ValueId a : calls[i].args) {
      const Value& v = graph.value(a);
      if (v.kind == ValueKind::kCall) {
        ++pending[i];
        users[v.producer].push_back(i);
      }
    }
  }
  std::vector<int> order;
  std::vector<bool> done(n, false);
  for (size_t step = 0; step < calls.size(); ++step) {
    int next = -1;
    for (int i = 0; i < n && next < 0; ++i) {
      if (!done[i] && pending[i] == 0) next = i;
    }
    if (next < 0) {
      std::vector<std::string> stuck;
      for (int i = 0; i < n; ++i) {
        if (!done[i]) stuck.push_back(NodeName(graph, calls[i]));
      }
      throw GraphError(fmt::format("the graph has a cycle through: {}", fmt::join(stuck, "; ")));
    }
    done[next] = true;
    order.push_back(next);
    for (int u : users[next]) --pending[u];
  }
  return order;
}

void ValidateGraph(const Graph& graph) {
  const auto& values = graph.values();
  // Rule 6 (constants) and the value side of rule 1.
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& v = values[i];
    if (v.kind == ValueKind::kConstant) {
      if (!v.data.defined() || v.data.shape() != v.type.shape || v.data.dtype() != v.type.dtype) {
        Fail("%" + v.name, "the constant's data does not have its type " + v.type.str());
      }
    }
    if (v.kind == ValueKind::kCall) {
      if (v.producer < 0 || v.producer >= static_cast<int>(graph.calls().size()) ||
          graph.call(v.producer).output != static_cast<ValueId>(i)) {
        Fail("%" + v.name, "the value names no call that produces it");
      }
    }
  }
  // Rule 1.
  for (const Call& call : graph.calls()) {
    std::string node = NodeName(graph, call);
    if (!IsValue(graph, call.output)) Fail(node, "the result is not a value of the graph");
    for (ValueId a : call.args) {
      if (!IsValue(graph, a)) Fail(node, fmt::format("argument {} is not a value of the graph", a));
    }
  }
  if (graph.outputs().empty()) throw GraphError("the graph has no output");
  for (ValueId o : graph.outputs()) {
    if (!IsValue(graph, o)) throw GraphError(fmt::format("output {} is not a value", o));
  }
  // Rule 2.
  TopologicalOrder(graph);
  for (int i = 0; i < static_cast<int>(graph.calls().size()); ++i) {
    for (ValueId a : graph.call(i).args) {
      const Value& v = graph.value(a);
      if (v.kind == ValueKind::kCall && v.producer > i) {
        Fail(NodeName(graph, graph.call(i)),
             fmt::format("argument %{} is used before the call that defines it", v.name));
      }
    }
  }
  // Rules 3-5.
  for (const Call& call : graph.calls()) {
    std::string node = NodeName(graph, call);
    switch (call.kind) {
      case CallKind::kOp:
        CheckOpCall(graph, call, node);
        break;
      case CallKind::kPrimFunc:
        CheckPrimFuncCall(graph, call, node);
        break;
      case CallKind::kGraph:
        CheckGroupCall(graph, call, node);
        break;
    }
  }
}

}  // namespace tirtune::graph
