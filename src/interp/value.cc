// Conversions between the interpreter's lane representation, dtypes and buffer memory.
#include "value.h"

#include <cmath>

#include "tirtune/interp/interpreter.h"
#include "tirtune/support/ndarray.h"

namespace tirtune::interp {

NumClass NumClassOf(DataType t) {
  switch (t.code()) {
    case DataType::Code::kInt:
      if (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64) {
        return NumClass::kSInt;
      }
      break;
    case DataType::Code::kUInt:
      if (t.bits() == 1 || t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64) {
        return NumClass::kUInt;
      }
      break;
    case DataType::Code::kFloat:
      if (t.bits() == 16 || t.bits() == 32) return NumClass::kFloat32;
      if (t.bits() == 64) return NumClass::kFloat64;
      break;
    case DataType::Code::kBFloat:
      if (t.bits() == 16) return NumClass::kFloat32;
      break;
    case DataType::Code::kHandle:
      break;
  }
  throw InterpError("the interpreter does not support values of type " + t.str());
}

ElemKind ElemKindOf(DataType t) {
  DataType e = t.element_of();
  if (e.is_bool()) return ElemKind::kBool;
  switch (NumClassOf(e)) {
    case NumClass::kSInt:
      switch (e.bits()) {
        case 8:
          return ElemKind::kI8;
        case 16:
          return ElemKind::kI16;
        case 32:
          return ElemKind::kI32;
        default:
          return ElemKind::kI64;
      }
    case NumClass::kUInt:
      switch (e.bits()) {
        case 8:
          return ElemKind::kU8;
        case 16:
          return ElemKind::kU16;
        case 32:
          return ElemKind::kU32;
        default:
          return ElemKind::kU64;
      }
    case NumClass::kFloat32:
      if (e.code() == DataType::Code::kBFloat) return ElemKind::kBF16;
      return e.bits() == 16 ? ElemKind::kF16 : ElemKind::kF32;
    case NumClass::kFloat64:
      return ElemKind::kF64;
  }
  return ElemKind::kF64;
}

double RoundToFloatType(double v, DataType t) {
  if (t.code() == DataType::Code::kBFloat) {
    return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v)));
  }
  if (t.bits() == 16) return HalfToFloat(FloatToHalf(static_cast<float>(v)));
  if (t.bits() == 32) return RoundToFloat(v);
  return v;
}

double ToDouble(Scalar v, DataType from) {
  if (from.is_float()) return v.f;
  if (from.code() == DataType::Code::kUInt) return static_cast<double>(static_cast<uint64_t>(v.i));
  return static_cast<double>(v.i);
}

namespace {

// Truncates a double toward zero into the range of the integer type `to`, saturating.
Scalar SaturateToInt(double v, DataType to) {
  if (std::isnan(v)) return Scalar{.i = 0};
  v = std::trunc(v);
  int bits = to.bits();
  if (to.code() == DataType::Code::kUInt) {
    double hi = std::ldexp(1.0, bits);  // exclusive
    if (v <= 0) return Scalar{.i = 0};
    if (v >= hi) return Scalar{.i = WrapInt(~uint64_t{0}, bits, false)};
    return Scalar{.i = static_cast<int64_t>(static_cast<uint64_t>(v))};
  }
  double lo = -std::ldexp(1.0, bits - 1);
  double hi = std::ldexp(1.0, bits - 1);  // exclusive
  if (v <= lo) return Scalar{.i = static_cast<int64_t>(lo)};
  if (v >= hi) return Scalar{.i = WrapInt(~uint64_t{0} >> (65 - bits), 64, true)};
  return Scalar{.i = static_cast<int64_t>(v)};
}

}  // namespace

Scalar Convert(Scalar v, DataType from, DataType to) {
  from = from.element_of();
  to = to.element_of();
  if (to.is_bool()) {
    return Scalar{.i = from.is_float() ? (v.f != 0.0 ? 1 : 0) : (v.i != 0 ? 1 : 0)};
  }
  if (to.is_float()) return Scalar{.f = RoundToFloatType(ToDouble(v, from), to)};
  if (from.is_float()) return SaturateToInt(v.f, to);
  return Scalar{.i = WrapInt(static_cast<uint64_t>(v.i), to.bits(), to.is_int())};
}

