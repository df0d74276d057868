// A host tensor: shape, element type and 64-byte-aligned storage. Used by the interpreter, the
// measurement runner and the graph executor.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tirtune/support/dtype.h"

namespace tirtune {

class NDArray {
 public:
  NDArray() = default;
  /// Uninitialized (zeroed) storage for `shape` elements of `dtype` (a scalar type).
  static NDArray Empty(std::vector<int64_t> shape, DataType dtype);

  const std::vector<int64_t>& shape() const { return shape_; }
  DataType dtype() const { return dtype_; }
  int64_t size() const;  // number of elements
  int64_t nbytes() const { return size() * dtype_.bytes(); }
  bool defined() const { return static_cast<bool>(data_); }

  void* raw() { return data_.get(); }
  const void* raw() const { return data_.get(); }
  template <typename T>
  T* data() {
    return static_cast<T*>(raw());
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw());
  }

  /// Element `i` (flat, row-major) converted to double / stored from double, for any dtype
  /// (float16 and bfloat16 are converted with round-to-nearest-even).
  double GetDouble(int64_t i) const;
  void SetDouble(int64_t i, double v);

  /// Fills with values drawn uniformly from [lo, hi) by a generator seeded with `seed`; integer
  /// types get integers in that range. Deterministic across platforms.
  void FillRandom(uint64_t seed, double lo = -1.0, double hi = 1.0);
  void Fill(double v);
  /// A deep copy.
  NDArray Copy() const;
  /// The same storage seen with another shape of as many elements (row-major, as a reshape).
  NDArray Reshaped(std::vector<int64_t> shape) const;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::vector<int64_t> shape_;
  DataType dtype_;
  std::shared_ptr<void> data_;
};

/// float <-> IEEE half / bfloat16 bit conversions (round to nearest even).
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBFloat16(float f);
float BFloat16ToFloat(uint16_t b);

}  // namespace tirtune
