// The text form of a graph (see printer.h).
#include "tirtune/graph/printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tirtune::graph {
namespace {

std::string ValueRef(const Graph& graph, ValueId id) {
  if (id < 0 || id >= static_cast<ValueId>(graph.values().size())) return fmt::format("%<{}>", id);
  return "%" + graph.value(id).name;
}

void PrintBody(const Graph& graph, int indent, std::string* out) {
  std::string pad(indent, ' ');
  for (const Call& call : graph.calls()) {
    std::vector<std::string> args;
    for (ValueId a : call.args) args.push_back(ValueRef(graph, a));
    std::string callee;
    switch (call.kind) {
      case CallKind::kOp:
        callee = call.op;
        break;
      case CallKind::kPrimFunc:
        callee = "call_tir @" + (call.func.defined() ? call.func->name : std::string("?"));
        break;
      case CallKind::kGraph:
        callee = "@" + call.op;
        break;
    }
    std::string line = fmt::format("{}{} = {}({})", pad, ValueRef(graph, call.output), callee,
                                   fmt::join(args, ", "));
    // Operators and groups print their attributes; a PrimFunc call only a composite's (its
    // operator's are a hint).
    std::vector<std::string> attrs;
    for (const auto& [name, value] : call.attrs.values()) {
      if (call.kind == CallKind::kPrimFunc && name != "Composite" && name != "Codegen") continue;
      attrs.push_back(fmt::format("{}={}", name, AttrValueToString(value)));
    }
    if (!attrs.empty()) line += fmt::format(" {{{}}}", fmt::join(attrs, ", "));
    if (call.output >= 0 && call.output < static_cast<ValueId>(graph.values().size())) {
      line += " : " + graph.value(call.output).type.str();
    }
    if (call.kind != CallKind::kOp) line += fmt::format("  # {}", OpPatternName(call.pattern));
    if (call.kind == CallKind::kGraph && call.body) {
      *out += line + " {\n";
      PrintBody(*call.body, indent + 2, out);
      *out += pad + "}\n";
    } else {
      *out += line + "\n";
    }
  }
  std::vector<std::string> outputs;
  for (ValueId o : graph.outputs()) outputs.push_back(ValueRef(graph, o));
  *out += fmt::format("{}return {}\n", pad, fmt::join(outputs, ", "));
}

}  // namespace

std::string PrintGraph(const Graph& graph) {
  std::vector<std::string> params;
  for (const Value& v : graph.values()) {
    if (v.kind == ValueKind::kInput) params.push_back(fmt::format("%{}: {}", v.name, v.type.str()));
  }
  for (const Value& v : graph.values()) {
    if (v.kind == ValueKind::kConstant) {
      params.push_back(fmt::format("%{}: const {}", v.name, v.type.str()));
    }
  }
  std::string out = fmt::format("graph({}) {{\n", fmt::join(params, ", "));
  PrintBody(graph, 2, &out);
  out += "}\n";
  return out;
}

}  // namespace tirtune::graph
