// DetectIterMap: rewrites each binding into a sum of digits of loop marks, fusing a sum into a
// new mark when it is divided, then checks that the digits tile every mark exactly once. The
// rewrite is TVM's IterMapRewriter restricted to constant extents and no predicates.
#include "tirtune/arith/iter_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "const_int_bound.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/substitute.h"

namespace tirtune::arith {
namespace {

// A binding while it is rewritten: digits (any scale, largest first after Normalize) plus a
// loop-invariant base.
struct Sum {
  std::vector<IterSplit> args;
  Expr base;
};

struct LoopInfo {
  Expr min;
  std::optional<int64_t> extent;  // nullopt when not constant
  int mark = -1;                  // created on first use
};

class IterMapRewriter {
 public:
  IterMapRewriter(const VarRangeMap& loop_doms, const Analyzer* analyzer)
      : analyzer_(analyzer ? *analyzer : Analyzer()) {
    for (const auto& [var, range] : loop_doms) {
      Expr extent = analyzer_.Simplify(range.extent);
      const int64_t* c = AsConstInt(extent);
      if (c && *c == 1) {
        unit_loops_[var.get()] = range.min;
        continue;
      }
      loops_[var.get()] = LoopInfo{range.min, c ? std::optional<int64_t>(*c) : std::nullopt};
      loop_vars_.push_back(var);
      analyzer_.Bind(var, range);
    }
    // Unused-loop errors come out in name order, not hash order.
    std::sort(loop_vars_.begin(), loop_vars_.end(),
              [](const Var& a, const Var& b) { return a->name < b->name; });
  }

  IterMapResult Run(const std::vector<Expr>& bindings) {
    IterMapResult result;
    for (size_t k = 0; k < bindings.size(); ++k) {
      Expr e = Substitute(bindings[k], [&](const VarNode* v) -> Expr {
        auto it = unit_loops_.find(v);
        return it == unit_loops_.end() ? Expr() : it->second;
      });
      std::optional<Sum> sum = Rewrite(e);
      // Step 1. Each binding must be one dense mixed-radix number of its digits.
      if (sum && !sum->args.empty() && !Fuse(*sum, /*register_mark=*/false)) sum.reset();
      if (!sum) {
        result.error = fmt::format("binding {} ({}): {}", k, ToString(bindings[k]), error_);
        return result;
      }
      IterSum out{sum->args, analyzer_.Simplify(sum->base), 1};
      for (const IterSplit& s : out.args) out.extent *= s.extent;
      result.indices.push_back(std::move(out));
    }
    // Step 2. The digits of every mark tile it exactly once, and every loop is used.
    std::vector<std::vector<IterSplit>> uses(marks_.size());
    for (const IterSum& s : result.indices) {
      for (const IterSplit& d : s.args) uses[d.mark].push_back(d);
    }
    for (const IterMark& m : marks_) {
      for (const IterSplit& d : m.fused) uses[d.mark].push_back(d);
    }
    for (size_t m = 0; m < marks_.size(); ++m) {
      if (std::string why = CheckTiling(static_cast<int>(m), uses[m]); !why.empty()) {
        result.error = why;
        return result;
      }
    }
    for (const Var& v : loop_vars_) {
      if (loops_[v.get()].mark < 0) {
        result.error = fmt::format("loop {} is not used by any binding", v->name);
        return result;
      }
    }
    result.marks = marks_;
    return result;
  }

 private:
  std::optional<Sum> Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return std::nullopt;
  }

  bool UsesLoop(const Expr& e) const {
    return UsesVar(e, [&](const VarNode* v) { return loops_.count(v) > 0; });
  }

  std::string MarkName(int mark) const {
    const IterMark& m = marks_[mark];
    if (m.is_loop()) return m.loop->name;
    std::string names;
    for (const IterSplit& d : m.fused) names += (names.empty() ? "" : ", ") + DigitName(d);
    return "fuse(" + names + ")";
  }

