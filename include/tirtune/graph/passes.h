// The graph passes, one function per pass and one file per function in src/graph/. The model
// pipeline runs them in this order:
//
//   SimplifyInference → LegalizeOps → AnnotateOpPattern → FoldConstants → FuseOps → FuseTIR
//   → EliminateDeadCode → ExtractTasks (extract_tasks.h)
//
// Each takes a valid graph and returns a new valid graph computing the same outputs.
#pragma once

#include <vector>

#include "tirtune/graph/graph.h"

namespace tirtune::graph {

/// Each batch_norm whose gamma, beta, mean and variance are constants becomes
/// `add(multiply(x, scale), shift)` with scale = gamma / sqrt(var + epsilon) and
/// shift = beta - mean * scale computed now (TVM's SimplifyInference; simplify_inference.cc).
/// Works on operator calls, so it runs before LegalizeOps.
Graph SimplifyInference(const Graph& graph);

/// Every operator call becomes a call of the PrimFunc its operator legalizes to (named after the
/// operator); the call keeps the operator's name and attributes as hints (legalize_ops.cc).
Graph LegalizeOps(const Graph& graph);

/// Sets the pattern of every PrimFunc call to AnalyzeOpPattern of its function
/// (annotate_op_pattern.cc).
Graph AnnotateOpPattern(const Graph& graph);

/// Limits of FuseOps (TVM's defaults).
struct FuseConfig {
  /// Most calls in one group (TVM's kMaxFusedOps / max_fuse_depth).
  int max_depth = 256;
  /// Most parameters of a fused function: its distinct inputs plus its output.
  int max_args = 256;
  /// Phase 2: an injective producer joins a comm_reduce group that post-dominates it when every
  /// path between them is injective (e.g. pad or transpose feeding a pooling). TVM spends this
  /// phase on tuples, which this graph IR does not have.
  bool fuse_injective_into_reduction = true;
};

/// The group of every call of `graph` (indexed like graph.calls(); group ids are the index of the
/// group's last call), computed on the calls' patterns by post-dominator grouping in three phases
/// (fuse_ops.cc):
///  0. an out_ewise_fusable call absorbs the elementwise epilogue that post-dominates it when the
///     path is broadcast or simpler (conv2d + bias_add + relu); two of them never fuse;
///  1. an injective call joins its post-dominator when every path is injective; elemwise and
///     broadcast calls join injective, reduction and out_ewise_fusable groups in every phase;
///  2. see FuseConfig::fuse_injective_into_reduction.
/// Reductions are only ever sinks, opaque calls never fuse, a value that is a graph output ends
/// its group, and no group exceeds the limits of `config`.
std::vector<int> PartitionGraph(const Graph& graph, const FuseConfig& config = {});

/// Replaces each group of PartitionGraph with more than one call by a call of a nested graph
/// (CallKind::kGraph) named `fused_<op>_<op>...`, whose inputs are the group's arguments
/// (fuse_ops.cc).
Graph FuseOps(const Graph& graph, const FuseConfig& config = {});

/// Merges each group's PrimFuncs into one PrimFunc: the group's inputs and output become its
/// parameters, the intermediates buffers allocated by its root block (fuse_tir.cc).
Graph FuseTIR(const Graph& graph);

/// Calls whose arguments are all constants are run by the interpreter and become constants
/// (fold_constants.cc). Operator and PrimFunc calls are folded; groups are not.
Graph FoldConstants(const Graph& graph);

/// Removes calls and constants that no output depends on; inputs stay (dead_code.cc).
Graph EliminateDeadCode(const Graph& graph);

/// One pass of the model pipeline, by name.
struct NamedPass {
  const char* name;
  Graph (*run)(const Graph&);
};
/// The model pipeline's passes in their order, SimplifyInference to EliminateDeadCode, with
/// default configurations (pipeline.cc).
const std::vector<NamedPass>& PipelinePasses();
/// Every pass of PipelinePasses() applied in turn.
Graph RunPipeline(const Graph& graph);

}  // namespace tirtune::graph
