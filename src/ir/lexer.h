// The tokenizer of the text format (docs/TEXT_FORMAT.md, "Lexical rules"): turns source text into
// tokens with 1-based line/column positions, and indentation into INDENT/DEDENT tokens.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tirtune {

enum class TokenKind {
  kName,     // identifier: [A-Za-z_][A-Za-z0-9_]*
  kInt,      // decimal digits, no sign
  kFloat,    // digits with '.' or an exponent
  kString,   // double-quoted; `text` holds the unescaped value
  kPunct,    // operator or delimiter; `text` holds it, e.g. "//", "<=", "("
  kNewline,  // end of a logical line
  kIndent,   // the next line is indented deeper than the enclosing one
  kDedent,   // one enclosing indentation level ends
  kEnd,      // end of input
};

struct Token {
  TokenKind kind;
  std::string text;
  int line = 1;
  int column = 1;

  bool Is(TokenKind k, std::string_view t) const { return kind == k && text == t; }
  bool IsPunct(std::string_view p) const { return Is(TokenKind::kPunct, p); }
  bool IsName(std::string_view n) const { return Is(TokenKind::kName, n); }
  /// How the token reads in "found X": `'for'`, `end of line`, `end of input`, ...
  std::string Describe() const;
};

/// Source text split into lines, for error messages that quote the offending line.
class SourceText {
 public:
  SourceText(std::string_view text, std::string_view name);
  std::string_view text() const { return text_; }
  const std::string& name() const { return name_; }
  /// The text of a 1-based line without its newline; empty past the end.
  std::string_view Line(int line) const;
  /// Throws the located ParseError.
  [[noreturn]] void Fail(int line, int column, const std::string& detail) const;

 private:
  std::string_view text_;
  std::string name_;
  std::vector<size_t> line_starts_;
};

/// Splits `source` into tokens; the last is kEnd. Lines nested in (), [] or {} are joined, so
/// NEWLINE/INDENT/DEDENT appear only between logical lines. Throws ParseError on a tab, a bad
/// character, a malformed number or string, or an indentation that matches no enclosing level.
std::vector<Token> Lex(const SourceText& source);

}  // namespace tirtune