  std::string DigitName(const IterSplit& d) const {
    if (d.mark < 0) return "?";
    std::string name = MarkName(d.mark);
    if (d.lower_factor != 1) name += fmt::format(" // {}", d.lower_factor);
    if (d.lower_factor * d.extent != marks_[d.mark].extent) name += fmt::format(" % {}", d.extent);
    return name;
  }

  // Merges equal digits, joins adjacent digits of one mark and orders by scale, largest first.
  static void Normalize(Sum* s) {
    std::vector<IterSplit> out;
    for (const IterSplit& d : s->args) {
      auto same = std::find_if(out.begin(), out.end(), [&](const IterSplit& o) {
        return o.mark == d.mark && o.lower_factor == d.lower_factor && o.extent == d.extent;
      });
      if (same != out.end()) {
        same->scale += d.scale;
      } else {
        out.push_back(d);
      }
    }
    // A zero scale or a digit of extent 1 (always 0) contributes nothing.
    out.erase(std::remove_if(out.begin(), out.end(),
                             [](const IterSplit& d) { return d.scale == 0 || d.extent == 1; }),
              out.end());
    // (m // L) % E1 * s + (m // (L*E1)) % E2 * (s*E1) == (m // L) % (E1*E2) * s.
    for (bool joined = true; joined;) {
      joined = false;
      for (size_t a = 0; a < out.size() && !joined; ++a) {
        for (size_t b = 0; b < out.size() && !joined; ++b) {
          const IterSplit& lo = out[a];
          const IterSplit& hi = out[b];
          if (a == b || lo.mark != hi.mark || hi.lower_factor != lo.lower_factor * lo.extent ||
              hi.scale != lo.scale * lo.extent) {
            continue;
          }
          out[a].extent *= hi.extent;
          out.erase(out.begin() + static_cast<long>(b));
          joined = true;
        }
      }
    }
    std::sort(out.begin(), out.end(), [](const IterSplit& a, const IterSplit& b) {
      if (a.scale != b.scale) return a.scale > b.scale;
      if (a.mark != b.mark) return a.mark < b.mark;
      return a.lower_factor > b.lower_factor;
    });
    s->args = std::move(out);
  }

  int LoopMark(const VarNode* v) {
    LoopInfo& info = loops_[v];
    if (info.mark < 0) {
      IterMark m;
      m.loop = Var(ObjectPtr<const VarNode>(v));
      m.loop_min = info.min;
      m.extent = *info.extent;
      info.mark = static_cast<int>(marks_.size());
      marks_.push_back(std::move(m));
    }
    return info.mark;
  }

