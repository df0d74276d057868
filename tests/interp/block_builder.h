// Shorthands for writing block-form test IR by hand: a block realize with its iterators, the root
// block, a serial loop, and reading a whole NDArray back as doubles.
#pragma once

#include <string>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/ndarray.h"

namespace tirtune::test_ir {

/// One block iterator: `var = axis.<kind>(extent, binding)`.
struct Iter {
  Var var;
  Expr extent;
  IterKind kind;
  Expr binding;
};

inline Iter Spatial(Var var, Expr extent, Expr binding) {
  return {std::move(var), std::move(extent), IterKind::kSpatial, std::move(binding)};
}
inline Iter Reduce(Var var, Expr extent, Expr binding) {
  return {std::move(var), std::move(extent), IterKind::kReduce, std::move(binding)};
}

/// `with block(name)` binding `iters`, with optional init, predicate and allocated buffers.
/// Read/write regions are left empty: the interpreter does not use them.
inline Stmt Realize(const std::string& name, const std::vector<Iter>& iters, Stmt body,
                    Stmt init = Stmt(), Expr predicate = Bool(true),
                    std::vector<Buffer> alloc_buffers = {}) {
  std::vector<IterVar> iter_vars;
  std::vector<Expr> values;
  for (const Iter& it : iters) {
    iter_vars.push_back({it.var, Range::FromMinExtent(Expr(0), it.extent), it.kind});
    values.push_back(it.binding);
  }
  return MakeBlockRealize(values, std::move(predicate),
                          MakeBlock(name, iter_vars, {}, {}, std::move(body), std::move(init),
                                    std::move(alloc_buffers)));
}

/// The root block of a block-form function.
inline Stmt Root(Stmt body, std::vector<Buffer> alloc_buffers = {}) {
  return Realize("root", {}, std::move(body), Stmt(), Bool(true), std::move(alloc_buffers));
}

/// `for var in range(extent)`.
inline Stmt Loop(const Var& var, int64_t extent, Stmt body) {
  return MakeFor(var, Expr(int64_t{0}), Expr(extent), ForKind::kSerial, std::move(body));
}

inline Expr Load(const Buffer& b, std::vector<Expr> indices) {
  return MakeBufferLoad(b, std::move(indices));
}

inline Stmt Store(const Buffer& b, Expr value, std::vector<Expr> indices) {
  return MakeBufferStore(b, std::move(value), std::move(indices));
}

/// An NDArray of `dtype` holding `values` (row-major).
inline NDArray ArrayOf(std::vector<int64_t> shape, DataType dtype,
                       const std::vector<double>& values) {
  NDArray a = NDArray::Empty(std::move(shape), dtype);
  for (size_t i = 0; i < values.size(); ++i) a.SetDouble(static_cast<int64_t>(i), values[i]);
  return a;
}

inline std::vector<double> Values(const NDArray& a) {
  std::vector<double> out;
  for (int64_t i = 0; i < a.size(); ++i) out.push_back(a.GetDouble(i));
  return out;
}

}  // namespace tirtune::test_ir
