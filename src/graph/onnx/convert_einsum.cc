// Einsum of one or two operands, as the graph's transposes, sums and batched matrix products:
// the contractions models use ("bij,bjk->bik", "bhid,bhjd->bhij", "...ij,...jk->...ik", "i,j->ij",
// "ij->ji", "bij->bj", "ii->i").
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "converters.h"

namespace tirtune::graph::onnx_import {
namespace {

// One operand in the graph with the letters that name its axes, in order.
struct Labeled {
  ValueId value;
  std::string letters;
};

bool Has(const std::string& letters, char c) { return letters.find(c) != std::string::npos; }

// `v` transposed so that its letters read `order` (a permutation of them); no-op when they do.
Labeled Reordered(ImportContext& ctx, const Labeled& v, const std::string& order) {
  if (v.letters == order) return v;
  Ints perm;
  for (char c : order) perm.push_back(static_cast<int64_t>(v.letters.find(c)));
  return {ctx.Emit("transpose", {v.value}, {{"perm", perm}}), order};
}

// `terms` and `out` with each "..." replaced by letters the equation does not use, one per axis
// it stands for (aligned to the right across operands, as NumPy broadcasts); with no explicit
// output, `*out` is left empty and `*ellipsis` gets the letters, which lead the implicit output.
void ExpandEllipses(ImportContext& ctx, const std::string& equation,
                    std::vector<std::string>* terms, std::string* out, std::string* ellipsis) {
  std::string unused;
  for (char c = 'A'; c <= 'Z'; ++c) {
    if (!Has(equation, c)) unused += c;
  }
  for (char c = 'a'; c <= 'z'; ++c) {
    if (!Has(equation, c)) unused += c;
  }
  size_t widest = 0;
  for (size_t i = 0; i < terms->size(); ++i) {
    const std::string& t = (*terms)[i];
    size_t at = t.find("...");
    if (at == std::string::npos) continue;
    if (t.find("...", at + 3) != std::string::npos) ctx.Fail("operand {} has two ellipses", i);
    size_t rank = ctx.Input(static_cast<int>(i)).shape.size();
    size_t named = t.size() - 3;
    if (named > rank) ctx.Fail("operand {} has rank {}, fewer than its letters", i, rank);
    widest = std::max(widest, rank - named);
  }
  if (widest > unused.size()) ctx.Fail("equation '{}': too many axes under '...'", equation);
  *ellipsis = unused.substr(0, widest);
  for (size_t i = 0; i < terms->size(); ++i) {
    std::string& t = (*terms)[i];
    size_t at = t.find("...");
    if (at == std::string::npos) continue;
    size_t axes = ctx.Input(static_cast<int>(i)).shape.size() - (t.size() - 3);
    t.replace(at, 3, ellipsis->substr(widest - axes));
  }
  if (size_t at = out->find("..."); at != std::string::npos) out->replace(at, 3, *ellipsis);
}

// `v` with its repeated letters reduced to one axis each: the diagonal, as the sum over the
// second axis of v times an identity mask made here.
Labeled Diagonals(ImportContext& ctx, Labeled v, const std::map<char, int64_t>& extent) {
  for (size_t d2 = 0; d2 < v.letters.size(); ++d2) {
    size_t d1 = v.letters.find(v.letters[d2]);
    if (d1 == d2) continue;
    int64_t n = extent.at(v.letters[d2]);
    Ints shape(v.letters.size(), 1);
    shape[d1] = shape[d2] = n;
    NDArray eye = HostEmpty(shape, DataType::Float(32));
    for (int64_t i = 0; i < n * n; ++i) eye.SetDouble(i, i / n == i % n ? 1.0 : 0.0);
    ValueId masked =
        ctx.Emit("multiply", {v.value, ctx.Constant(HostCast(eye, ctx.Input(0).dtype))});
    v.value = ctx.Emit("sum", {masked},
                       {{"axes", Ints{static_cast<int64_t>(d2)}}, {"keepdims", int64_t{0}}});
    v.letters.erase(d2, 1);
    --d2;
  }
  return v;
}

}  // namespace

// Einsum: each operand's letters that neither the other operand nor the output has are summed
// first. With two operands, the letters both have and the output keeps are batch axes, those both
// have and the output drops are contracted, and the rest are A's rows and B's columns: one
// batch_matmul of A as [batch, rows, contracted] and B as [batch, contracted, columns], reshaped
// and transposed into the output's order. An ellipsis stands for fresh letters; a letter
// repeated in one operand takes the diagonal first. Not supported: more than two operands, axes
// under an ellipsis that broadcast (1 against n), and a scalar result.
void ConvertEinsum(ImportContext& ctx) {
  std::string equation;
  for (char c : ctx.AttrString("equation", "")) {
    if (c != ' ') equation += c;
  }
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  int n = ctx.NumInputs();
  if (static_cast<int>(terms.size()) != n) {
    ctx.Fail("equation '{}' names {} operands, the node has {}", equation, terms.size(), n);
  }
  if (n > 2) ctx.Fail("{} operands; only one or two are supported", n);
  std::string out = arrow == std::string::npos ? "" : equation.substr(arrow + 2);
  std::string ellipsis;
  ExpandEllipses(ctx, equation, &terms, &out, &ellipsis);
  std::map<char, int64_t> extent;
  std::map<char, int> uses;
  if (!ctx.UnifyTypes(ctx.InputIndices()).is_float()) {
    ctx.Fail("operands of {}", ctx.Input(0).dtype.str());
  }
  for (int i = 0; i < n; ++i) {
    const std::vector<int64_t>& shape = ctx.Input(i).shape;
    const std::string& t = terms[static_cast<size_t>(i)];
    if (t.size() != shape.size()) {
      ctx.Fail("operand {} has rank {}, the equation '{}' gives it {} letters", i, shape.size(),
               equation, t.size());
    }
    for (size_t d = 0; d < t.size(); ++d) {
      char c = t[d];
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        ctx.Fail("equation '{}': '{}' is not a letter", equation, c);
      }
      auto [it, fresh] = extent.emplace(c, shape[d]);
      if (!fresh && it->second != shape[d]) {
        ctx.Fail("equation '{}': {} has extents {} and {}", equation,
                 Has(ellipsis, c) ? "an axis under '...'" : fmt::format("letter '{}'", c),
                 it->second, shape[d]);
      }
      if (t.find(c) == d) ++uses[c];
    }
  }
  if (arrow == std::string::npos) {  // implicit: the ellipsis, then letters used once, sorted
    out = ellipsis;
    for (const auto& [c, count] : uses) {
      if (count == 1 && !Has(ellipsis, c)) out += c;
    }
  } else {
    for (size_t d = 0; d < out.size(); ++d) {
      if (!uses.count(out[d]) || out.find(out[d]) != d) {
        ctx.Fail("equation '{}': output letter '{}' is not an operand's or repeats", equation,
                 out[d]);
      }
    }
  }
  if (out.empty()) ctx.Fail("equation '{}': a scalar result is not supported", equation);