  std::optional<Sum> Rewrite(const Expr& e) {
    if (!UsesLoop(e)) return Sum{{}, e};
    switch (e->kind()) {
      case NodeKind::kVar: {
        const auto* v = e.as<VarNode>();
        if (!loops_[v].extent)
          return Fail(fmt::format("loop {} has a non-constant extent", v->name));
        int m = LoopMark(v);
        return Sum{{IterSplit{m, 1, marks_[m].extent, 1}}, loops_[v].min};
      }
      case NodeKind::kAdd:
      case NodeKind::kSub: {
        std::optional<Sum> a = Rewrite(BinaryA(e.get())), b = Rewrite(BinaryB(e.get()));
        if (!a || !b) return std::nullopt;
        bool sub = e->kind() == NodeKind::kSub;
        for (IterSplit d : b->args) {
          if (sub) d.scale = -d.scale;
          a->args.push_back(d);
        }
        a->base = sub ? a->base - b->base : a->base + b->base;
        Normalize(&*a);
        return a;
      }
      case NodeKind::kMul: {
        const Expr& x = BinaryA(e.get());
        const Expr& y = BinaryB(e.get());
        bool ux = UsesLoop(x), uy = UsesLoop(y);
        if (ux && uy) return Fail("a product of two loop-dependent values is not affine");
        Expr factor = analyzer_.Simplify(ux ? y : x);
        const int64_t* c = AsConstInt(factor);
        if (!c)
          return Fail("a loop-dependent value is scaled by the non-constant " + ToString(factor));
        std::optional<Sum> s = Rewrite(ux ? x : y);
        if (!s) return std::nullopt;
        for (IterSplit& d : s->args) {
          if (__builtin_mul_overflow(d.scale, *c, &d.scale)) return Fail("scale overflows int64");
        }
        s->base = s->base * factor;
        Normalize(&*s);
        return s;
      }
      case NodeKind::kFloorDiv:
      case NodeKind::kFloorMod:
      case NodeKind::kDiv: {
        const Expr& x = BinaryA(e.get());
        Expr divisor = analyzer_.Simplify(BinaryB(e.get()));
        const int64_t* c = AsConstInt(divisor);
        if (UsesLoop(divisor) || !c || *c <= 0) {
          return Fail("division by " + ToString(divisor) + ", not a positive constant");
        }
        // Truncation is floor division on a non-negative dividend.
        if (e->kind() == NodeKind::kDiv && analyzer_.ConstIntBound(x).min_value < 0) {
          return Fail("truncating division of a value that may be negative");
        }
        std::optional<Sum> s = Rewrite(x);
        if (!s) return std::nullopt;
        return e->kind() == NodeKind::kFloorMod ? ModSum(*s, *c) : DivSum(*s, *c);
      }
      default:
        return Fail(fmt::format("{} of loop variables is not affine", ToString(e)));
    }
  }

  // The sum as one digit of a (possibly new, fused) mark plus its base. The digits must form a
  // mixed-radix number: sorted by scale, each scale is the previous scale times its extent.
  std::optional<std::pair<IterSplit, Expr>> Fuse(const Sum& s, bool register_mark) {
    for (const IterSplit& d : s.args) {
      if (d.scale <= 0) {
        Fail(fmt::format("{} has the negative coefficient {}", DigitName(d), d.scale));
        return std::nullopt;
      }
    }
    if (s.args.size() == 1) return std::make_pair(s.args[0], s.base);
    // s.args is sorted by scale, largest first: walk it from the smallest.
    int64_t expected = s.args.back().scale;
    for (auto it = s.args.rbegin(); it != s.args.rend(); ++it) {
      if (it->scale != expected) {
        const IterSplit& prev = *(it - 1);
        Fail(it->scale < expected
                 ? fmt::format("{} (scale {}) overlaps {} (scale {}, extent {})", DigitName(*it),
                               it->scale, DigitName(prev), prev.scale, prev.extent)
                 : fmt::format("{} (scale {}) leaves a gap above {} (scale {}, extent {})",
                               DigitName(*it), it->scale, DigitName(prev), prev.scale,
                               prev.extent));
        return std::nullopt;
      }
      if (__builtin_mul_overflow(expected, it->extent, &expected)) {
        Fail("fused extent overflows int64");
        return std::nullopt;
      }
    }
    int64_t base_scale = s.args.back().scale;
    IterSplit out{-1, 1, expected / base_scale, base_scale};
    if (!register_mark) return std::make_pair(out, s.base);
    std::vector<IterSplit> fused = s.args;
    for (IterSplit& d : fused) d.scale /= base_scale;
    auto same = std::find_if(marks_.begin(), marks_.end(),
                             [&](const IterMark& m) { return m.fused == fused; });
    if (same != marks_.end()) {
      out.mark = static_cast<int>(same - marks_.begin());
    } else {
      IterMark m;
      m.fused = std::move(fused);
      m.extent = out.extent;
      out.mark = static_cast<int>(marks_.size());
      marks_.push_back(std::move(m));
    }
    return std::make_pair(out, s.base);
  }

