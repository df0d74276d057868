// Text of constants in the IR text format: floats with the fewest digits that read back to the
// same value, and double-quoted strings with escapes (docs/TEXT_FORMAT.md).
#pragma once

#include <string>
#include <string_view>

namespace tirtune {

/// The shortest `%g` text (6 to 9 significant digits) that `strtof` reads back as `value`,
/// always with a `.` or an exponent so it reads as a float: `1.0`, `0.5`, `1e-05`. Non-finite
/// values print as `inf`, `-inf` and `nan`.
std::string Float32Text(float value);

/// As Float32Text for doubles (15 to 17 significant digits, read back with `strtod`).
std::string Float64Text(double value);

/// `text` in double quotes with `\\`, `\"`, `\n` and `\t` escaped.
std::string QuotedString(std::string_view text);

}  // namespace tirtune
