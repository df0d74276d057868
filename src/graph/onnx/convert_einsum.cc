// Einsum of one or two operands with explicit subscripts, as the graph's transposes, sums and
// batched matrix products: the contractions models use ("bij,bjk->bik", "bhid,bhjd->bhij",
// "i,j->ij", "ij->ji", "bij->bj").
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

}  // namespace

// Einsum: each operand's letters that neither the other operand nor the output has are summed
// first. With two operands, the letters both have and the output keeps are batch axes, those both
// have and the output drops are contracted, and the rest are A's rows and B's columns: one
// batch_matmul of A as [batch, rows, contracted] and B as [batch, contracted, columns], reshaped
// and transposed into the output's order. Not supported: "..." (ellipsis), a letter repeated in
// one operand (diagonals), more than two operands, and a scalar result.
void ConvertEinsum(ImportContext& ctx) {
  std::string equation;
  for (char c : ctx.AttrString("equation", "")) {
    if (c != ' ') equation += c;
  }
  if (equation.find("...") != std::string::npos) {
    ctx.Fail("equation '{}': an ellipsis (...) is not supported", equation);
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
  std::map<char, int64_t> extent;
  std::map<char, int> uses;
  for (int i = 0; i < n; ++i) {
    ctx.RequireFloat(i);
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
      if (t.find(c) != d) {
        ctx.Fail("equation '{}': letter '{}' repeats in operand {} (diagonals are not supported)",
                 equation, c, i);
      }
      auto [it, fresh] = extent.emplace(c, shape[d]);
      if (!fresh && it->second != shape[d]) {
        ctx.Fail("equation '{}': letter '{}' has extents {} and {}", equation, c, it->second,
                 shape[d]);
      }
      ++uses[c];
    }
  }
  std::string out;
  if (arrow == std::string::npos) {  // implicit: the letters used once, alphabetically
    for (const auto& [c, count] : uses) {
      if (count == 1) out += c;
    }
  } else {
    out = equation.substr(arrow + 2);
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
    Labeled v{ctx.Plain(i), t};
    Ints axes;
    std::string kept;
    for (size_t d = 0; d < t.size(); ++d) {
      if (!Has(out, t[d]) && !Has(other, t[d])) {
        axes.push_back(static_cast<int64_t>(d));
      } else {
        kept += t[d];
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
