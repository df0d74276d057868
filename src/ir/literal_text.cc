// Float and string literal text. Floats print with the fewest significant digits that round-trip
// so that printing then parsing is exact and the canonical text (and hence the hash) is stable.
#include "literal_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tirtune {
namespace {

// `%g` drops the point from integral values ("1", "100000"); the format needs one so the text
// reads back as a float and not as an integer.
std::string WithFloatMarker(std::string text) {
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string NonFiniteText(double value) {
  if (std::isnan(value)) return "nan";
  return value < 0 ? "-inf" : "inf";
}

// The first precision in [min_digits, max_digits] whose `%g` text `read_back` maps to `value`.
// The last one always round-trips (9 digits for float, 17 for double), so the loop ends there.
template <typename T, typename ReadBack>
std::string ShortestText(T value, int min_digits, int max_digits, ReadBack read_back) {
  char buf[40];
  for (int digits = min_digits; digits <= max_digits; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, static_cast<double>(value));
    if (read_back(buf) == value) break;
  }
  return WithFloatMarker(buf);
}

}  // namespace

std::string Float32Text(float value) {
  if (!std::isfinite(value)) return NonFiniteText(value);
  return ShortestText(value, 6, 9, [](const char* s) { return std::strtof(s, nullptr); });
}

std::string Float64Text(double value) {
  if (!std::isfinite(value)) return NonFiniteText(value);
  return ShortestText(value, 15, 17, [](const char* s) { return std::strtod(s, nullptr); });
}

std::string QuotedString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace tirtune
