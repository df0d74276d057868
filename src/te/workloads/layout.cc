// Pad, reshape, transpose and concatenate, and their workloads.
#include "tirtune/te/layout.h"

#include <algorithm>

#include "shape_checks.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"
#include "tirtune/te/create_prim_func.h"
#include "workload_families.h"

namespace tirtune::te {

Tensor Pad(const Tensor& data, const std::vector<int64_t>& pad_before,
           const std::vector<int64_t>& pad_after, double pad_value, std::string name) {
  int ndim = data.ndim();
  if (static_cast<int>(pad_before.size()) != ndim || static_cast<int>(pad_after.size()) != ndim) {
    TT_USER_ERROR("pad: {} has rank {} but the padding has {} and {} entries", data.name(), ndim,
                  pad_before.size(), pad_after.size());
  }
  std::vector<Expr> shape;
  for (int d = 0; d < ndim; ++d) {
    if (pad_before[d] < 0 || pad_after[d] < 0) TT_USER_ERROR("pad: negative padding");
    shape.push_back(data.dim(d) + pad_before[d] + pad_after[d]);
  }
  return Compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> indices;
        Expr in_bounds = Bool(true);
        for (int d = 0; d < ndim; ++d) {
          // Both branches of a select may be evaluated (ir/expr.h), so the load in the padding
          // is clamped into the input; the select then discards it.
          Expr index = v[d] - pad_before[d];
          if (pad_before[d] > 0) {
            in_bounds = in_bounds && v[d] >= pad_before[d];
            index = Max(index, Expr(0));
          }
          if (pad_after[d] > 0) {
            in_bounds = in_bounds && v[d] < data.dim(d) + pad_before[d];
            index = Min(index, Expr(data.dim(d) - 1));
          }
          indices.push_back(index);
        }
        Expr value = data(indices);
        if (IsConstInt(in_bounds, 1)) return value;
        return Select(in_bounds, value, MakeConst(data.dtype(), pad_value));
      },
      std::move(name));
}

Tensor Reshape(const Tensor& data, const std::vector<int64_t>& new_shape, std::string name) {
  int64_t in_size = 1, out_size = 1;
  for (int d = 0; d < data.ndim(); ++d) in_size *= data.dim(d);
  for (int64_t e : new_shape) out_size *= e;
  if (in_size != out_size) {
    TT_USER_ERROR("reshape: {} has {} elements, the new shape {}", data.name(), in_size, out_size);
  }
  return Compute(
      std::vector<Expr>(new_shape.begin(), new_shape.end()),
      [&](const std::vector<Var>& v) {
        // Row-major position of the output element, then the input index holding it.
        Expr flat = Expr(0);
        for (size_t d = 0; d < v.size(); ++d) flat = flat * new_shape[d] + v[d];
        std::vector<Expr> indices(data.ndim());
        int64_t stride = 1;
        for (int d = data.ndim() - 1; d >= 0; --d) {
          Expr index = stride == 1 ? flat : FloorDiv(flat, stride);
          if (d > 0) index = FloorMod(index, data.dim(d));
          indices[d] = index;
          stride *= data.dim(d);
        }
        return data(indices);
      },
      std::move(name));
}

Tensor Transpose(const Tensor& data, const std::vector<int>& axes, std::string name) {
  std::vector<int> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  for (int d = 0; d < static_cast<int>(sorted.size()); ++d) {
    if (sorted[d] != d || static_cast<int>(axes.size()) != data.ndim()) {
      TT_USER_ERROR("transpose: the axes are not a permutation of {}'s {} dimensions", data.name(),
                    data.ndim());
    }
  }
  std::vector<Expr> shape;
  for (int axis : axes) shape.push_back(data.dim(axis));
  return Compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> indices(data.ndim());
        for (size_t d = 0; d < axes.size(); ++d) indices[axes[d]] = v[d];
        return data(indices);
      },
      std::move(name));
}

