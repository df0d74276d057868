// ParseError: a located error in IR text, rendered as a compiler-style message with the source
// line and a caret under the offending column.
#include <fmt/format.h>

#include "tirtune/ir/parser.h"

namespace tirtune {
namespace {

std::string Render(const std::string& source, int line, int column, const std::string& detail,
                   const std::string& source_line) {
  std::string caret;
  // Copy tabs from the source line (they may appear in comments and strings) so that the caret
  // lines up under the column however the terminal expands them.
  for (int i = 1; i < column; ++i) {
    size_t at = static_cast<size_t>(i - 1);
    caret += at < source_line.size() && source_line[at] == '\t' ? '\t' : ' ';
  }
  caret += '^';
  return fmt::format("{}:{}:{}: error: {}\n{}\n{}", source, line, column, detail, source_line,
                     caret);
}

}  // namespace

ParseError::ParseError(std::string source, int line, int column, std::string detail,
                       const std::string& source_line)
    : UserError(Render(source, line, column, detail, source_line)),
      source_(std::move(source)),
      line_(line),
      column_(column),
      detail_(std::move(detail)) {}

}  // namespace tirtune
