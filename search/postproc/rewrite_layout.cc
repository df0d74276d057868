// RewriteLayout: packs every layout-free parameter (kLayoutFreeAttr: a model's constant weights,
// a workload's weights) in the order the block that reads it walks it, with TransformLayout.
// The reading block's bindings are decomposed into digits of its loops (DetectIterMap); the
// digits that index the parameter, ordered as the loops nest (outer loop first, the higher digit
// of a fused or split loop first), become the packed dimensions. The innermost loops then read
// the weight contiguously, and a tile of weights is one run of memory.
//
//   for co0 (4), ci (48), co1 (16) vectorized:    W[co, ci] (64, 48)
//     Y[i, co0*16 + co1] += X[i, ci] * W[co0*16 + co1, ci]
//   -> W packed [co / 16, ci, co % 16] (4, 48, 16): co1 steps by one element.
//
// A parameter is left as it is when no block or more than one reads it, the reading block loads
// it at different indices or at anything but its iterators (one per axis) and constants, its
// bindings are not an affine map of its loops, or the order is already the source order.
// Never rejects a schedule.
#include <algorithm>

#include "tirtune/arith/iter_map.h"
#include "tirtune/ir/functor.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

// The one block reading `buffer`, or null.
const BlockRealizeNode* OnlyReader(const ScheduleState& state, const Buffer& buffer) {
  const BlockRealizeNode* reader = nullptr;
  for (const BlockRealizeNode* realize : state.AllBlocks()) {
    for (const BufferRegion& r : realize->block->reads) {
      if (r.buffer.get() != buffer.get()) continue;
      if (reader != nullptr && reader != realize) return nullptr;
      reader = realize;
    }
  }
  return reader;
}

// The indices every load of `buffer` in `block` uses, when they are all the same.
std::optional<std::vector<Expr>> CommonLoadIndices(const BlockNode* block, const Buffer& buffer) {
  std::optional<std::vector<Expr>> common;
  bool same = true;
  auto visit = [&](const Object* node) {
    const auto* load = node->as<BufferLoadNode>();
    if (load == nullptr || load->buffer.get() != buffer.get()) return;
    if (!common) {
      common = load->indices;
      return;
    }
    for (size_t d = 0; d < common->size(); ++d) {
      const Expr& a = (*common)[d];
      const Expr& b = load->indices[d];
      const auto* ia = a.as<IntImmNode>();
      const auto* ib = b.as<IntImmNode>();
      bool equal = a.same_as(b) || (ia != nullptr && ib != nullptr && ia->value == ib->value);
      if (!equal) same = false;
    }
  };
  PostOrderVisit(block->body, visit);
  if (block->init.defined()) PostOrderVisit(block->init, visit);
  if (!same) return std::nullopt;
  return common;
}

