// Text form of data types.
#include "tirtune/support/dtype.h"

#include <charconv>

namespace tirtune {

std::string DataType::str() const {
  if (is_void()) return "void";
  if (is_handle()) return "handle";
  std::string s;
  if (is_bool()) {
    s = "bool";
  } else {
    switch (code_) {
      case Code::kInt:
        s = "int";
        break;
      case Code::kUInt:
        s = "uint";
        break;
      case Code::kFloat:
        s = "float";
        break;
      case Code::kBFloat:
        s = "bfloat";
        break;
      case Code::kHandle:
        s = "handle";
        break;
    }
    s += std::to_string(bits_);
  }
  if (lanes_ > 1) s += "x" + std::to_string(lanes_);
  return s;
}

namespace {
bool ParseInt(std::string_view text, int* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}
}  // namespace

std::optional<DataType> DataType::Parse(std::string_view text) {
  if (text == "void") return Void();
  if (text == "handle") return Handle();
  int lanes = 1;
  if (size_t x = text.find('x'); x != std::string_view::npos) {
    if (!ParseInt(text.substr(x + 1), &lanes) || lanes < 2 || lanes > 1024) return std::nullopt;
    text = text.substr(0, x);
  }
  if (text == "bool") return Bool(lanes);
  struct Prefix {
    std::string_view name;
    Code code;
  };
  // "bfloat" before "float" is irrelevant (prefix match is exact on the letters part).
  for (Prefix p : {Prefix{"int", Code::kInt}, Prefix{"uint", Code::kUInt},
                   Prefix{"float", Code::kFloat}, Prefix{"bfloat", Code::kBFloat}}) {
    if (text.substr(0, p.name.size()) != p.name) continue;
    int bits = 0;
    if (!ParseInt(text.substr(p.name.size()), &bits)) continue;
    bool ok = (p.code == Code::kFloat)    ? (bits == 16 || bits == 32 || bits == 64)
              : (p.code == Code::kBFloat) ? bits == 16
                                          : (bits == 8 || bits == 16 || bits == 32 || bits == 64);
    if (!ok) return std::nullopt;
    return DataType(p.code, bits, lanes);
  }
  return std::nullopt;
}

}  // namespace tirtune
