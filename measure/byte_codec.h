// The byte encoding shared by the runner protocol and GPU programs: numbers in host byte order
// (both ends run on one machine, or the message names its format version), strings as a 64-bit
// length and their bytes. A short message is a UserError naming the format and, when the reader
// says, the field it was reading.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tirtune/support/error.h"

namespace tirtune {

class ByteWriter {
 public:
  template <typename T>
  void Pod(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void Bytes(const void* data, size_t n) { out_.append(static_cast<const char*>(data), n); }
  void String(const std::string& s) {
    Pod<uint64_t>(s.size());
    out_.append(s);
  }
  void Shape(const std::vector<int64_t>& shape) {
    Pod<uint32_t>(static_cast<uint32_t>(shape.size()));
    for (int64_t d : shape) Pod<int64_t>(d);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  /// `format` prefixes the errors ("runner protocol", "GPU program").
  ByteReader(const std::string& in, const char* format) : in_(in), format_(format) {}

  /// `field`, when given, is named in the error of a short message.
  template <typename T>
  T Pod(const char* field = nullptr) {
    T v;
    std::memcpy(&v, Take(sizeof(T), field), sizeof(T));
    return v;
  }
  const char* Take(uint64_t n, const char* field = nullptr) {
    if (n > in_.size() - pos_) {
      if (field == nullptr) TT_USER_ERROR("{}: truncated message", format_);
      TT_USER_ERROR("{}: truncated at byte {} (reading {})", format_, pos_, field);
    }
    const char* p = in_.data() + pos_;
    pos_ += n;
    return p;
  }
  std::string String(const char* field = nullptr) {
    uint64_t n = Pod<uint64_t>(field);
    return std::string(Take(n, field), n);
  }
  std::vector<int64_t> Shape() {
    uint32_t ndim = Pod<uint32_t>();
    std::vector<int64_t> shape;
    for (uint32_t i = 0; i < ndim; ++i) shape.push_back(Pod<int64_t>());
    return shape;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  const std::string& in_;
  const char* format_;
  size_t pos_ = 0;
};

}  // namespace tirtune