// The packed layout following the loops above `realize` for a parameter of `shape` loaded at
// `indices`; nullopt when the bindings or indices do not allow one.
std::optional<PackedLayout> LayoutOfReads(const ScheduleState& state,
                                          const BlockRealizeNode* realize,
                                          const std::vector<Expr>& indices,
                                          const std::vector<int64_t>& shape) {
  const BlockNode* block = realize->block.get();
  // Step 1. The loops above the block, outermost first, and their domains.
  std::vector<const ForNode*> loops;
  for (const StmtNode* s : state.Ancestors(realize)) {
    if (const auto* loop = s->as<ForNode>()) loops.push_back(loop);
  }
  arith::VarRangeMap doms;
  for (const ForNode* loop : loops) doms[loop->loop_var] = Range{loop->min, loop->extent};
  arith::IterMapResult map = arith::DetectIterMap(realize->iter_values, doms);
  if (!map.ok()) return std::nullopt;
  // Step 2. Each axis's digits; an axis indexed by a constant must have extent 1.
  struct Digit {
    size_t loop_position;
    int64_t lower_factor;
    PackedLayout::Dim dim;
  };
  std::vector<Digit> digits;
  std::vector<const VarNode*> used;
  for (size_t a = 0; a < indices.size(); ++a) {
    const auto* var = indices[a].as<VarNode>();
    if (var == nullptr) {
      if (shape[a] != 1) return std::nullopt;
      continue;
    }
    if (std::find(used.begin(), used.end(), var) != used.end()) return std::nullopt;
    used.push_back(var);
    size_t iv = 0;
    while (iv < block->iter_vars.size() && block->iter_vars[iv].var.get() != var) ++iv;
    if (iv == block->iter_vars.size()) return std::nullopt;
    const arith::IterSum& sum = map.indices[iv];
    // The iterator is its digits alone (no offset, nothing symbolic): otherwise the digits would
    // not say how the block walks the weight.
    const auto* base = sum.base.as<IntImmNode>();
    if (sum.base.defined() && (base == nullptr || base->value != 0)) return std::nullopt;
    for (const arith::IterSplit& split : sum.args) {
      const arith::IterMark& mark = map.marks[split.mark];
      if (!mark.is_loop()) return std::nullopt;
      if (split.extent == 1) continue;
      size_t position = 0;
      while (position < loops.size() && loops[position]->loop_var.get() != mark.loop.get()) {
        ++position;
      }
      digits.push_back({position, split.lower_factor,
                        PackedLayout::Dim{static_cast<int>(a), split.scale, split.extent}});
    }
  }
  // Step 3. Outer loops first; within a loop, its higher digits first.
  std::stable_sort(digits.begin(), digits.end(), [](const Digit& x, const Digit& y) {
    if (x.loop_position != y.loop_position) return x.loop_position < y.loop_position;
    return x.lower_factor > y.lower_factor;
  });
  PackedLayout layout;
  layout.source_shape = shape;
  for (const Digit& d : digits) layout.dims.push_back(d.dim);
  // A tile that does not divide its axis: the outermost digit covers the axis, no more.
  for (size_t a = 0; a < shape.size(); ++a) {
    PackedLayout::Dim* top = nullptr;
    for (PackedLayout::Dim& d : layout.dims) {
      if (d.axis == static_cast<int>(a) && (top == nullptr || d.divisor > top->divisor)) top = &d;
    }
    if (top != nullptr) top->extent = (shape[a] + top->divisor - 1) / top->divisor;
  }
  try {
    layout.Check();
  } catch (const UserError&) {
    return std::nullopt;
  }
  return layout;
}

class RewriteLayout : public Postproc {
 public:
  std::string name() const override { return "RewriteLayout"; }

  bool Apply(Schedule& sch) override {
    // A library's kernel takes the weights as the model stores them.
    if (!OffloadedComposite(sch.func()).empty()) return true;
    std::vector<int> params = LayoutFreeParams(sch.func());
    std::map<int, PackedLayout> packed = PackedParams(sch.func());
    for (int index : params) {
      if (packed.count(index) != 0) continue;
      const Buffer buffer = sch.func()->params[index];
      std::vector<int64_t> shape;
      for (const Expr& e : buffer->shape) {
        const auto* imm = e.as<IntImmNode>();
        if (imm == nullptr) break;
        shape.push_back(imm->value);
      }
      if (shape.size() != buffer->shape.size() || shape.empty()) continue;
      const BlockRealizeNode* reader = OnlyReader(sch.state(), buffer);
      if (reader == nullptr) continue;
      std::optional<std::vector<Expr>> indices = CommonLoadIndices(reader->block.get(), buffer);
      if (!indices || indices->size() != shape.size()) continue;
      std::optional<PackedLayout> layout = LayoutOfReads(sch.state(), reader, *indices, shape);
      if (!layout || layout->IsIdentity()) continue;
      try {
        sch.TransformLayout(index, *layout);
      } catch (const ScheduleError&) {
        continue;  // a weight left as it is still computes the same
      }
    }
    return true;
  }
};

}  // namespace

std::shared_ptr<Postproc> MakeRewriteLayout() { return std::make_shared<RewriteLayout>(); }

}  // namespace tirtune
