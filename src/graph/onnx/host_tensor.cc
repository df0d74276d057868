// Import-time evaluation of the operations that shape computations and weight layouts need.
#include "host_tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tirtune/support/error.h"

namespace tirtune::graph::onnx_import {

int64_t NumElements(const std::vector<int64_t>& shape) {
  constexpr int64_t kMax = int64_t{1} << 48;
  int64_t n = 1;
  for (int64_t e : shape) {
    if (__builtin_mul_overflow(n, e, &n) || n > kMax) {
      TT_USER_ERROR("a tensor of shape {} would have more than 2^48 elements",
                    ShapeString(shape).substr(0, 200));
    }
  }
  return n;
}

NDArray HostEmpty(const std::vector<int64_t>& shape, DataType dtype) {
  if (NumElements(shape) > kMaxHostElements) {
    TT_USER_ERROR("a tensor of shape {} is too large to compute at import time",
                  ShapeString(shape).substr(0, 200));
  }
  return NDArray::Empty(shape, dtype);
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

namespace {

// Row-major strides of `shape`.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  return strides;
}

// Strides of `shape` seen from an output of rank `ndim` under broadcasting (0 on stretched and
// missing axes).
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& out_shape) {
  std::vector<int64_t> own = Strides(shape);
  std::vector<int64_t> strides(out_shape.size(), 0);
  size_t offset = out_shape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    strides[d + offset] = shape[d] == 1 ? 0 : own[d];
  }
  return strides;
}

// Calls f(flat output index, flat source offsets) over every element of `out_shape`.
void ForEachIndex(const std::vector<int64_t>& out_shape,
                  const std::vector<std::vector<int64_t>>& source_strides,
                  const std::function<void(int64_t, const std::vector<int64_t>&)>& f) {
  int ndim = static_cast<int>(out_shape.size());
  std::vector<int64_t> index(ndim, 0), offsets(source_strides.size(), 0);
  int64_t total = NumElements(out_shape);
  for (int64_t flat = 0; flat < total; ++flat) {
    f(flat, offsets);
    for (int d = ndim - 1; d >= 0; --d) {
      ++index[d];
      for (size_t s = 0; s < offsets.size(); ++s) offsets[s] += source_strides[s][d];
      if (index[d] < out_shape[d]) break;
      for (size_t s = 0; s < offsets.size(); ++s) offsets[s] -= source_strides[s][d] * index[d];
      index[d] = 0;
    }
  }
}

// Copies element `from` of `src` to element `to` of `dst` (same dtype).
void CopyElement(const NDArray& src, int64_t from, NDArray* dst, int64_t to) {
  int bytes = src.dtype().bytes();
  std::copy_n(static_cast<const char*>(src.raw()) + from * bytes, bytes,
              static_cast<char*>(dst->raw()) + to * bytes);
}

}  // namespace

NDArray HostTranspose(const NDArray& t, const std::vector<int64_t>& perm) {
  TT_ICHECK(perm.size() == t.shape().size(), "perm {} for rank {}", ShapeString(perm),
            t.shape().size());
  std::vector<int64_t> shape, strides;
  std::vector<int64_t> own = Strides(t.shape());
  for (int64_t p : perm) {
    shape.push_back(t.shape()[p]);
    strides.push_back(own[p]);
  }
  NDArray out = HostEmpty(shape, t.dtype());
  ForEachIndex(shape, {strides}, [&](int64_t flat, const std::vector<int64_t>& offsets) {
    CopyElement(t, offsets[0], &out, flat);
  });
  return out;
}

NDArray HostReshape(const NDArray& t, std::vector<int64_t> shape) {
  TT_ICHECK(NumElements(shape) == t.size(), "reshape {} to {}", ShapeString(t.shape()),
            ShapeString(shape));
  NDArray out = HostEmpty(std::move(shape), t.dtype());
  std::copy_n(static_cast<const char*>(t.raw()), t.nbytes(), static_cast<char*>(out.raw()));
  return out;
}

std::vector<int64_t> HostInts(const NDArray& t) {
  std::vector<int64_t> values(t.size());
  for (int64_t i = 0; i < t.size(); ++i) {
    values[i] = t.dtype() == DataType::Int(64) ? t.data<int64_t>()[i]
                                               : static_cast<int64_t>(t.GetDouble(i));
  }
  return values;
}

NDArray MakeInts(const std::vector<int64_t>& values) {
  NDArray out = HostEmpty({static_cast<int64_t>(values.size())}, DataType::Int(64));
  std::copy(values.begin(), values.end(), out.data<int64_t>());
  return out;
}

NDArray FloatScalar(double value) {
  NDArray out = HostEmpty({1}, DataType::Float(32));
  out.SetDouble(0, value);
  return out;
}

NDArray HostCast(const NDArray& t, DataType to) {
  if (t.dtype() == to) return t;
  NDArray out = HostEmpty(t.shape(), to);
  for (int64_t i = 0; i < t.size(); ++i) {
    if (to == DataType::Int(64) && t.dtype() == DataType::Int(64)) {
      out.data<int64_t>()[i] = t.data<int64_t>()[i];
    } else if (IsBool(to)) {
      out.data<uint8_t>()[i] = t.GetDouble(i) != 0.0;
    } else if (to == DataType::Int(64)) {
      out.data<int64_t>()[i] = static_cast<int64_t>(t.GetDouble(i));
    } else {
      out.SetDouble(i, t.GetDouble(i));
    }
  }
  return out;
}

