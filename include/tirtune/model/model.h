// Models as the tuner and the compiler see them: an ONNX file imported into the graph IR, run
// through the graph pipeline down to calls of fused PrimFuncs, and the distinct functions of those
// calls as tasks.
#pragma once

#include <string>
#include <vector>

#include "tirtune/graph/extract_tasks.h"
#include "tirtune/codegen/target.h"
#include "tirtune/graph/graph.h"
#include "tirtune/graph/pattern.h"

namespace tirtune::model {

/// Whether functions a library backend can run (offload/library.h) are handed to it.
enum class Offload {
  kNever,     // every function is a tuned (or default-scheduled) kernel; no pattern partitioning
  kAlways,    // every composite of a library's patterns runs on the library
  kMeasured,  // a composite's library kernel is measured while tuning (a library record) and
              // runs where it beat every tuned kernel of the function
};
/// "never", "always" or "measured"; UserError naming the choices otherwise.
Offload ParseOffload(const std::string& text);
const char* OffloadName(Offload offload);
/// The library patterns `offload` partitions with on `target` (none for kNever, and for
/// kMeasured on a target no library backend serves, such as cuda, or when oneDNN cannot be
/// loaded: a note on stderr says so; kAlways then is a UserError).
std::vector<graph::FusionPattern> OffloadPatterns(Offload offload, const Target& target);

/// The standard graph pipeline (graph/passes.h): SimplifyInference → [FuseOpsByPattern with
/// `patterns`, when there are any] → LegalizeOps → AnnotateOpPattern → FoldConstants → FuseOps →
/// FuseTIR → EliminateDeadCode. Every call of the result is a PrimFunc call; a composite's keeps
/// its Composite and Codegen attributes and its operators.
graph::Graph FuseModel(const graph::Graph& graph,
                       const std::vector<graph::FusionPattern>& patterns = {});

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

/// The composite description (offload/library.h CompositeToJson) of task `task` when every call
/// of it is a composite of a library's patterns; empty otherwise.
std::string TaskLibrary(const ModelTasks& model, int task);

/// The composite description of operator-library workload `spec` ("conv2d:1,56,56,64,64,3,1,1")
/// when a library's patterns for `offload` on `target` take it: gemm and batch_matmul (both
/// operands inputs), dense, conv1d/2d/3d and conv2d_transpose (the weight a constant, as in a
/// model), max_pool2d, avg_pool2d and softmax; the subgraphs cbr (the convolution with its
/// bias, batch norm and ReLU as post-ops) and mbg (the matmul with its bias and GELU). Its
/// arguments are the workload function's parameters in order. Empty for other workloads and shapes
/// the patterns refuse. `tune --workload` measures it beside the tuned kernels.
std::string WorkloadLibrary(const std::string& spec, Offload offload, const Target& target);

/// Imports the ONNX model at `path` (graph/onnx_import.h), fuses it and extracts its tasks.
/// UserError for a file that cannot be read or imported.
ModelTasks LoadOnnxModel(const std::string& path,
                         const std::vector<graph::FusionPattern>& patterns = {});

}  // namespace tirtune::model
