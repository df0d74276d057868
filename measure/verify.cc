// CompareArrays / CompareAll: element-wise comparison with the tolerances of measure/verify.h.
#include "tirtune/measure/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tirtune {

Tolerance Tolerance::For(DataType dtype) {
  if (dtype.is_integral()) return {0, 0};
  if (dtype.bits() == 16) return {1e-2, 1e-3};
  if (dtype.bits() == 64) return {1e-9, 1e-12};
  return {1e-4, 1e-5};
}

Tolerance Tolerance::ForSum(DataType dtype, double reduction_length) {
  Tolerance tolerance = For(dtype);
  if (dtype == DataType::Float(32) && reduction_length > 1) {
    constexpr double kEps = 1.1920929e-7;  // 2^-23
    tolerance.rtol = std::max(tolerance.rtol, 8 * kEps * std::sqrt(reduction_length));
  }
  return tolerance;
}

namespace {

// Element i of an array as a double: straight from memory for float32 and float64 (a GEMM
// 4096^3 candidate compares 48 M elements), through NDArray::GetDouble otherwise.
template <typename T>
struct Typed {
  const T* data;
  double operator()(int64_t i) const { return static_cast<double>(data[i]); }
};
struct Generic {
  const NDArray* array;
  double operator()(int64_t i) const { return array->GetDouble(i); }
};

// The same kind of reader over another array of the same type.
template <typename T>
Typed<T> Like(const Typed<T>&, const NDArray& a) {
  return Typed<T>{a.data<T>()};
}
Generic Like(const Generic&, const NDArray& a) { return Generic{&a}; }

template <typename F>
auto WithReader(const NDArray& a, F&& f) {
  if (a.dtype() == DataType::Float(32)) return f(Typed<float>{a.data<float>()});
  if (a.dtype() == DataType::Float(64)) return f(Typed<double>{a.data<double>()});
  return f(Generic{&a});
}

template <typename Read>
void CompareElements(const std::string& name, Read want_at, Read got_at, int64_t n, double atol,
                     double rtol, VerifyResult& r) {
  for (int64_t i = 0; i < n; ++i) {
    double want = want_at(i), got = got_at(i);
    if (std::isnan(want) || std::isnan(got)) {
      if (std::isnan(want) && std::isnan(got)) continue;
    } else if (want == got) {
      continue;  // also equal infinities
    }
    double err = std::fabs(got - want);
    double rel = want != 0 ? err / std::fabs(want) : err;
    if (!std::isnan(err)) {
      r.max_abs_error = std::max(r.max_abs_error, err);
      r.max_rel_error = std::max(r.max_rel_error, rel);
    }
    if (err <= atol + rtol * std::fabs(want)) continue;
    if (r.mismatches++ == 0) {
      r.message = fmt::format("{}[{}] is {} where the reference has {}", name, i, got, want);
    }
  }
}

}  // namespace

double AtolScale(const NDArray& expected) {
  double scale = WithReader(expected, [&](auto at) {
    double m = 0;
    for (int64_t i = 0; i < expected.size(); ++i) {
      double v = std::fabs(at(i));
      if (std::isfinite(v)) m = std::max(m, v);
    }
    return m;
  });
  return std::max(1.0, scale);
}

VerifyResult CompareArrays(const std::string& name, const NDArray& expected, const NDArray& actual,
                           const Tolerance& tolerance) {
  VerifyResult r;
  if (expected.shape() != actual.shape() || expected.dtype() != actual.dtype()) {
    r.ok = false;
    r.mismatches = expected.size();
    r.message = fmt::format("{}: shape or type differs from the reference", name);
    return r;
  }
  double atol = tolerance.atol * AtolScale(expected);
  WithReader(expected, [&](auto want_at) {
    CompareElements(name, want_at, Like(want_at, actual), expected.size(),
                    atol, tolerance.rtol, r);
    return 0;
  });
  if (r.mismatches > 0) {
    r.ok = false;
    r.message +=
        fmt::format(" ({} of {} elements differ; max abs error {:.3g}, max rel error {:.3g})",
                    r.mismatches, expected.size(), r.max_abs_error, r.max_rel_error);
  }
  return r;
}

VerifyResult CompareAll(const std::vector<std::string>& names, const std::vector<NDArray>& expected,
                        const std::vector<NDArray>& actual, double reduction_length) {
  VerifyResult total;
  for (size_t i = 0; i < expected.size() && i < actual.size(); ++i) {
    if (!expected[i].defined()) continue;
    VerifyResult r = CompareArrays(names[i], expected[i], actual[i],
                                   Tolerance::ForSum(expected[i].dtype(), reduction_length));
    total.max_abs_error = std::max(total.max_abs_error, r.max_abs_error);
    total.max_rel_error = std::max(total.max_rel_error, r.max_rel_error);
    total.mismatches += r.mismatches;
    if (!r.ok && total.ok) {
      total.ok = false;
      total.message = r.message;
    }
  }
  return total;
}

}  // namespace tirtune