Scalar FromInt(int64_t v, DataType t) {
  if (t.is_float()) return Scalar{.f = RoundToFloatType(static_cast<double>(v), t)};
  if (t.is_bool()) return Scalar{.i = v != 0 ? 1 : 0};
  return Scalar{.i = WrapInt(static_cast<uint64_t>(v), t.bits(), t.is_int())};
}

Scalar ReadElement(const void* data, ElemKind kind, int64_t offset) {
  switch (kind) {
    case ElemKind::kBool:
      return Scalar{.i = static_cast<const uint8_t*>(data)[offset] != 0};
    case ElemKind::kI8:
      return Scalar{.i = static_cast<const int8_t*>(data)[offset]};
    case ElemKind::kI16:
      return Scalar{.i = static_cast<const int16_t*>(data)[offset]};
    case ElemKind::kI32:
      return Scalar{.i = static_cast<const int32_t*>(data)[offset]};
    case ElemKind::kI64:
      return Scalar{.i = static_cast<const int64_t*>(data)[offset]};
    case ElemKind::kU8:
      return Scalar{.i = static_cast<const uint8_t*>(data)[offset]};
    case ElemKind::kU16:
      return Scalar{.i = static_cast<const uint16_t*>(data)[offset]};
    case ElemKind::kU32:
      return Scalar{.i = static_cast<const uint32_t*>(data)[offset]};
    case ElemKind::kU64:
      return Scalar{.i = static_cast<int64_t>(static_cast<const uint64_t*>(data)[offset])};
    case ElemKind::kF16:
      return Scalar{.f = HalfToFloat(static_cast<const uint16_t*>(data)[offset])};
    case ElemKind::kBF16:
      return Scalar{.f = BFloat16ToFloat(static_cast<const uint16_t*>(data)[offset])};
    case ElemKind::kF32:
      return Scalar{.f = static_cast<const float*>(data)[offset]};
    case ElemKind::kF64:
      return Scalar{.f = static_cast<const double*>(data)[offset]};
  }
  return Scalar{.i = 0};
}

void WriteElement(void* data, ElemKind kind, int64_t offset, Scalar v) {
  // Integer lanes are already wrapped to the buffer's type, so narrowing keeps the value.
  switch (kind) {
    case ElemKind::kBool:
      static_cast<uint8_t*>(data)[offset] = v.i != 0;
      break;
    case ElemKind::kI8:
      static_cast<int8_t*>(data)[offset] = static_cast<int8_t>(v.i);
      break;
    case ElemKind::kI16:
      static_cast<int16_t*>(data)[offset] = static_cast<int16_t>(v.i);
      break;
    case ElemKind::kI32:
      static_cast<int32_t*>(data)[offset] = static_cast<int32_t>(v.i);
      break;
    case ElemKind::kI64:
      static_cast<int64_t*>(data)[offset] = v.i;
      break;
    case ElemKind::kU8:
      static_cast<uint8_t*>(data)[offset] = static_cast<uint8_t>(v.i);
      break;
    case ElemKind::kU16:
      static_cast<uint16_t*>(data)[offset] = static_cast<uint16_t>(v.i);
      break;
    case ElemKind::kU32:
      static_cast<uint32_t*>(data)[offset] = static_cast<uint32_t>(v.i);
      break;
    case ElemKind::kU64:
      static_cast<uint64_t*>(data)[offset] = static_cast<uint64_t>(v.i);
      break;
    case ElemKind::kF16:
      static_cast<uint16_t*>(data)[offset] = FloatToHalf(static_cast<float>(v.f));
      break;
    case ElemKind::kBF16:
      static_cast<uint16_t*>(data)[offset] = FloatToBFloat16(static_cast<float>(v.f));
      break;
    case ElemKind::kF32:
      static_cast<float*>(data)[offset] = static_cast<float>(v.f);
      break;
    case ElemKind::kF64:
      static_cast<double*>(data)[offset] = v.f;
      break;
  }
}

}  // namespace tirtune::interp
