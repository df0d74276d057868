// How the interpreter represents values: one untyped Scalar per lane, whose meaning comes from the
// static dtype of the expression that produced it, and the conversions between dtypes.
#pragma once

#include <cstdint>

#include "tirtune/support/dtype.h"

namespace tirtune::interp {

/// One lane of a value. Integers (and bools) live in `i`, normalized to their type: sign-extended
/// for signed types, zero-extended for unsigned ones (uint64 keeps its bit pattern). Floats live
/// in `f`, already rounded to float precision when their type is float32, float16 or bfloat16.
union Scalar {
  int64_t i;
  double f;
};

/// How arithmetic behaves for a dtype. float16 and bfloat16 compute in float32 and are rounded to
/// their own precision only when stored or cast.
enum class NumClass : uint8_t { kSInt, kUInt, kFloat32, kFloat64 };

/// In-memory element formats of buffers.
enum class ElemKind : uint8_t {
  kBool,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
};

/// The arithmetic class of `t`'s element type; throws InterpError for handles and odd widths.
NumClass NumClassOf(DataType t);
/// The memory format of `t`'s element type; throws InterpError when buffers cannot hold it.
ElemKind ElemKindOf(DataType t);

/// Truncates `v` to `bits` and sign- or zero-extends it back to 64 bits.
inline int64_t WrapInt(uint64_t v, int bits, bool is_signed) {
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (is_signed && (v >> (bits - 1)) != 0) v |= ~mask;
  return static_cast<int64_t>(v);
}

/// Rounds `v` to float32 precision (what float32 hardware would produce for a single operation).
inline double RoundToFloat(double v) { return static_cast<double>(static_cast<float>(v)); }

/// Rounds `v` to the precision of float type `t` (float64: unchanged).
double RoundToFloatType(double v, DataType t);

/// The value of lane `v` of type `from` as a double.
double ToDouble(Scalar v, DataType from);

/// Converts one lane of type `from` to type `to` (element types; lanes are ignored). Floats to
/// integers truncate toward zero and saturate at the target's range (NaN gives 0).
Scalar Convert(Scalar v, DataType from, DataType to);

/// The Scalar of type `t` holding the constant `v` (an integer immediate's value).
Scalar FromInt(int64_t v, DataType t);

/// Reads / writes element `offset` of memory in format `kind`.
Scalar ReadElement(const void* data, ElemKind kind, int64_t offset);
void WriteElement(void* data, ElemKind kind, int64_t offset, Scalar v);

}  // namespace tirtune::interp