  // Splits the fused digit `d` (value d.scale*y + base, base constant) for a division by c.
  // Splits a sum at c without fusing when its digits already fall on either side of c:
  // s == H*c + L + q*c + r with 0 <= L + r < c gives floordiv = H + q and floormod = L + r,
  // e.g. (i*4 + j) // 4 == i for j in [0, 4).
  std::optional<std::pair<Sum, Sum>> SplitAligned(const Sum& s, int64_t c) {
    const int64_t* b = AsConstInt(analyzer_.Simplify(s.base));
    if (!b) return std::nullopt;
    DataType t = s.base.dtype();
    Sum high{{}, IntImm(t, FloorDivInt(*b, c))}, low{{}, IntImm(t, FloorModInt(*b, c))};
    int64_t low_max = FloorModInt(*b, c);
    for (const IterSplit& d : s.args) {
      if (d.scale <= 0) return std::nullopt;
      if (d.scale % c == 0) {
        high.args.push_back(IterSplit{d.mark, d.lower_factor, d.extent, d.scale / c});
        continue;
      }
      int64_t span;
      if (__builtin_mul_overflow(d.extent - 1, d.scale, &span) ||
          __builtin_add_overflow(low_max, span, &low_max) || low_max >= c) {
        return std::nullopt;
      }
      low.args.push_back(d);
    }
    return std::make_pair(high, low);
  }

  std::optional<Sum> DivSum(const Sum& s, int64_t c) {
    if (s.args.empty()) return Sum{{}, FloorDiv(s.base, IntImm(s.base.dtype(), c))};
    if (auto split = SplitAligned(s, c)) return split->first;
    auto fused = Fuse(s, /*register_mark=*/true);
    if (!fused) return std::nullopt;
    auto [d, base] = *fused;
    const int64_t* b = AsConstInt(analyzer_.Simplify(base));
    if (!b) return Fail("the dividend has the non-constant offset " + ToString(base));
    DataType t = base.dtype();
    // floordiv(s*y + b, c) == (s/c)*y + floordiv(b, c) when c divides s.
    if (d.scale % c == 0) {
      d.scale /= c;
      return Sum{{d}, IntImm(t, FloorDivInt(*b, c))};
    }
    if (c % d.scale != 0) {
      return Fail(
          fmt::format("{} with scale {} cannot be divided by {}", DigitName(d), d.scale, c));
    }
    // floordiv(s*y + s*q + r, s*m) == floordiv(y + q, m) == floordiv(y, m) + q/m  (m | q).
    int64_t m = c / d.scale, q = FloorDivInt(*b, d.scale);
    if (q % m != 0) return Fail(fmt::format("offset {} is not a multiple of {}", *b, c));
    if (m >= d.extent) return Sum{{}, IntImm(t, q / m)};
    if (d.extent % m != 0) {
      return Fail(fmt::format("extent {} of {} is not divisible by {}", d.extent, DigitName(d), m));
    }
    return Sum{{IterSplit{d.mark, d.lower_factor * m, d.extent / m, 1}}, IntImm(t, q / m)};
  }

  std::optional<Sum> ModSum(const Sum& s, int64_t c) {
    if (s.args.empty()) return Sum{{}, FloorMod(s.base, IntImm(s.base.dtype(), c))};
    if (auto split = SplitAligned(s, c)) return split->second;
    auto fused = Fuse(s, /*register_mark=*/true);
    if (!fused) return std::nullopt;
    auto [d, base] = *fused;
    const int64_t* b = AsConstInt(analyzer_.Simplify(base));
    if (!b) return Fail("the dividend has the non-constant offset " + ToString(base));
    DataType t = base.dtype();
    // A multiple of c vanishes (and so do the loop values it carried).
    if (d.scale % c == 0) return Sum{{}, IntImm(t, FloorModInt(*b, c))};
    if (c % d.scale != 0) {
      return Fail(
          fmt::format("{} with scale {} cannot be taken modulo {}", DigitName(d), d.scale, c));
    }
    // floormod(s*y + s*q + r, s*m) == s*floormod(y + q, m) + r == s*floormod(y, m) + r  (m | q).
    int64_t m = c / d.scale, q = FloorDivInt(*b, d.scale), r = FloorModInt(*b, d.scale);
    if (q % m != 0) return Fail(fmt::format("offset {} is not a multiple of {}", *b, c));
    if (m >= d.extent) return Sum{{d}, IntImm(t, r)};
    if (d.extent % m != 0) {
      return Fail(fmt::format("extent {} of {} is not divisible by {}", d.extent, DigitName(d), m));
    }
    return Sum{{IterSplit{d.mark, d.lower_factor, m, d.scale}}, IntImm(t, r)};
  }

