// Tokenizer of the text format. Indentation follows Python: a stack of enclosing indentation
// widths; a deeper line pushes (INDENT), a shallower one pops until it matches (DEDENT).
#include "lexer.h"

#include <fmt/format.h>

#include "tirtune/ir/parser.h"

namespace tirtune {

std::string Token::Describe() const {
  switch (kind) {
    case TokenKind::kName:
    case TokenKind::kInt:
    case TokenKind::kFloat:
    case TokenKind::kPunct:
      return "'" + text + "'";
    case TokenKind::kString: {
      // Keep messages one line long: a string token may hold anything.
      std::string shown;
      for (char c : text.substr(0, 20)) shown += (c == '\n' || c == '\t') ? ' ' : c;
      return "string \"" + shown + (text.size() > 20 ? "...\"" : "\"");
    }
    case TokenKind::kNewline:
      return "end of line";
    case TokenKind::kIndent:
      return "indented line";
    case TokenKind::kDedent:
      return "end of indented block";
    case TokenKind::kEnd:
      return "end of input";
  }
  return "?";
}

SourceText::SourceText(std::string_view text, std::string_view name) : text_(text), name_(name) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts_.push_back(i + 1);
  }
}

std::string_view SourceText::Line(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts_.size()) return {};
  size_t begin = line_starts_[line - 1];
  size_t end =
      static_cast<size_t>(line) < line_starts_.size() ? line_starts_[line] - 1 : text_.size();
  if (end > begin && text_[end - 1] == '\r') --end;
  return text_.substr(begin, end - begin);
}

void SourceText::Fail(int line, int column, const std::string& detail) const {
  throw ParseError(name_, line, column, detail, std::string(Line(line)));
}

namespace {

bool IsNameStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

std::string ShowChar(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", u);
}

class Lexer {
 public:
  explicit Lexer(const SourceText& source) : src_(source), text_(source.text()) {}

  std::vector<Token> Run() {
    while (pos_ < text_.size()) {
      if (at_line_start_ && bracket_depth_ == 0) {
        if (!StartLine()) continue;  // a blank or comment-only line
      }
      char c = text_[pos_];
      if (c == ' ') {
        Advance();
      } else if (c == '\t') {
        Fail("tab character; the text format indents and separates with spaces");
      } else if (c == '\r' && Peek(1) == '\n') {
        Advance();
      } else if (c == '\n') {
        EndLine();
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') Advance();
      } else if (IsNameStart(c)) {
        LexName();
      } else if (IsDigit(c)) {
        LexNumber();
      } else if (c == '"') {
        LexString();
      } else {
        LexPunct();
      }
    }
    // Close the last line and every open indentation level, as an unindented line would.
    if (!tokens_.empty() && tokens_.back().kind != TokenKind::kNewline) Emit(TokenKind::kNewline);
    while (indents_.size() > 1) {
      indents_.pop_back();
      Emit(TokenKind::kDedent);
    }
    Emit(TokenKind::kEnd);
    return std::move(tokens_);
  }

 private:
  char Peek(size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void Advance() {
    ++pos_;
    ++column_;
  }
  [[noreturn]] void Fail(const std::string& detail) { src_.Fail(line_, column_, detail); }

  // Emits a token that has no text of its own at the end of the last real token, so that
  // "found end of line" points just after the line's content rather than after its comment.
  void Emit(TokenKind kind) { tokens_.push_back({kind, "", end_line_, end_column_}); }
  void EmitText(TokenKind kind, std::string text, int line, int column) {
    tokens_.push_back({kind, std::move(text), line, column});
    end_line_ = line_;
    end_column_ = column_;
  }

  // Measures the indentation of a new line. Returns false (having consumed it) when the line is
  // blank or holds only a comment: such lines do not take part in indentation.
  bool StartLine() {
    int width = 0;
    while (pos_ < text_.size() && text_[pos_] == ' ') {
      Advance();
      ++width;
    }
    char c = Peek(0);
    if (c == '\t') Fail("tab character in indentation; indent with spaces");
    if (pos_ >= text_.size() || c == '\n' || c == '#' || (c == '\r' && Peek(1) == '\n')) {
      while (pos_ < text_.size() && text_[pos_] != '\n') Advance();
      if (pos_ < text_.size()) NextLine();
      return false;
    }
    at_line_start_ = false;
    if (width > indents_.back()) {
      indents_.push_back(width);
      tokens_.push_back({TokenKind::kIndent, "", line_, column_});
    } else {
      while (width < indents_.back()) {
        indents_.pop_back();
        tokens_.push_back({TokenKind::kDedent, "", line_, column_});
      }
      if (width != indents_.back()) {
        Fail(fmt::format("indentation of {} spaces matches no enclosing level (expected {})", width,
                         indents_.back()));
      }
    }
    return true;
  }

  void NextLine() {
    ++pos_;
    ++line_;
    column_ = 1;
  }

  void EndLine() {
    // Inside brackets a line break is only white space (implicit line joining).
    if (bracket_depth_ == 0) {
      if (!tokens_.empty() && tokens_.back().kind != TokenKind::kNewline) {
        Emit(TokenKind::kNewline);
      }
      at_line_start_ = true;
    }
    NextLine();
  }

  void LexName() {
    int line = line_, column = column_;
    size_t begin = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) Advance();
    EmitText(TokenKind::kName, std::string(text_.substr(begin, pos_ - begin)), line, column);
  }

