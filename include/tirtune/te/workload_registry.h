// The operator library as named workloads: "gemm:256,256,256" names a function to tune. Used by
// the CLI, the benchmarks and the tests.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tirtune/ir/function.h"

namespace tirtune {

/// One workload family: how to build its function and count its FLOPs from integer arguments.
struct WorkloadDef {
  std::string name;     // "gemm", "conv2d", ...
  std::string params;   // "M,N,K": names of the integer arguments, in order
  std::string summary;  // one line
  size_t min_args = 0;  // trailing arguments past min_args are optional (e.g. conv2d dilation)
  size_t max_args = 0;
  /// Builds the function from validated arguments (count in range, each positive, `pad` may be
  /// zero); throws UserError for an invalid combination.
  std::function<PrimFunc(const std::vector<int64_t>&)> build;
  /// Floating-point operations of one run (a multiply-add counts 2).
  std::function<double(const std::vector<int64_t>&)> flops;
  /// Shapes from /work/shared/BENCHMARKS.md; empty for helper operators.
  std::vector<std::vector<int64_t>> benchmark_shapes;
  /// A tiny instance for tests.
  std::vector<int64_t> small_shape;
};

/// Every workload, in a fixed order (benchmark operators, subgraphs, then helpers).
const std::vector<WorkloadDef>& AllWorkloads();
/// The workload named `name`, or nullptr.
const WorkloadDef* FindWorkload(std::string_view name);

/// A built workload: its normalized spec ("gemm:256,256,256"), function and FLOP count.
struct Workload {
  std::string spec;
  PrimFunc func;
  double flops = 0;
};

/// Parses "NAME:ARG,ARG,..." and builds it. Throws UserError naming the problem for an unknown
/// name, a wrong number of arguments, a non-integer or non-positive argument, or an invalid
/// combination (e.g. channels not divisible by groups).
Workload MakeWorkload(std::string_view spec);

}  // namespace tirtune