  // The digits of a mark must be its mixed-radix decomposition: lower factors 1, E0, E0*E1, ...
  // up to the mark's extent, each used once.
  std::string CheckTiling(int mark, std::vector<IterSplit> uses) const {
    const IterMark& m = marks_[mark];
    std::string what = m.is_loop() ? "loop " + m.loop->name : "fused iterator " + MarkName(mark);
    std::sort(uses.begin(), uses.end(), [](const IterSplit& a, const IterSplit& b) {
      return a.lower_factor < b.lower_factor;
    });
    int64_t expected = 1;
    for (const IterSplit& d : uses) {
      if (d.lower_factor < expected) return what + " is used more than once";
      if (d.lower_factor > expected) {
        IterSplit missing{mark, expected, d.lower_factor / expected, 1};
        return fmt::format("{} is only partly used: nothing uses {}", what, DigitName(missing));
      }
      expected *= d.extent;
    }
    if (expected != m.extent) {
      IterSplit missing{mark, expected, m.extent / expected, 1};
      return fmt::format("{} is only partly used: nothing uses {}", what, DigitName(missing));
    }
    return "";
  }

  Analyzer analyzer_;
  std::unordered_map<const VarNode*, LoopInfo> loops_;
  std::unordered_map<const VarNode*, Expr> unit_loops_;
  std::vector<Var> loop_vars_;
  std::vector<IterMark> marks_;
  std::string error_;
};

}  // namespace

IterMapResult DetectIterMap(const std::vector<Expr>& bindings, const VarRangeMap& loop_doms,
                            Analyzer* analyzer) {
  return IterMapRewriter(loop_doms, analyzer).Run(bindings);
}

Expr IterMarkToExpr(int mark, const IterMapResult& map) {
  const IterMark& m = map.marks[mark];
  if (m.is_loop()) return IsConstInt(m.loop_min, 0) ? Expr(m.loop) : m.loop - m.loop_min;
  Expr acc;
  for (const IterSplit& d : m.fused) {
    Expr e = IterSplitToExpr(d, map);
    acc = acc.defined() ? acc + e : e;
  }
  return acc;
}

Expr IterSplitToExpr(const IterSplit& split, const IterMapResult& map) {
  Expr e = IterMarkToExpr(split.mark, map);
  DataType t = e.dtype();
  if (split.lower_factor != 1) e = FloorDiv(e, IntImm(t, split.lower_factor));
  if (split.lower_factor * split.extent != map.marks[split.mark].extent) {
    e = FloorMod(e, IntImm(t, split.extent));
  }
  return split.scale == 1 ? e : e * IntImm(t, split.scale);
}

Expr IterSumToExpr(const IterSum& sum, const IterMapResult& map) {
  Expr acc;
  for (const IterSplit& d : sum.args) {
    Expr e = IterSplitToExpr(d, map);
    acc = acc.defined() ? acc + e : e;
  }
  if (!acc.defined()) return sum.base;
  return IsConstInt(sum.base, 0) ? acc : acc + sum.base;
}

}  // namespace tirtune::arith
