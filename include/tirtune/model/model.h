// Models as the tuner and the compiler see them: an ONNX file imported into the graph IR, run
// through the graph pipeline down to calls of fused PrimFuncs, and the distinct functions of those
// calls as tasks.
#pragma once

#include <string>
#include <vector>

#include "tirtune/graph/extract_tasks.h"
#include "tirtune/graph/graph.h"

namespace tirtune::model {

/// The standard graph pipeline (graph/passes.h): SimplifyInference → LegalizeOps →
/// AnnotateOpPattern → FoldConstants → FuseOps → FuseTIR → EliminateDeadCode. Every call of the
/// result is a PrimFunc call.
graph::Graph FuseModel(const graph::Graph& graph);

/// A fused model and its tasks.
struct ModelTasks {
  graph::Graph fused;
  /// ExtractTasks(fused): distinct functions in the order of their first call, weight = uses.
  std::vector<graph::Task> tasks;
  /// For every call of `fused`, the index of its task.
  std::vector<int> call_task;
};

/// The tasks of a fused graph, with every call mapped to its task.
ModelTasks ExtractModelTasks(graph::Graph fused);

/// Imports the ONNX model at `path` (graph/onnx_import.h), fuses it and extracts its tasks.
/// UserError for a file that cannot be read or imported.
ModelTasks LoadOnnxModel(const std::string& path);

}  // namespace tirtune::model
