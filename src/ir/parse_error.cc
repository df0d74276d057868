// ParseError: a located error in IR text, rendered as a compiler-style message with the source
// line and a caret under the offending column.
#include <fmt/format.h>

#include <algorithm>

#include "tirtune/ir/parser.h"

namespace tirtune {
namespace {

std::string Render(const std::string& source, int line, int column, const std::string& detail,
                   const std::string& full_line) {
  // A long line (a 2 MB expression) is shown as a window around the column, so that the message
  // stays a few lines long.
  constexpr size_t kContext = 60;
  std::string source_line = full_line;
  size_t col = static_cast<size_t>(std::max(column, 1));
  if (full_line.size() > 3 * kContext) {
    size_t begin = col > kContext + 1 ? col - 1 - kContext : 0;
    size_t end = std::min(full_line.size(), col - 1 + kContext);
    source_line = (begin > 0 ? "..." : "") + full_line.substr(begin, end - begin) +
                  (end < full_line.size() ? "..." : "");
    col = col - begin + (begin > 0 ? 3 : 0);
  }
  std::string caret;
  // Copy tabs from the source line (they may appear in comments and strings) so that the caret
  // lines up under the column however the terminal expands them.
  for (size_t i = 1; i < col; ++i) {
    size_t at = i - 1;
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
