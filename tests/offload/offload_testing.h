// What the library backends' tests share: a graph fused with a backend's patterns, its composites
// run by the backend (or by what stands for it on a host without the hardware) and the rest by
// the interpreter, compared with the interpreter running the whole graph.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../graph/graph_testing.h"
#include "tirtune/graph/executor.h"
#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/pattern.h"
#include "tirtune/offload/library.h"

namespace tirtune::offload::testing {

/// Runs composite `call` of the fused graph `f` on `args`, writing `out`; returns what ran, for
/// messages.
using RunComposite =
    std::function<std::string(const graph::Graph& f, const graph::Call& call,
                              const std::vector<const NDArray*>& args, NDArray& out)>;

/// Fuses `g` with `patterns`, expects `composites` composites, runs them with `run` and the
/// other calls on the interpreter, and expects the outputs of the interpreter running `g` (seeded
/// inputs). Returns the composites' descriptions, one per line.
inline std::string RunsLikeTheInterpreter(const graph::Graph& g,
                                          const std::vector<graph::FusionPattern>& patterns,
                                          const RunComposite& run, int composites = 1) {
  graph::PatternFusionResult r = graph::FuseOpsByPattern(g, patterns);
  std::vector<NDArray> inputs = graph::MakeRandomInputs(g, 11);
  std::vector<NDArray> expected = graph::RunGraph(g, inputs);
  const graph::Graph& f = r.graph;
  std::map<graph::ValueId, NDArray> values;
  std::vector<graph::ValueId> graph_inputs = f.Inputs();
  for (size_t i = 0; i < graph_inputs.size(); ++i) values[graph_inputs[i]] = inputs[i];
  int made = 0;
  std::string described;
  for (const graph::Call& call : f.calls()) {
    std::vector<const NDArray*> args;
    for (graph::ValueId a : call.args) {
      if (f.value(a).kind == graph::ValueKind::kConstant) values[a] = f.value(a).data;
      args.push_back(&values.at(a));
    }
    const graph::TensorType& type = f.value(call.output).type;
    NDArray out = NDArray::Empty(type.shape, type.dtype);
    if (call.attrs.Has(graph::kCodegenAttr)) {
      described += run(f, call, args, out) + "\n";
      ++made;
    } else {
      graph::Graph one;
      std::vector<graph::ValueId> ins;
      for (graph::ValueId a : call.args) {
        ins.push_back(one.AddInput(f.value(a).name, f.value(a).type));
      }
      graph::Call copy = call;
      copy.args = ins;
      one.AddOutput(one.AddCall(f.value(call.output).name, copy, type));
      std::vector<NDArray> in_arrays;
      for (const NDArray* a : args) in_arrays.push_back(*a);
      out = graph::RunGraph(one, in_arrays)[0];
    }
    values[call.output] = out;
  }
  EXPECT_EQ(made, composites) << graph::PrintGraph(f);
  for (size_t i = 0; i < f.outputs().size(); ++i) {
    EXPECT_TRUE(graph::testing::AllClose(expected[i], values.at(f.outputs()[i]), 1e-4))
        << described;
  }
  return described;
}

/// The pattern name of the first composite `patterns` make of `g`; "" when none.
inline std::string CompositeOf(const graph::Graph& g,
                               const std::vector<graph::FusionPattern>& patterns) {
  graph::PatternFusionResult r = graph::FuseOpsByPattern(g, patterns);
  for (const graph::Call& c : r.graph.calls()) {
    if (c.attrs.Has(graph::kCompositeAttr)) return c.attrs.GetString(graph::kCompositeAttr);
  }
  return "";
}

/// Why `plan` declines the first composite `patterns` make of `g` (LibraryDeclined's message);
/// "not declined" when it takes every composite. `plan` plans a composite call as a backend does.
inline std::string DeclineReason(
    const graph::Graph& g, const std::vector<graph::FusionPattern>& patterns,
    const std::function<void(const graph::Graph&, const graph::Call&)>& plan) {
  graph::PatternFusionResult r = graph::FuseOpsByPattern(g, patterns);
  for (const graph::Call& c : r.graph.calls()) {
    if (!c.attrs.Has(graph::kCodegenAttr)) continue;
    try {
      plan(r.graph, c);
    } catch (const LibraryDeclined& e) {
      return e.what();
    }
  }
  return "not declined";
}

/// Attention's product: query and value [batch, seq, heads, dim] moved to [batch * heads, ...]
/// by a transpose and a reshape, one product per head, the result seen as 4-D again.
inline graph::Graph HeadsProduct(int64_t batch) {
  using graph::AddOpCall;
  const int64_t seq = 5, heads = 3, dim = 4;
  graph::Graph g;
  auto moved = [&](const std::string& name, graph::Ints perm, graph::Ints shape) {
    graph::ValueId x = g.AddInput(name, graph::F32({batch, seq, heads, dim}));
    graph::ValueId t = AddOpCall(&g, name + "_T", "transpose", {x}, {{"perm", perm}});
    return AddOpCall(&g, name + "_heads", "reshape", {t}, {{"shape", shape}});
  };
  graph::ValueId q = moved("q", {0, 2, 1, 3}, {batch * heads, seq, dim});
  graph::ValueId v = moved("v", {0, 2, 3, 1}, {batch * heads, dim, seq});
  graph::ValueId y = AddOpCall(&g, "bmm", "batch_matmul", {q, v});
  g.AddOutput(AddOpCall(&g, "y", "reshape", {y}, {{"shape", graph::Ints{batch, heads, seq, seq}}}));
  return g;
}

}  // namespace tirtune::offload::testing
