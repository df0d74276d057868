// Host tensors: aligned zeroed storage, element access through doubles for every scalar dtype,
// IEEE half / bfloat16 conversion, and a platform-independent random fill.
#include "tirtune/support/ndarray.h"

#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "tirtune/support/error.h"
#include "tirtune/support/huge_pages.h"

namespace tirtune {

namespace {

constexpr size_t kAlignment = 64;

// The in-memory element kinds NDArray supports; every other dtype is rejected by Empty().
enum class Elem { kBool, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF16, kBF16, kF32, kF64 };

bool ElemOf(DataType t, Elem* out) {
  if (!t.is_scalar()) return false;
  if (t.is_bool()) {
    *out = Elem::kBool;
    return true;
  }
  switch (t.code()) {
    case DataType::Code::kInt:
      switch (t.bits()) {
        case 8:
          *out = Elem::kI8;
          return true;
        case 16:
          *out = Elem::kI16;
          return true;
        case 32:
          *out = Elem::kI32;
          return true;
        case 64:
          *out = Elem::kI64;
          return true;
      }
      return false;
    case DataType::Code::kUInt:
      switch (t.bits()) {
        case 8:
          *out = Elem::kU8;
          return true;
        case 16:
          *out = Elem::kU16;
          return true;
        case 32:
          *out = Elem::kU32;
          return true;
        case 64:
          *out = Elem::kU64;
          return true;
      }
      return false;
    case DataType::Code::kFloat:
      switch (t.bits()) {
        case 16:
          *out = Elem::kF16;
          return true;
        case 32:
          *out = Elem::kF32;
          return true;
        case 64:
          *out = Elem::kF64;
          return true;
      }
      return false;
    case DataType::Code::kBFloat:
      *out = Elem::kBF16;
      return t.bits() == 16;
    case DataType::Code::kHandle:
      return false;
  }
  return false;
}

Elem ElemOrDie(DataType t) {
  Elem e;
  TT_ICHECK(ElemOf(t, &e), "NDArray of unsupported dtype {}", t.str());
  return e;
}

// Converts a double to an integer of [lo, hi] by truncation toward zero, saturating at the
// bounds (NaN gives 0), so out-of-range values have a defined, portable result.
template <typename T>
T SaturatingCast(double v) {
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  // 2^bits-ish upper bound: max() may not be representable, so compare against max() + 1.
  constexpr double hi_exclusive = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
  if (v <= lo) return std::numeric_limits<T>::min();
  if (v >= hi_exclusive) return std::numeric_limits<T>::max();
  return static_cast<T>(std::trunc(v));
}

// splitmix64 (Steele, Lea, Flood 2014): a tiny generator whose output is fully specified, so
// random inputs are bit-identical on every platform and standard library.
uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Significand bits of a float type; uniform samples are drawn on a grid this fine so that values
// in the default range [-1, 1) are exactly representable in the element type.
int SignificandBits(Elem e) {
  switch (e) {
    case Elem::kF16:
      return 11;
    case Elem::kBF16:
      return 8;
    case Elem::kF32:
      return 24;
    default:
      return 53;
  }
}

}  // namespace

uint16_t FloatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan; a nan stays a (quiet) nan
    if (abs == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  }
  // 65520 is halfway between 65504 (the largest half) and 2^16; the tie rounds to even, i.e. up.
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {
    // Below 2^-14: a half subnormal, counted in units of 2^-24.
    int exponent = static_cast<int>(abs >> 23);
    int shift = 126 - exponent;
    if (shift > 24) return static_cast<uint16_t>(sign);
    uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    uint32_t r = mantissa >> shift;
    uint32_t rem = mantissa & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;  // may carry into the smallest normal
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t h = abs - 0x38000000u;  // rebias the exponent from 127 to 15
  uint32_t rem = h & 0x1fffu;
  h >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry bumps the exponent
  return static_cast<uint16_t>(sign | h);
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even; overflow lands on inf
  return static_cast<uint16_t>(x >> 16);
}

float BFloat16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

void NDArray::Free::operator()(void* p) const { std::free(p); }

// A tensor larger than the machine's memory is the user's mistake (a workload or a file asking for
// too much), said as such before any allocation, rather than a std::bad_alloc.
static void CheckFitsInMemory(const std::vector<int64_t>& shape, DataType dtype) {
  static const double kMemoryBytes =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  double bytes = dtype.bytes();
  for (int64_t d : shape) bytes *= static_cast<double>(d);
  if (bytes <= kMemoryBytes || kMemoryBytes <= 0) return;
  std::string dims;
  for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  TT_USER_ERROR(
      "a {} tensor of shape [{}] needs {:.3g} GB, more than this machine's {:.3g} GB of "
      "memory",
      dtype.str(), dims, bytes / 1e9, kMemoryBytes / 1e9);
}

NDArray NDArray::Empty(std::vector<int64_t> shape, DataType dtype) {
  ElemOrDie(dtype);
  for (int64_t d : shape) TT_ICHECK(d >= 0, "NDArray with negative extent {}", d);
  CheckFitsInMemory(shape, dtype);
  NDArray a;
  a.shape_ = std::move(shape);
  a.dtype_ = dtype;
  // aligned_alloc wants a size that is a multiple of the alignment, and non-zero. A large array
  // is aligned to a huge page so that all of it can be on huge pages.
  size_t bytes = static_cast<size_t>(a.nbytes());
  size_t align = bytes >= kHugePageBytes ? kHugePageBytes : kAlignment;
  size_t padded = (bytes + align - 1) / align * align;
  if (padded == 0) padded = align;
  void* p = std::aligned_alloc(align, padded);
  if (p == nullptr) throw std::bad_alloc();
  AdviseHugePages(p, padded);
  std::memset(p, 0, padded);
  a.data_ = std::shared_ptr<void>(p, Free{});
  return a;
}

int64_t NDArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

double NDArray::GetDouble(int64_t i) const {
  const void* p = raw();
  switch (ElemOrDie(dtype_)) {
    case Elem::kBool:
      return static_cast<const uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;
    case Elem::kI8:
      return static_cast<const int8_t*>(p)[i];
    case Elem::kI16:
      return static_cast<const int16_t*>(p)[i];
    case Elem::kI32:
      return static_cast<const int32_t*>(p)[i];
    case Elem::kI64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case Elem::kU8:
      return static_cast<const uint8_t*>(p)[i];
    case Elem::kU16:
      return static_cast<const uint16_t*>(p)[i];
    case Elem::kU32:
      return static_cast<const uint32_t*>(p)[i];
    case Elem::kU64:
      return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case Elem::kF16:
      return HalfToFloat(static_cast<const uint16_t*>(p)[i]);
    case Elem::kBF16:
      return BFloat16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case Elem::kF32:
      return static_cast<const float*>(p)[i];
    case Elem::kF64:
      return static_cast<const double*>(p)[i];
  }
  return 0;
}

void NDArray::SetDouble(int64_t i, double v) {
  void* p = raw();
  switch (ElemOrDie(dtype_)) {
    case Elem::kBool:
      static_cast<uint8_t*>(p)[i] = v != 0.0;
      break;
    case Elem::kI8:
      static_cast<int8_t*>(p)[i] = SaturatingCast<int8_t>(v);
      break;
    case Elem::kI16:
      static_cast<int16_t*>(p)[i] = SaturatingCast<int16_t>(v);
      break;
    case Elem::kI32:
      static_cast<int32_t*>(p)[i] = SaturatingCast<int32_t>(v);
      break;
    case Elem::kI64:
      static_cast<int64_t*>(p)[i] = SaturatingCast<int64_t>(v);
      break;
    case Elem::kU8:
      static_cast<uint8_t*>(p)[i] = SaturatingCast<uint8_t>(v);
      break;
    case Elem::kU16:
      static_cast<uint16_t*>(p)[i] = SaturatingCast<uint16_t>(v);
      break;
    case Elem::kU32:
      static_cast<uint32_t*>(p)[i] = SaturatingCast<uint32_t>(v);
      break;
    case Elem::kU64:
      static_cast<uint64_t*>(p)[i] = SaturatingCast<uint64_t>(v);
      break;
    case Elem::kF16:
      static_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v));
      break;
    case Elem::kBF16:
      static_cast<uint16_t*>(p)[i] = FloatToBFloat16(static_cast<float>(v));
      break;
    case Elem::kF32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case Elem::kF64:
      static_cast<double*>(p)[i] = v;
      break;
  }
}

