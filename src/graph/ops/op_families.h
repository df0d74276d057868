// The operator definitions of each family, gathered by op_registry.cc, and the small helpers
// their schemas share (private to graph).
#pragma once

#include <string>
#include <vector>

#include "tirtune/graph/op_registry.h"

namespace tirtune::graph {

std::vector<OpDef> ElementwiseOps();
std::vector<OpDef> NnOps();
std::vector<OpDef> LayoutOps();
std::vector<OpDef> ReduceOps();

inline AttrSpec IntAttr(std::string name, int64_t fallback) {
  return AttrSpec{std::move(name), AttrType::kInt, false, fallback};
}
inline AttrSpec FloatAttr(std::string name, double fallback) {
  return AttrSpec{std::move(name), AttrType::kFloat, false, fallback};
}
inline AttrSpec RequiredIntsAttr(std::string name) {
  return AttrSpec{std::move(name), AttrType::kInts, true, std::vector<int64_t>{}};
}
inline AttrSpec IntsAttr(std::string name, std::vector<int64_t> fallback) {
  return AttrSpec{std::move(name), AttrType::kInts, false, std::move(fallback)};
}

/// `axis` counted from the end when negative, checked against `ndim`; `op` names the operator.
int NormalizeAxis(int64_t axis, int ndim, const char* op);

}  // namespace tirtune::graph
