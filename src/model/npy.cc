// The .npy reader and writer: a magic string, a version, a header length, a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), } and the raw elements.
#include "tirtune/model/npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "tirtune/support/error.h"

namespace tirtune::model {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct Descr {
  const char* text;
  DataType dtype;
};
const Descr kDescrs[] = {
    {"<f4", DataType::Float(32)}, {"<f8", DataType::Float(64)}, {"<f2", DataType::Float(16)},
    {"|i1", DataType::Int(8)},    {"<i2", DataType::Int(16)},   {"<i4", DataType::Int(32)},
    {"<i8", DataType::Int(64)},   {"|u1", DataType::UInt(8)},   {"<u2", DataType::UInt(16)},
    {"<u4", DataType::UInt(32)},  {"<u8", DataType::UInt(64)},  {"|b1", DataType::Bool()}};

// The header dict, {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, read strictly:
// quoted keys, each value a quoted string, True/False or a tuple of non-negative integers.
struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  bool has_descr = false, has_order = false, has_shape = false;
};

class HeaderReader {
 public:
  HeaderReader(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Header Read() {
    Header h;
    Expect('{');
    while (!Accept('}')) {
      std::string key = Quoted();
      Expect(':');
      if (key == "descr") {
        h.descr = Quoted();
        h.has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = Bool();
        h.has_order = true;
      } else if (key == "shape") {
        h.shape = Tuple();
        h.has_shape = true;
      } else {
        Fail(fmt::format("unknown key '{}'", key.substr(0, 40)));
      }
      if (!Accept(',')) {
        Expect('}');
        break;
      }
    }
    for (auto [has, key] : {std::pair{h.has_descr, "descr"},
                            {h.has_order, "fortran_order"},
                            {h.has_shape, "shape"}}) {
      if (!has) TT_USER_ERROR("'{}': the .npy header has no '{}'", path_, key);
    }
    return h;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    TT_USER_ERROR("'{}': malformed .npy header at byte {}: {}", path_, pos_, what);
  }
  void Space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  bool Accept(char c) {
    Space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Accept(c)) Fail(fmt::format("expected '{}'", c));
  }
  std::string Quoted() {
    Space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      Fail("expected a quoted string");
    }
    char quote = text_[pos_++];
    size_t close = text_.find(quote, pos_);
    if (close == std::string_view::npos) Fail("unterminated string");
    std::string value(text_.substr(pos_, close - pos_));
    pos_ = close + 1;
    return value;
  }
  bool Bool() {
    Space();
    for (auto [word, value] : {std::pair{"True", true}, {"False", false}}) {
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    Fail("expected True or False");
  }
  std::vector<int64_t> Tuple() {
    Expect('(');
    std::vector<int64_t> dims;
    while (!Accept(')')) {
      Space();
      int64_t v = -1;
      auto [ptr, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
      if (ec != std::errc() || v < 0) {
        size_t end = std::min(text_.find_first_of(",)", pos_), text_.size());
        Fail(fmt::format("bad dimension '{}'",
                         text_.substr(pos_, std::min<size_t>(end - pos_, 40))));
      }
      pos_ = static_cast<size_t>(ptr - text_.data());
      dims.push_back(v);
      if (!Accept(',')) {
        Expect(')');
        break;
      }
    }
    return dims;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

NDArray ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) TT_USER_ERROR("cannot read '{}'", path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) {
    TT_USER_ERROR("'{}' is not a .npy file", path);
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) TT_USER_ERROR("'{}' is truncated", path);
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(bytes[8 + i]);
    header_start = 12;
  } else {
    TT_USER_ERROR("'{}': unknown .npy version {}", path, major);
  }
  if (header_start + header_len > bytes.size()) TT_USER_ERROR("'{}' is truncated", path);
  const std::string header = bytes.substr(header_start, header_len);

  Header h = HeaderReader(header, path).Read();
  std::string descr = h.descr;
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';
  const Descr* found = nullptr;
  for (const Descr& d : kDescrs) {
    if (descr == d.text) found = &d;
  }
  if (found == nullptr) {
    TT_USER_ERROR(
        "'{}': element type '{}' is not supported (little-endian float16/32/64, int8/16/32/64, "
        "uint8/16/32/64, bool)",
        path, descr.substr(0, 40));
  }
  if (h.fortran_order) TT_USER_ERROR("'{}' is Fortran-ordered; save it in C order", path);
  // The shape, checked against the data that is there before anything is allocated: a header
  // may declare any shape.
  const std::vector<int64_t>& shape = h.shape;
  double needed = found->dtype.bytes();
  for (int64_t v : shape) needed *= static_cast<double>(v);
  std::string dims = shape.size() == 1 ? fmt::format("({},)", shape[0])
                                       : fmt::format("({})", fmt::join(shape, ", "));
  const size_t data_start = header_start + header_len;
  const size_t have = bytes.size() - data_start;
  if (needed != static_cast<double>(have)) {
    TT_USER_ERROR("'{}' holds {} bytes of data, its shape {} needs {:.0f}", path, have,
                  dims.substr(0, 80), needed);
  }
  NDArray a = NDArray::Empty(shape, found->dtype);
  std::memcpy(a.raw(), bytes.data() + data_start, a.nbytes());
  return a;
}

void WriteNpy(const std::string& path, const NDArray& array) {
  const char* descr = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == array.dtype()) descr = d.text;
  }
  if (descr == nullptr) TT_USER_ERROR("cannot write {} as .npy", array.dtype().str());
  std::string shape;
  for (int64_t d : array.shape()) shape += fmt::format("{}, ", d);
  if (array.shape().size() > 1) shape.resize(shape.size() - 2);
  if (array.shape().size() == 1) shape.resize(shape.size() - 1);
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // Pad with spaces so that the data starts at a multiple of 64 bytes; end with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.append(static_cast<const char*>(array.raw()), array.nbytes());
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!file) TT_USER_ERROR("cannot write '{}'", path);
}

}  // namespace tirtune::model
