// Parsing the text format (docs/TEXT_FORMAT.md) into PrimFuncs, with located errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/support/error.h"

namespace tirtune {

/// A syntax or semantic error in IR text, located at a line and column (both 1-based).
class ParseError : public UserError {
 public:
  ParseError(std::string source, int line, int column, std::string detail,
             const std::string& source_line);
  const std::string& source() const { return source_; }
  int line() const { return line_; }
  int column() const { return column_; }
  /// The bare description, e.g. "expected ')', found ':'".
  const std::string& detail() const { return detail_; }

 private:
  std::string source_;
  int line_;
  int column_;
  std::string detail_;
};

/// Parses one function. `source_name` names the input in error messages.
PrimFunc ParsePrimFunc(std::string_view text, std::string_view source_name = "<input>");
/// Parses every function in the text (a file may hold several, separated by blank lines).
std::vector<PrimFunc> ParsePrimFuncs(std::string_view text,
                                     std::string_view source_name = "<input>");

}  // namespace tirtune