void NDArray::FillRandom(uint64_t seed, double lo, double hi) {
  Elem elem = ElemOrDie(dtype_);
  uint64_t state = seed;
  int64_t n = size();
  bool is_float = dtype_.is_float();
  if (!is_float) {
    // Integers: uniform over the integers of [lo, hi).
    double first = std::ceil(lo);
    double count = std::ceil(hi) - first;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t r = SplitMix64(&state);
      double v =
          count >= 1.0 ? first + static_cast<double>(r % static_cast<uint64_t>(count)) : first;
      SetDouble(i, v);
    }
    return;
  }
  int bits = SignificandBits(elem);
  double scale = std::ldexp(1.0, -bits);
  for (int64_t i = 0; i < n; ++i) {
    double u = static_cast<double>(SplitMix64(&state) >> (64 - bits)) * scale;  // [0, 1)
    SetDouble(i, lo + u * (hi - lo));
    // Rounding to a narrow type can reach `hi` itself; keep the range half-open.
    if (GetDouble(i) >= hi) SetDouble(i, lo);
  }
}

void NDArray::Fill(double v) {
  int64_t n = size();
  for (int64_t i = 0; i < n; ++i) SetDouble(i, v);
}

NDArray NDArray::Reshaped(std::vector<int64_t> shape) const {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  TT_ICHECK(count == size(), "a reshape of {} elements to {}", size(), count);
  NDArray view = *this;
  view.shape_ = std::move(shape);
  return view;
}

NDArray NDArray::Copy() const {
  if (!defined()) return NDArray();
  NDArray c = Empty(shape_, dtype_);
  std::memcpy(c.raw(), raw(), static_cast<size_t>(nbytes()));
  return c;
}

}  // namespace tirtune
