// Read-region inference for the blocks CreatePrimFunc builds: points where a buffer is read at one
// index tuple, constant-offset hulls (as for stencils) where it is read at several.
#include "access_regions.h"

#include <algorithm>
#include <map>
#include <optional>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune::te {
namespace {

// sum(coefficient * var) + constant; enough to tell whether two indices differ by a constant.
struct LinearForm {
  std::map<const VarNode*, int64_t> coefficients;
  int64_t constant = 0;

  void AddScaled(const LinearForm& other, int64_t scale) {
    for (const auto& [var, c] : other.coefficients) coefficients[var] += c * scale;
    constant += other.constant * scale;
  }
  bool IsConstant() const {
    return std::all_of(coefficients.begin(), coefficients.end(),
                       [](const auto& entry) { return entry.second == 0; });
  }
};

// The linear form of an integer expression, or nullopt when it is not affine in its variables.
std::optional<LinearForm> ToLinearForm(const Expr& e) {
  if (const int64_t* value = AsConstInt(e)) return LinearForm{{}, *value};
  if (const auto* var = e.as<VarNode>()) return LinearForm{{{var, 1}}, 0};
  if (const auto* add = e.as<AddNode>()) {
    auto a = ToLinearForm(add->a), b = ToLinearForm(add->b);
    if (!a || !b) return std::nullopt;
    a->AddScaled(*b, 1);
    return a;
  }
  if (const auto* sub = e.as<SubNode>()) {
    auto a = ToLinearForm(sub->a), b = ToLinearForm(sub->b);
    if (!a || !b) return std::nullopt;
    a->AddScaled(*b, -1);
    return a;
  }
  if (const auto* mul = e.as<MulNode>()) {
    auto a = ToLinearForm(mul->a), b = ToLinearForm(mul->b);
    if (!a || !b) return std::nullopt;
    if (b->IsConstant()) std::swap(a, b);
    if (!a->IsConstant()) return std::nullopt;
    LinearForm product;
    product.AddScaled(*b, a->constant);
    return product;
  }
  return std::nullopt;
}

// `b - a` when it is a constant.
std::optional<int64_t> ConstantDifference(const Expr& a, const Expr& b) {
  if (StructuralEqual(a, b)) return 0;
  auto la = ToLinearForm(a), lb = ToLinearForm(b);
  if (!la || !lb) return std::nullopt;
  lb->AddScaled(*la, -1);
  if (!lb->IsConstant()) return std::nullopt;
  return lb->constant;
}

// The region of one buffer covering all the index tuples it is read at.
BufferRegion CoverAccesses(const Buffer& buffer, const std::vector<std::vector<Expr>>& accesses) {
  BufferRegion region{buffer, {}};
  for (int d = 0; d < buffer->ndim(); ++d) {
    const Expr& first = accesses[0][d];
    int64_t lo = 0, hi = 0;
    size_t lo_access = 0;
    bool constant_offsets = true;
    for (size_t a = 1; a < accesses.size() && constant_offsets; ++a) {
      std::optional<int64_t> offset = ConstantDifference(first, accesses[a][d]);
      if (!offset) {
        constant_offsets = false;
      } else if (*offset < lo) {
        lo = *offset;
        lo_access = a;
      } else {
        hi = std::max(hi, *offset);
      }
    }
    if (constant_offsets) {
      region.region.push_back(Range{accesses[lo_access][d], Expr(hi - lo + 1)});
    } else {
      region.region.push_back(Range{Expr(0), buffer->shape[d]});
    }
  }
  return region;
}

}  // namespace

std::vector<BufferRegion> InferReadRegions(const Expr& value, const Buffer& exclude) {
  std::vector<Buffer> order;
  std::vector<std::vector<std::vector<Expr>>> accesses;  // per buffer in `order`
  PostOrderVisit(value, [&](const Object* node) {
    if (node->kind() != NodeKind::kBufferLoad) return;
    const auto* load = static_cast<const BufferLoadNode*>(node);
    if (load->buffer.same_as(exclude)) return;
    auto it = std::find_if(order.begin(), order.end(),
                           [&](const Buffer& b) { return b.same_as(load->buffer); });
    size_t slot = it - order.begin();
    if (it == order.end()) {
      order.push_back(load->buffer);
      accesses.emplace_back();
    }
    accesses[slot].push_back(load->indices);
  });
  std::vector<BufferRegion> regions;
  for (size_t i = 0; i < order.size(); ++i) {
    regions.push_back(CoverAccesses(order[i], accesses[i]));
  }
  return regions;
}

}  // namespace tirtune::te
