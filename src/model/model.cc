// The model pipeline: ONNX import, the graph passes in their fixed order, task extraction.
#include "tirtune/model/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "tirtune/graph/onnx_import.h"
#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/passes.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/offload/library.h"
#include "tirtune/support/error.h"

namespace tirtune::model {

Offload ParseOffload(const std::string& text) {
  if (text == "never") return Offload::kNever;
  if (text == "always") return Offload::kAlways;
  if (text == "measured") return Offload::kMeasured;
  TT_USER_ERROR("--offload must be never, always or measured, not '{}'", text);
}

const char* OffloadName(Offload offload) {
  switch (offload) {
    case Offload::kNever:
      return "never";
    case Offload::kAlways:
      return "always";
    case Offload::kMeasured:
      return "measured";
  }
  return "?";
}

std::vector<graph::FusionPattern> OffloadPatterns(Offload offload, const Target& target) {
  if (offload == Offload::kNever) return {};
  // GPU targets: cuBLAS for matrix products, cuDNN for convolutions, always there to plan with
  // (each library is loaded where a kernel runs).
  if (target.is_cuda()) {
    std::vector<graph::FusionPattern> patterns = offload::CublasBackend()->Patterns();
    std::vector<graph::FusionPattern> convolutions = offload::CudnnBackend()->Patterns();
    patterns.insert(patterns.end(), convolutions.begin(), convolutions.end());
    return patterns;
  }
  const offload::LibraryBackend* dnnl = offload::DnnlBackend();
  if (dnnl == nullptr) {
    if (offload == Offload::kAlways) {
      TT_USER_ERROR(
          "--offload always: {}; use --offload never (or measured: every function is "
          "then tuned)",
          offload::BackendUnavailable("dnnl"));
    }
    // Measured: no library candidates; every function is tuned, and the user is told why.
    fmt::print(stderr, "note: {}: no library candidates, every function is tuned\n",
               offload::BackendUnavailable("dnnl"));
    return {};
  }
  return dnnl->Patterns();
}

graph::Graph FuseModel(const graph::Graph& graph,
                       const std::vector<graph::FusionPattern>& patterns) {
  if (patterns.empty()) return graph::RunPipeline(graph);
  graph::Graph g = graph;
  for (const graph::NamedPass& pass : graph::PipelinePasses()) {
    g = pass.run(g);
    if (std::string(pass.name) == "SimplifyInference") g = FuseOpsByPattern(g, patterns).graph;
  }
  return g;
}

ModelTasks ExtractModelTasks(graph::Graph fused) {
  ModelTasks result;
  // A schedule may choose the layout of a call's constants (RewriteLayout): the compiler packs
  // them once.
  for (size_t c = 0; c < fused.calls().size(); ++c) {
    graph::Call& call = fused.mutable_call(static_cast<int>(c));
    if (call.kind != graph::CallKind::kPrimFunc) continue;
    std::vector<int> constants;
    for (size_t a = 0; a < call.args.size() && a < call.func->params.size(); ++a) {
      if (fused.value(call.args[a]).kind == graph::ValueKind::kConstant) {
        constants.push_back(static_cast<int>(a));
      }
    }
    call.func = WithLayoutFreeParams(call.func, constants);
  }
  result.tasks = graph::ExtractTasks(fused);
  // ExtractTasks merged structurally equal functions; find each call's task the same way.
  std::multimap<uint64_t, int> by_hash;
  for (size_t i = 0; i < result.tasks.size(); ++i) {
    by_hash.emplace(StructuralHash(result.tasks[i].func), static_cast<int>(i));
  }
  for (const graph::Call& call : fused.calls()) {
    int task = -1;
    auto [begin, end] = by_hash.equal_range(StructuralHash(call.func));
    for (auto it = begin; it != end && task < 0; ++it) {
      if (StructuralEqual(result.tasks[it->second].func, call.func)) task = it->second;
    }
    TT_ICHECK(task >= 0, "every call of a fused graph has a task (ExtractTasks covers them all)");
    result.call_task.push_back(task);
  }
  result.fused = std::move(fused);
  return result;
}

std::string TaskLibrary(const ModelTasks& model, int task) {
  std::string description;
  for (size_t c = 0; c < model.fused.calls().size(); ++c) {
    if (model.call_task[c] != task) continue;
    const graph::Call& call = model.fused.call(static_cast<int>(c));
    if (!call.attrs.Has(graph::kCompositeAttr)) return "";
    if (description.empty()) {
      description = offload::CompositeToJson(offload::StandaloneComposite(model.fused, call));
    }
  }
  return description;
}

std::string WorkloadLibrary(const std::string& spec, Offload offload, const Target& target) {
  std::vector<graph::FusionPattern> patterns = OffloadPatterns(offload, target);
  size_t colon = spec.find(':');
  if (patterns.empty() || colon == std::string::npos) return "";
  std::string name = spec.substr(0, colon);
  std::vector<int64_t> a;
  for (size_t at = colon + 1; at < spec.size();) {
    size_t end = std::min(spec.find(',', at), spec.size());
    a.push_back(std::stoll(spec.substr(at, end - at)));
    at = end + 1;
  }
  auto arg = [&](size_t i, int64_t fallback) { return i < a.size() ? a[i] : fallback; };
  graph::Graph g;
  auto input = [&](const char* n, std::vector<int64_t> shape) {
    return g.AddInput(n, graph::F32(std::move(shape)));
  };
  auto constant = [&](const char* n, std::vector<int64_t> shape) {
    NDArray w = NDArray::Empty(shape, DataType::Float(32));
    w.Fill(0);  // the runner fills every argument with the task's seeded values
    return g.AddConstant(n, w);
  };
  auto weight = [&](std::vector<int64_t> shape) { return constant("W", std::move(shape)); };
  // The subgraphs' tails, applied to the primitive's result in order.
  struct TailCall {
    std::string op;
    std::optional<graph::ValueId> operand;  // besides the result so far
    graph::Attrs attrs = {};
  };
  std::vector<TailCall> tail;
  std::string op = name;
  std::vector<graph::ValueId> args;
  graph::Attrs attrs;
  auto conv = [&](size_t spatial) {  // N, spatial..., CI, CO, kernel, stride, pad, dilation, groups
    std::vector<int64_t> data(a.begin(), a.begin() + 2 + spatial);  // N, spatial..., CI
    int64_t co = a[2 + spatial], kernel = a[3 + spatial], groups = arg(7 + spatial, 1);
    std::vector<int64_t> w(spatial, kernel);
    w.insert(w.end(), {data.back() / groups, co});
    args = {input("A", data), weight(w)};
    attrs = {{"stride", arg(4 + spatial, 1)},
             {"pad", arg(5 + spatial, 0)},
             {"dilation", arg(6 + spatial, 1)},
             {"groups", groups}};
  };
  if (name == "gemm" && a.size() == 3) {  // M, N, K
    op = "matmul";
    args = {input("A", {a[0], a[2]}), input("B", {a[2], a[1]})};
  } else if (name == "dense" && a.size() == 3) {  // M, N, K
    args = {input("X", {a[0], a[2]}), weight({a[1], a[2]})};
  } else if (name == "batch_matmul" && a.size() == 4) {  // B, N, M, K
    args = {input("A", {a[0], a[1], a[3]}), input("B", {a[0], a[3], a[2]})};
  } else if ((name == "conv1d" || name == "conv2d" || name == "conv3d") && a.size() >= 6) {
    conv(static_cast<size_t>(name[4] - '0'));
  } else if ((name == "max_pool2d" || name == "avg_pool2d") && a.size() == 7) {
    args = {input("A", {a[0], a[1], a[2], a[3]})};
    attrs = {{"kernel", a[4]}, {"stride", a[5]}, {"pad", a[6]}};
  } else if (name == "depthwise_conv2d" && a.size() >= 7) {  // N,H,W,C,kernel,stride,pad[,dil]
    // A grouped convolution, one group per channel: its weight [k, k, 1, C] is the workload's
    // [k, k, C] reshaped (CompositeFromJson takes it so).
    op = "conv2d";
    args = {input("A", {a[0], a[1], a[2], a[3]}), weight({a[4], a[4], 1, a[3]})};
    attrs = {{"stride", a[5]}, {"pad", a[6]}, {"dilation", arg(7, 1)}, {"groups", a[3]}};
  } else if (name == "conv2d_transpose" && a.size() == 8) {  // N,H,W,CI,CO,kernel,stride,pad
    args = {input("A", {a[0], a[1], a[2], a[3]}), weight({a[5], a[5], a[3], a[4]})};
    attrs = {{"stride", a[6]}, {"pad", a[7]}};
  } else if (name == "softmax" && a.size() == 2) {  // M, N: along the rows
    args = {input("A", {a[0], a[1]})};
    attrs = {{"axis", int64_t{-1}}};
  } else if (name == "cbr" && a.size() == 8) {  // N,H,W,CI,CO,kernel,stride,pad
    op = "conv2d";
    args = {input("A", {a[0], a[1], a[2], a[3]}), weight({a[5], a[5], a[3], a[4]})};
    attrs = {{"stride", a[6]}, {"pad", a[7]}};
    tail = {{"bias_add", constant("bias", {a[4]})},
            {"multiply", constant("bn_scale", {a[4]})},
            {"add", constant("bn_offset", {a[4]})},
            {"relu", std::nullopt}};
  } else if (name == "mbg" && a.size() == 3) {  // M, N, K
    op = "matmul";
    args = {input("A", {a[0], a[2]}), input("B", {a[2], a[1]})};
    tail = {{"bias_add", constant("bias", {a[1]})}, {"gelu", std::nullopt}};
  } else if (name == "tbg" && a.size() == 4) {  // batch, seq, heads, dim
    // Query and value moved to [batch * heads, ...] (a view oneDNN reads through strides when
    // batch is 1), one product per head, the result seen as [batch, heads, seq, seq].
    const int64_t batch = a[0], seq = a[1], heads = a[2], dim = a[3];
    auto moved = [&](const char* n, graph::Ints perm, graph::Ints shape) {
      graph::ValueId t = graph::AddOpCall(&g, fmt::format("{}_T", n), "transpose",
                                          {input(n, {batch, seq, heads, dim})}, {{"perm", perm}});
      return graph::AddOpCall(&g, fmt::format("{}_heads", n), "reshape", {t}, {{"shape", shape}});
    };
    op = "batch_matmul";
    graph::ValueId query = moved("query", {0, 2, 1, 3}, {batch * heads, seq, dim});
    args = {query, moved("value", {0, 2, 3, 1}, {batch * heads, dim, seq})};
    tail = {{"reshape", std::nullopt, {{"shape", graph::Ints{batch, heads, seq, seq}}}}};
  } else {
    return "";
  }
  graph::ValueId y = graph::AddOpCall(&g, "y", op, args, attrs);
  for (size_t i = 0; i < tail.size(); ++i) {
    std::vector<graph::ValueId> operands = {y};
    if (tail[i].operand) operands.push_back(*tail[i].operand);
    y = graph::AddOpCall(&g, fmt::format("y{}", i + 1), tail[i].op, operands, tail[i].attrs);
  }
  g.AddOutput(y);
  graph::PatternFusionResult fused = graph::FuseOpsByPattern(g, patterns);
  if (fused.graph.calls().size() != 1) return "";
  const graph::Call& call = fused.graph.call(0);
  if (!call.attrs.Has(graph::kCompositeAttr)) return "";
  // Its weight is a placeholder (zeros): the runner fills every argument with seeded values.
  return offload::CompositeToJson(offload::StandaloneComposite(fused.graph, call),
                                  /*state_values=*/false);
}

ModelTasks LoadOnnxModel(const std::string& path,
                         const std::vector<graph::FusionPattern>& patterns) {
  return ExtractModelTasks(FuseModel(graph::ImportOnnx(path), patterns));
}

}  // namespace tirtune::model
