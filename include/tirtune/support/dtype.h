// Scalar and vector data types of IR values and buffer elements.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tirtune {

/// A data type: a code (int, uint, float, bfloat, handle), a bit width and a lane count.
/// `bool` is uint1. Index arithmetic uses int64 throughout.
class DataType {
 public:
  enum class Code : uint8_t { kInt, kUInt, kFloat, kBFloat, kHandle };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType Int(int bits, int lanes = 1) { return {Code::kInt, bits, lanes}; }
  static constexpr DataType UInt(int bits, int lanes = 1) { return {Code::kUInt, bits, lanes}; }
  static constexpr DataType Float(int bits, int lanes = 1) { return {Code::kFloat, bits, lanes}; }
  static constexpr DataType BFloat16(int lanes = 1) { return {Code::kBFloat, 16, lanes}; }
  static constexpr DataType Bool(int lanes = 1) { return {Code::kUInt, 1, lanes}; }
  static constexpr DataType Handle() { return {Code::kHandle, 64, 1}; }
  static constexpr DataType Index() { return Int(64); }
  static constexpr DataType Void() { return {Code::kHandle, 0, 0}; }

  constexpr Code code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }
  /// Bytes one lane occupies in memory (bool takes one byte).
  constexpr int bytes() const { return bits_ < 8 ? 1 : bits_ / 8; }

  constexpr bool is_int() const { return code_ == Code::kInt; }
  constexpr bool is_uint() const { return code_ == Code::kUInt && bits_ != 1; }
  constexpr bool is_bool() const { return code_ == Code::kUInt && bits_ == 1; }
  constexpr bool is_float() const { return code_ == Code::kFloat || code_ == Code::kBFloat; }
  constexpr bool is_integral() const { return code_ == Code::kInt || code_ == Code::kUInt; }
  constexpr bool is_handle() const { return code_ == Code::kHandle && bits_ != 0; }
  constexpr bool is_void() const { return code_ == Code::kHandle && bits_ == 0; }
  constexpr bool is_scalar() const { return lanes_ == 1; }
  constexpr bool is_vector() const { return lanes_ > 1; }

  constexpr DataType element_of() const { return {code_, bits_, 1}; }
  constexpr DataType with_lanes(int lanes) const { return {code_, bits_, lanes}; }

  /// Text form: "float32", "int64", "bool", "float32x8", "handle", "void".
  std::string str() const;
  /// Parses the text form; nullopt when `text` names no data type.
  static std::optional<DataType> Parse(std::string_view text);

  friend constexpr bool operator==(DataType a, DataType b) {
    return a.code_ == b.code_ && a.bits_ == b.bits_ && a.lanes_ == b.lanes_;
  }
  friend constexpr bool operator!=(DataType a, DataType b) { return !(a == b); }

 private:
  Code code_ = Code::kInt;
  uint8_t bits_ = 32;
  uint16_t lanes_ = 1;
};

}  // namespace tirtune