  // Step 1. Sum each operand over the letters only it has and the output drops.
  std::vector<Labeled> ops;
  for (int i = 0; i < n; ++i) {
    const std::string& t = terms[static_cast<size_t>(i)];
    const std::string other = n == 2 ? terms[static_cast<size_t>(1 - i)] : "";
    Labeled v = Diagonals(ctx, {ctx.Plain(i), t}, extent);
    Ints axes;
    std::string kept;
    for (size_t d = 0; d < v.letters.size(); ++d) {
      char c = v.letters[d];
      if (!Has(out, c) && !Has(other, c)) {
        axes.push_back(static_cast<int64_t>(d));
      } else {
        kept += c;
      }
    }
    if (!axes.empty()) {
      if (kept.empty()) ctx.Fail("equation '{}': operand {} sums to a scalar", equation, i);
      v = {ctx.Emit("sum", {v.value}, {{"axes", axes}, {"keepdims", int64_t{0}}}), kept};
    }
    ops.push_back(v);
  }
  if (n == 1) {
    ctx.SetPlain(0, Reordered(ctx, ops[0], out).value);
    return;
  }

  // Step 2. One batched matrix product.
  std::string batch, rows, columns, contracted;
  const std::string &a = ops[0].letters, &b = ops[1].letters;
  for (char c : a) {
    if (Has(b, c)) {
      (Has(out, c) ? batch : contracted) += c;
    } else {
      rows += c;
    }
  }
  for (char c : b) {
    if (!Has(a, c)) columns += c;
  }
  auto size = [&](const std::string& letters) {
    int64_t s = 1;
    for (char c : letters) s *= extent[c];
    return s;
  };
  int64_t nb = size(batch), m = size(rows), k = size(contracted), nc = size(columns);
  ValueId lhs_value = Reordered(ctx, ops[0], batch + rows + contracted).value;
  ValueId rhs_value = Reordered(ctx, ops[1], batch + contracted + columns).value;
  ValueId y;
  if (batch.empty()) {
    y = ctx.Emit("matmul", {ctx.Reshaped(lhs_value, {m, k}), ctx.Reshaped(rhs_value, {k, nc})});
  } else {
    y = ctx.Emit("batch_matmul",
                 {ctx.Reshaped(lhs_value, {nb, m, k}), ctx.Reshaped(rhs_value, {nb, k, nc})});
  }
  std::string letters = batch + rows + columns;
  Ints shape;
  for (char c : letters) shape.push_back(extent[c]);
  ctx.SetPlain(0, Reordered(ctx, {ctx.Reshaped(y, shape), letters}, out).value);
}

}  // namespace tirtune::graph::onnx_import
