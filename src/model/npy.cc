// The .npy reader and writer: a magic string, a version, a header length, a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), } and the raw elements.
#include "tirtune/model/npy.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tirtune/support/error.h"

namespace tirtune::model {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct Descr {
  const char* text;
  DataType dtype;
};
const Descr kDescrs[] = {{"<f4", DataType::Float(32)}, {"<f8", DataType::Float(64)},
                         {"<i4", DataType::Int(32)},   {"<i8", DataType::Int(64)},
                         {"|u1", DataType::UInt(8)},   {"|b1", DataType::Bool()}};

// The text after `key` ('key': VALUE) in the header dict, up to the next top-level comma or brace.
std::string DictValue(const std::string& header, const std::string& key, const std::string& path) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) TT_USER_ERROR("'{}': the .npy header has no '{}'", path, key);
  size_t colon = header.find(':', at);
  size_t begin = header.find_first_not_of(' ', colon + 1);
  if (colon == std::string::npos || begin == std::string::npos) {
    TT_USER_ERROR("'{}': malformed .npy header", path);
  }
  size_t end = header[begin] == '(' ? header.find(')', begin) + 1 : header.find(',', begin);
  if (end == std::string::npos || end == 0) TT_USER_ERROR("'{}': malformed .npy header", path);
  return header.substr(begin, end - begin);
}

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

  std::string descr = DictValue(header, "descr", path);
  descr = descr.substr(1, descr.size() - 2);  // strip the quotes
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';
  const Descr* found = nullptr;
  for (const Descr& d : kDescrs) {
    if (descr == d.text) found = &d;
  }
  if (found == nullptr) {
    TT_USER_ERROR(
        "'{}': element type '{}' is not supported (float32, float64, int32, int64, "
        "uint8, bool little-endian)",
        path, descr);
  }
  if (DictValue(header, "fortran_order", path) != "False") {
    TT_USER_ERROR("'{}' is Fortran-ordered; save it in C order", path);
  }
  // The shape, checked against the data that is there before anything is allocated: a header
  // may declare any shape.
  std::vector<int64_t> shape;
  std::string dims = DictValue(header, "shape", path);
  double needed = found->dtype.bytes();
  for (size_t i = 1; i < dims.size();) {
    size_t end = std::min(dims.find_first_of(",)", i), dims.size());
    std::string d = dims.substr(i, end - i);
    size_t first = d.find_first_not_of(' '), last = d.find_last_not_of(' ');
    if (first != std::string::npos) {
      d = d.substr(first, last - first + 1);
      int64_t v = -1;
      auto [ptr, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
      if (ec != std::errc() || ptr != d.data() + d.size() || v < 0) {
        TT_USER_ERROR("'{}': bad dimension '{}' in the .npy shape {}", path, d.substr(0, 40),
                      dims.substr(0, 80));
      }
      shape.push_back(v);
      needed *= static_cast<double>(v);
    }
    i = end + 1;
  }
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
