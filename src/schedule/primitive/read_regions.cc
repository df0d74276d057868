// Region collection, merging and substitution for rewritten blocks.
#include "read_regions.h"

#include <algorithm>

#include "tirtune/arith/int_set.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/substitute.h"

namespace tirtune {
namespace {

bool SameRegion(const BufferRegion& a, const BufferRegion& b) {
  if (!a.buffer.same_as(b.buffer) || a.region.size() != b.region.size()) return false;
  for (size_t d = 0; d < a.region.size(); ++d) {
    if (!StructuralEqual(a.region[d].min, b.region[d].min) ||
        !StructuralEqual(a.region[d].extent, b.region[d].extent)) {
      return false;
    }
  }
  return true;
}

// `region` with every dimension whose bounds load from a buffer (a gather's data-dependent
// index) widened to the whole dimension: a block's regions must not read memory.
BufferRegion WithoutDataDependentBounds(BufferRegion region) {
  for (size_t d = 0; d < region.region.size(); ++d) {
    if (LoadsFromBuffer(region.region[d].min) || LoadsFromBuffer(region.region[d].extent)) {
      const Expr& extent = region.buffer->shape[d];
      region.region[d] = Range::FromMinExtent(IntImm(extent.dtype(), 0), extent);
    }
  }
  return region;
}

// Collects one region per wanted buffer while tracking the loops entered inside the statement.
class LoadCollector : public StmtVisitor {
 public:
  explicit LoadCollector(const std::function<bool(const BufferNode*)>& want) : want_(want) {}

  std::vector<BufferRegion> regions;

  void VisitStmt_(const ForNode* op) override {
    loops_[op->loop_var] = Range::FromMinExtent(op->min, op->extent);
    StmtVisitor::VisitStmt_(op);
    loops_.erase(op->loop_var);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    StmtVisitor::VisitExpr_(op);
    if (!want_(op->buffer.get())) return;
    bool uses_inner_loop = std::any_of(op->indices.begin(), op->indices.end(), [&](const Expr& e) {
      return UsesVar(
          e, [&](const VarNode* v) { return loops_.count(Var(ObjectPtr<const VarNode>(v))) > 0; });
    });
    BufferRegion region = WithoutDataDependentBounds(
        uses_inner_loop ? arith::EvalBufferRegion(op->buffer, op->indices, loops_)
                        : BufferRegion::Point(op->buffer, op->indices));
    for (BufferRegion& r : regions) {
      if (r.buffer.same_as(op->buffer)) {
        r = UnionRegion(r, region);
        return;
      }
    }
    regions.push_back(std::move(region));
  }

 private:
  const std::function<bool(const BufferNode*)>& want_;
  arith::VarRangeMap loops_;
};

}  // namespace

std::vector<BufferRegion> LoadedRegions(const Stmt& stmt,
                                        const std::function<bool(const BufferNode*)>& want) {
  LoadCollector collector(want);
  collector.VisitStmt(stmt);
  return std::move(collector.regions);
}

BufferRegion UnionRegion(const BufferRegion& a, const BufferRegion& b) {
  if (SameRegion(a, b)) return WithoutDataDependentBounds(a);
  arith::Analyzer analyzer;
  BufferRegion out{a.buffer, {}};
  for (size_t d = 0; d < a.region.size(); ++d) {
    if (StructuralEqual(a.region[d].min, b.region[d].min) &&
        StructuralEqual(a.region[d].extent, b.region[d].extent)) {
      out.region.push_back(a.region[d]);
      continue;
    }
    arith::IntSet hull = arith::Union(arith::IntSet::FromRange(a.region[d]),
                                      arith::IntSet::FromRange(b.region[d]), &analyzer);
    std::optional<Range> range = hull.CoverRange(&analyzer);
    const Expr& extent = a.buffer->shape[d];
    out.region.push_back(range ? *range : Range::FromMinExtent(IntImm(extent.dtype(), 0), extent));
  }
  return WithoutDataDependentBounds(std::move(out));
}

std::vector<BufferRegion> SpliceRegions(const std::vector<BufferRegion>& regions,
                                        const Buffer& removed,
                                        const std::vector<BufferRegion>& added) {
  std::vector<BufferRegion> out;
  size_t position = regions.size();
  for (const BufferRegion& r : regions) {
    if (removed.defined() && r.buffer.same_as(removed)) {
      position = std::min(position, out.size());
      continue;
    }
    out.push_back(r);
  }
  position = std::min(position, out.size());
  std::vector<BufferRegion> inserted;
  for (const BufferRegion& r : added) {
    auto listed = [&](std::vector<BufferRegion>& list) {
      for (BufferRegion& entry : list) {
        if (!entry.buffer.same_as(r.buffer)) continue;
        entry = UnionRegion(entry, r);
        return true;
      }
      return false;
    };
    if (!listed(out) && !listed(inserted)) inserted.push_back(r);
  }
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(position), inserted.begin(), inserted.end());
  return out;
}

std::vector<BufferRegion> SubstituteRegions(const std::vector<BufferRegion>& regions,
                                            const VarMap& vmap, const Buffer& skipped) {
  std::vector<BufferRegion> out;
  for (const BufferRegion& r : regions) {
    if (r.buffer.same_as(skipped)) continue;
    BufferRegion s{r.buffer, {}};
    for (const Range& range : r.region) {
      s.region.push_back(
          Range::FromMinExtent(Substitute(range.min, vmap), Substitute(range.extent, vmap)));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tirtune
