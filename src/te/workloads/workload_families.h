// The workload definitions of each operator family, gathered by workload_registry.cc, and the
// argument helpers their builders share (private to te).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tirtune/te/tensor.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::te {

std::vector<WorkloadDef> LinearAlgebraWorkloads();
std::vector<WorkloadDef> ConvolutionWorkloads();
std::vector<WorkloadDef> Conv2dVariantWorkloads();
std::vector<WorkloadDef> NormalizationWorkloads();
std::vector<WorkloadDef> SubgraphWorkloads();
std::vector<WorkloadDef> ElementwiseWorkloads();
std::vector<WorkloadDef> PoolingWorkloads();
std::vector<WorkloadDef> LayoutWorkloads();

/// args[i] when given, else `fallback` (for optional trailing arguments).
inline int64_t ArgOr(const std::vector<int64_t>& args, size_t i, int64_t fallback) {
  return i < args.size() ? args[i] : fallback;
}

/// A float32 input of the given shape.
inline Tensor Input(const std::vector<int64_t>& shape, std::string name) {
  return Placeholder(std::vector<Expr>(shape.begin(), shape.end()), DataType::Float(32),
                     std::move(name));
}

}  // namespace tirtune::te
