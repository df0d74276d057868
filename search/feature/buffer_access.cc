// Affine analysis of buffer accesses and their footprints for the per-store features: how an
// index moves with each loop around the store, and from that the elements, distinct elements and
// cache lines an access touches over a range of loops.
#include "buffer_access.h"

#include <algorithm>
#include <cmath>

#include "feature_layout.h"
#include "tirtune/ir/expr.h"

namespace tirtune::feature {
namespace {

// Adds scale * `e` to the affine form of `access`: loop variables to the coefficients, a ramp's
// stride to the lane stride, constants to the offset.
void AddCoefficients(const Expr& e, double scale, const LoopPositions& loops,
                     BufferAccess* access) {
  switch (e->kind()) {
    case NodeKind::kVar: {
      auto it = loops.find(static_cast<const VarNode*>(e.get()));
      if (it != loops.end()) access->coef[it->second] += scale;
      return;
    }
    case NodeKind::kIntImm:
      access->offset += scale * static_cast<double>(static_cast<const IntImmNode*>(e.get())->value);
      return;
    case NodeKind::kAdd:
      AddCoefficients(BinaryA(e.get()), scale, loops, access);
      AddCoefficients(BinaryB(e.get()), scale, loops, access);
      return;
    case NodeKind::kSub:
      AddCoefficients(BinaryA(e.get()), scale, loops, access);
      AddCoefficients(BinaryB(e.get()), -scale, loops, access);
      return;
    case NodeKind::kMul: {
      const Expr& a = BinaryA(e.get());
      const Expr& b = BinaryB(e.get());
      if (const int64_t* c = AsConstInt(b)) {
        AddCoefficients(a, scale * static_cast<double>(*c), loops, access);
      } else if (const int64_t* c = AsConstInt(a)) {
        AddCoefficients(b, scale * static_cast<double>(*c), loops, access);
      } else {
        // A product of two variables: neither has a constant stride; count both as moving.
        AddCoefficients(a, scale, loops, access);
        AddCoefficients(b, scale, loops, access);
      }
      return;
    }
    case NodeKind::kFloorDiv:
    case NodeKind::kDiv: {
      const int64_t* d = AsConstInt(BinaryB(e.get()));
      double divisor = d != nullptr && *d != 0 ? static_cast<double>(*d) : 1.0;
      AddCoefficients(BinaryA(e.get()), scale / divisor, loops, access);
      return;
    }
    case NodeKind::kFloorMod:
    case NodeKind::kMin:
    case NodeKind::kMax:
      AddCoefficients(BinaryA(e.get()), scale, loops, access);
      return;
    case NodeKind::kCast:
      AddCoefficients(static_cast<const CastNode*>(e.get())->value, scale, loops, access);
      return;
    case NodeKind::kRamp: {
      const auto* ramp = static_cast<const RampNode*>(e.get());
      AddCoefficients(ramp->base, scale, loops, access);
      const int64_t* stride = AsConstInt(ramp->stride);
      access->lane_stride += scale * (stride != nullptr ? static_cast<double>(*stride) : 1.0);
      return;
    }
    case NodeKind::kBroadcast:
      AddCoefficients(static_cast<const BroadcastNode*>(e.get())->value, scale, loops, access);
      return;
    default:
      // Loads and the rest do not move with the loops.
      return;
  }
}

int LanesOf(const std::vector<Expr>& indices) {
  int lanes = 1;
  for (const Expr& index : indices) lanes = std::max(lanes, index.dtype().lanes());
  return lanes;
}

}  // namespace

BufferAccess AnalyzeAccess(const Buffer& buffer, const std::vector<Expr>& indices, bool is_write,
                           const LoopPositions& loops, size_t num_loops) {
  BufferAccess access;
  access.buffer = buffer.get();
  access.is_write = is_write;
  access.elem_bytes = buffer->dtype.bytes();
  access.lanes = LanesOf(indices);
  access.coef.assign(num_loops, 0.0);
  // Row-major strides of a multi-dimensional buffer (1 for a dimension of unknown extent).
  double stride = 1;
  for (size_t d = indices.size(); d-- > 0;) {
    AddCoefficients(indices[d], stride, loops, &access);
    const int64_t* extent = d < buffer->shape.size() ? AsConstInt(buffer->shape[d]) : nullptr;
    stride *= extent != nullptr ? static_cast<double>(*extent) : 1.0;
  }
  if (access.lanes == 1) access.lane_stride = 0;
  return access;
}

Footprint ComputeFootprint(const BufferAccess& access, const std::vector<int64_t>& extents,
                           size_t first_loop) {
  // Step 1. The dimensions that run: the loops from `first_loop` inwards, then the lanes.
  struct Dim {
    double extent, coef;
  };
  std::vector<Dim> dims;
  dims.reserve(extents.size() - first_loop + 1);
  for (size_t k = first_loop; k < extents.size(); ++k) {
    dims.push_back({static_cast<double>(extents[k]), std::fabs(access.coef[k])});
  }
  if (access.lanes > 1) dims.push_back({static_cast<double>(access.lanes), access.lane_stride});

  // Step 2. Touches, and distinct elements: the product of the moving extents, at most the span.
  Footprint fp;
  fp.touches = 1;
  double moving = 1, span = 1, min_stride = 0;
  for (const Dim& d : dims) {
    fp.touches *= d.extent;
    if (d.coef == 0) continue;
    moving *= d.extent;
    span += d.coef * (d.extent - 1);
    min_stride = min_stride == 0 ? d.coef : std::min(min_stride, d.coef);
  }
  fp.unique = std::max(1.0, std::min(moving, span));

  // Step 3. Lines: consecutive touches stay in one line while the inner loops do not move the
  // access, and then for as many steps of the innermost moving loop as fit in a line; a unit
  // stride loop and the loops outside it that continue where it ends make one contiguous run.
  const double line_elems = std::max(1.0, feature_layout::kCacheLineBytes / access.elem_bytes);
  double run = 1;
  auto it = dims.rbegin();
  for (; it != dims.rend() && it->coef == 0; ++it) run *= it->extent;
  if (it != dims.rend()) {
    fp.stride = it->coef;
    double contiguous = it->coef == 1 ? it->extent : 0;
    for (auto outer = it + 1; contiguous > 0 && outer != dims.rend(); ++outer) {
      if (outer->coef != contiguous) break;
      contiguous *= outer->extent;
    }
    run *= contiguous > 0 ? std::min(contiguous, line_elems)
                          : std::min(it->extent, std::max(1.0, line_elems / it->coef));
  }
  fp.lines = fp.touches / run;
  double used_per_line = std::clamp(min_stride, 1.0, line_elems);
  fp.unique_lines = min_stride == 0 ? 1 : std::max(1.0, fp.unique * used_per_line / line_elems);
  return fp;
}

}  // namespace tirtune::feature