Tensor Concatenate(const Tensor& a, const Tensor& b, int axis, std::string name) {
  CheckRank(b, a.ndim(), "concatenate");
  if (axis < 0 || axis >= a.ndim()) TT_USER_ERROR("concatenate: no axis {}", axis);
  std::vector<Expr> shape;
  for (int d = 0; d < a.ndim(); ++d) {
    if (d != axis) CheckDimsMatch(a, d, b, d, "concatenate");
    shape.push_back(d == axis ? a.dim(d) + b.dim(d) : a.dim(d));
  }
  return Compute(
      shape,
      [&](const std::vector<Var>& v) {
        // Both branches of a select may be evaluated (ir/expr.h): clamp each load into its input.
        std::vector<Expr> in_a = AsIndices(v), in_b = AsIndices(v);
        in_a[axis] = Min(v[axis], Expr(a.dim(axis) - 1));
        in_b[axis] = Max(v[axis] - a.dim(axis), Expr(0));
        return Select(v[axis] < a.dim(axis), a(in_a), b(in_b));
      },
      std::move(name));
}

std::vector<WorkloadDef> LayoutWorkloads() {
  std::vector<WorkloadDef> defs;
  auto nhwc_elements = [](const std::vector<int64_t>& s) {
    return static_cast<double>(s[0] * s[1] * s[2] * s[3]);
  };
  // Data movement does no arithmetic; one "operation" per element keeps throughput comparable.
  defs.push_back(WorkloadDef{
      .name = "pad",
      .params = "N,H,W,C,pad",
      .summary = "zero padding of H and W by `pad` on each side (NHWC)",
      .min_args = 5,
      .max_args = 5,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor data = Input({s[0], s[1], s[2], s[3]}, "data");
            return CreatePrimFunc({data, Pad(data, {0, s[4], s[4], 0}, {0, s[4], s[4], 0})}, "pad");
          },
      .flops =
          [](const std::vector<int64_t>& s) {
            return static_cast<double>(s[0] * (s[1] + 2 * s[4]) * (s[2] + 2 * s[4]) * s[3]);
          },
      .benchmark_shapes = {},
      .small_shape = {1, 5, 6, 3, 2},
  });
  defs.push_back(WorkloadDef{
      .name = "reshape",
      .params = "N,H,W,C",
      .summary = "flatten NHWC to (N, H*W*C)",
      .min_args = 4,
      .max_args = 4,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor data = Input({s[0], s[1], s[2], s[3]}, "data");
            return CreatePrimFunc({data, Reshape(data, {s[0], s[1] * s[2] * s[3]})}, "reshape");
          },
      .flops = nhwc_elements,
      .benchmark_shapes = {},
      .small_shape = {2, 3, 4, 5},
  });
  defs.push_back(WorkloadDef{
      .name = "transpose",
      .params = "N,H,W,C",
      .summary = "NHWC to NCHW",
      .min_args = 4,
      .max_args = 4,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor data = Input({s[0], s[1], s[2], s[3]}, "data");
            return CreatePrimFunc({data, Transpose(data, {0, 3, 1, 2})}, "transpose");
          },
      .flops = nhwc_elements,
      .benchmark_shapes = {},
      .small_shape = {2, 3, 4, 5},
  });
  defs.push_back(WorkloadDef{
      .name = "concat",
      .params = "N,H,W,C1,C2",
      .summary = "concatenation of two NHWC tensors along the channels",
      .min_args = 5,
      .max_args = 5,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor a = Input({s[0], s[1], s[2], s[3]}, "A");
            Tensor b = Input({s[0], s[1], s[2], s[4]}, "B");
            return CreatePrimFunc({a, b, Concatenate(a, b, /*axis=*/3)}, "concat");
          },
      .flops =
          [](const std::vector<int64_t>& s) {
            return static_cast<double>(s[0] * s[1] * s[2] * (s[3] + s[4]));
          },
      .benchmark_shapes = {},
      .small_shape = {1, 3, 4, 2, 5},
  });
  return defs;
}

}  // namespace tirtune::te