std::vector<int64_t> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     bool* ok) {
  size_t ndim = std::max(a.size(), b.size());
  std::vector<int64_t> out(ndim);
  *ok = true;
  for (size_t d = 0; d < ndim; ++d) {
    int64_t ea = d + a.size() >= ndim ? a[d + a.size() - ndim] : 1;
    int64_t eb = d + b.size() >= ndim ? b[d + b.size() - ndim] : 1;
    if (ea != eb && ea != 1 && eb != 1) *ok = false;
    out[d] = std::max(ea, eb);
  }
  return out;
}

namespace {

// The value of element `i` for arithmetic: int64 exactly when it fits in a double's mantissa,
// which every shape value does.
double Element(const NDArray& t, int64_t i) {
  if (t.dtype() == DataType::Int(64)) return static_cast<double>(t.data<int64_t>()[i]);
  return t.GetDouble(i);
}

void Store(NDArray* t, int64_t i, double v) {
  if (t->dtype() == DataType::Int(64)) {
    t->data<int64_t>()[i] = static_cast<int64_t>(v);
  } else if (IsBool(t->dtype())) {
    t->data<uint8_t>()[i] = v != 0.0;
  } else {
    t->SetDouble(i, v);
  }
}

}  // namespace

NDArray HostBinary(const NDArray& a, const NDArray& b, DataType out_dtype,
                   const std::function<double(double, double)>& f) {
  bool ok = true;
  std::vector<int64_t> shape = BroadcastShapes(a.shape(), b.shape(), &ok);
  if (!ok) {
    TT_USER_ERROR("shapes {} and {} do not broadcast", ShapeString(a.shape()),
                  ShapeString(b.shape()));
  }
  NDArray out = HostEmpty(shape, out_dtype);
  ForEachIndex(shape, {BroadcastStrides(a.shape(), shape), BroadcastStrides(b.shape(), shape)},
               [&](int64_t flat, const std::vector<int64_t>& offsets) {
                 Store(&out, flat, f(Element(a, offsets[0]), Element(b, offsets[1])));
               });
  return out;
}

NDArray HostWhere(const NDArray& cond, const NDArray& x, const NDArray& y) {
  bool ok1 = true, ok2 = true;
  std::vector<int64_t> shape = BroadcastShapes(cond.shape(), x.shape(), &ok1);
  shape = BroadcastShapes(shape, y.shape(), &ok2);
  if (!ok1 || !ok2) TT_USER_ERROR("the condition and both branches do not broadcast");
  NDArray out = HostEmpty(shape, x.dtype());
  ForEachIndex(shape,
               {BroadcastStrides(cond.shape(), shape), BroadcastStrides(x.shape(), shape),
                BroadcastStrides(y.shape(), shape)},
               [&](int64_t flat, const std::vector<int64_t>& offsets) {
                 bool c = Element(cond, offsets[0]) != 0.0;
                 CopyElement(c ? x : y, c ? offsets[1] : offsets[2], &out, flat);
               });
  return out;
}

NDArray HostExpand(const NDArray& x, const std::vector<int64_t>& shape) {
  bool ok = true;
  std::vector<int64_t> out_shape = BroadcastShapes(x.shape(), shape, &ok);
  if (!ok) {
    TT_USER_ERROR("{} does not broadcast to {}", ShapeString(x.shape()), ShapeString(shape));
  }
  NDArray out = HostEmpty(out_shape, x.dtype());
  ForEachIndex(out_shape, {BroadcastStrides(x.shape(), out_shape)},
               [&](int64_t flat, const std::vector<int64_t>& offsets) {
                 CopyElement(x, offsets[0], &out, flat);
               });
  return out;
}

NDArray HostGather(const NDArray& data, const NDArray& indices, int axis) {
  const std::vector<int64_t>& ds = data.shape();
  std::vector<int64_t> shape(ds.begin(), ds.begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), ds.begin() + axis + 1, ds.end());
  int64_t outer = NumElements({ds.begin(), ds.begin() + axis});
  int64_t inner = NumElements({ds.begin() + axis + 1, ds.end()});
  std::vector<int64_t> index = HostInts(indices);
  NDArray out = HostEmpty(shape, data.dtype());
  int64_t flat = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : index) {
      if (i < 0) i += ds[axis];
      if (i < 0 || i >= ds[axis]) return NDArray();
      for (int64_t k = 0; k < inner; ++k) {
        CopyElement(data, (o * ds[axis] + i) * inner + k, &out, flat++);
      }
    }
  }
  return out;
}

NDArray HostSlice(const NDArray& data, const std::vector<int64_t>& starts,
                  const std::vector<int64_t>& steps, const std::vector<int64_t>& out_shape) {
  std::vector<int64_t> own = Strides(data.shape()), strides;
  int64_t base = 0;
  for (size_t d = 0; d < own.size(); ++d) {
    base += starts[d] * own[d];
    strides.push_back(steps[d] * own[d]);
  }
  NDArray out = HostEmpty(out_shape, data.dtype());
  ForEachIndex(out_shape, {strides}, [&](int64_t flat, const std::vector<int64_t>& offsets) {
    CopyElement(data, base + offsets[0], &out, flat);
  });
  return out;
}

NDArray HostConcat(const std::vector<NDArray>& inputs, int axis) {
  std::vector<int64_t> shape = inputs[0].shape();
  shape[axis] = 0;
  for (const NDArray& t : inputs) shape[axis] += t.shape()[axis];
  NDArray out = HostEmpty(shape, inputs[0].dtype());
  int64_t outer = NumElements({shape.begin(), shape.begin() + axis});
  int64_t flat = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const NDArray& t : inputs) {
      int64_t chunk = t.size() / std::max<int64_t>(outer, 1);
      for (int64_t k = 0; k < chunk; ++k) CopyElement(t, o * chunk + k, &out, flat++);
    }
  }
  return out;
}

}  // namespace tirtune::graph::onnx_import
