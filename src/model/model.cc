// The model pipeline: ONNX import, the graph passes in their fixed order, task extraction.
#include "tirtune/model/model.h"

#include <map>

#include "tirtune/graph/onnx_import.h"
#include "tirtune/graph/passes.h"
#include "tirtune/offload/library.h"
#include "tirtune/ir/structural_equal.h"
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
  if (target.is_cuda() && offload == Offload::kMeasured) return {};  // no library to measure
  if (target.is_cuda()) {
    TT_USER_ERROR("--offload {}: no library backend serves cuda targets yet (oneDNN is for the "
                  "CPU); use --offload never",
                  OffloadName(offload));
  }
  return offload::DnnlBackend()->Patterns();
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

ModelTasks LoadOnnxModel(const std::string& path,
                         const std::vector<graph::FusionPattern>& patterns) {
  return ExtractModelTasks(FuseModel(graph::ImportOnnx(path), patterns));
}

}  // namespace tirtune::model