  void LexNumber() {
    int line = line_, column = column_;
    size_t begin = pos_;
    bool is_float = false;
    while (IsDigit(Peek(0))) Advance();
    if (Peek(0) == '.') {
      is_float = true;
      Advance();
      while (IsDigit(Peek(0))) Advance();
    }
    if (Peek(0) == 'e' || Peek(0) == 'E') {
      is_float = true;
      Advance();
      if (Peek(0) == '+' || Peek(0) == '-') Advance();
      if (!IsDigit(Peek(0))) Fail("malformed exponent in number");
      while (IsDigit(Peek(0))) Advance();
    }
    if (IsNameChar(Peek(0)) || Peek(0) == '.') {
      Fail(fmt::format("unexpected {} after number", ShowChar(Peek(0))));
    }
    EmitText(is_float ? TokenKind::kFloat : TokenKind::kInt,
             std::string(text_.substr(begin, pos_ - begin)), line, column);
  }

  void LexString() {
    int line = line_, column = column_;
    Advance();  // the opening quote
    std::string value;
    while (true) {
      char c = Peek(0);
      if (pos_ >= text_.size() || c == '\n') {
        src_.Fail(line, column, "unterminated string");
      }
      if (c == '"') break;
      if (c == '\\') {
        char e = Peek(1);
        switch (e) {
          case '\\':
            value += '\\';
            break;
          case '"':
            value += '"';
            break;
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          default:
            if (pos_ + 1 >= text_.size() || e == '\n') {
              src_.Fail(line, column, "unterminated string");
            }
            Fail(fmt::format("unknown escape sequence '\\{}' in string", e));
        }
        Advance();
        Advance();
        continue;
      }
      value += c;
      Advance();
    }
    Advance();  // the closing quote
    EmitText(TokenKind::kString, std::move(value), line, column);
  }

  void LexPunct() {
    int line = line_, column = column_;
    static constexpr std::string_view kTwoChar[] = {"//", "==", "!=", "<=", ">="};
    for (std::string_view p : kTwoChar) {
      if (text_.substr(pos_, 2) == p) {
        Advance();
        Advance();
        EmitText(TokenKind::kPunct, std::string(p), line, column);
        return;
      }
    }
    char c = text_[pos_];
    static constexpr std::string_view kOneChar = "()[]{},:.=<>+-*/%@";
    if (kOneChar.find(c) == std::string_view::npos) {
      Fail(fmt::format("unexpected character {}", ShowChar(c)));
    }
    if (c == '(' || c == '[' || c == '{') ++bracket_depth_;
    // An unmatched closer is left for the parser to report; it must not make the depth negative.
    if ((c == ')' || c == ']' || c == '}') && bracket_depth_ > 0) --bracket_depth_;
    Advance();
    EmitText(TokenKind::kPunct, std::string(1, c), line, column);
  }

  const SourceText& src_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  int end_line_ = 1;  // just after the last real token
  int end_column_ = 1;
  bool at_line_start_ = true;
  int bracket_depth_ = 0;
  std::vector<int> indents_ = {0};
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> Lex(const SourceText& source) { return Lexer(source).Run(); }

}  // namespace tirtune
