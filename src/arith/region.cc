// Covering regions of buffer accesses: one EvalSet per index, turned into a Range.
#include "tirtune/arith/int_set.h"
#include "tirtune/support/error.h"

namespace tirtune::arith {

std::vector<Range> EvalRegion(const std::vector<Expr>& indices, const VarRangeMap& dom_map,
                              Analyzer* analyzer) {
  Analyzer local;
  Analyzer* an = analyzer ? analyzer : &local;
  std::vector<Range> region;
  region.reserve(indices.size());
  for (size_t d = 0; d < indices.size(); ++d) {
    std::optional<Range> r = EvalSet(indices[d], dom_map, an).CoverRange(an);
    TT_ICHECK(r.has_value(), "index {} of the access cannot be bounded", d);
    region.push_back(*r);
  }
  return region;
}

BufferRegion EvalBufferRegion(const Buffer& buffer, const std::vector<Expr>& indices,
                              const VarRangeMap& dom_map, Analyzer* analyzer) {
  TT_ICHECK(static_cast<int>(indices.size()) == buffer->ndim(),
            "{} indices for buffer {} of {} dimensions", indices.size(), buffer->name,
            buffer->ndim());
  Analyzer local;
  Analyzer* an = analyzer ? analyzer : &local;
  BufferRegion out{buffer, {}};
  for (size_t d = 0; d < indices.size(); ++d) {
    std::optional<Range> r = EvalSet(indices[d], dom_map, an).CoverRange(an);
    out.region.push_back(
        r ? *r : Range::FromMinExtent(IntImm(buffer->shape[d].dtype(), 0), buffer->shape[d]));
  }
  return out;
}

}  // namespace tirtune::arith
