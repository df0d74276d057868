// The recursive-descent parser of the text format (docs/TEXT_FORMAT.md), private to the ir
// library. Functions and statements are parsed in parser.cc, block headers and regions in
// block_parser.cc, expressions, literals and types in expr_parser.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lexer.h"
#include "tirtune/ir/function.h"

namespace tirtune {

/// Bound on the parser's recursion (brackets, unary operators, nested statements), so that
/// hostile input fails with "nesting too deep" instead of overflowing the stack.
inline constexpr int kMaxNesting = 500;
/// Bound on the height of a parsed expression tree. Left-associative chains (`a + b + c ...`)
/// are parsed by loops, not recursion, but the trees they build are as tall as they are long,
/// and every later pass (printer, equality, destructors) recurses over them.
inline constexpr int kMaxExprHeight = 1000;

/// An expression being parsed, with what the parser knows beyond the IR node.
struct ParsedExpr {
  enum class Literal { kNone, kInt, kFloat };

  Expr expr;
  /// The expression's first token, where errors about it point.
  const Token* token = nullptr;
  int height = 1;
  /// Set for an untyped literal (`5`, `-0.5`, `inf`): it takes the type of the other operand
  /// of a binary operator (or of the buffer it is stored to), as op.h's builders promote.
  Literal literal = Literal::kNone;
  int64_t int_value = 0;
  double float_value = 0;
};

/// What a name resolves to: exactly one of the two is defined.
struct Symbol {
  Var var;
  Buffer buffer;
};

class TextParser {
 public:
  TextParser(const SourceText& source, std::vector<Token> tokens);

  /// Parses functions up to the end of the input.
  std::vector<PrimFunc> ParseFunctions();
  /// Parses exactly one function.
  PrimFunc ParseSingleFunction();

 private:
  // ---- Tokens and errors (parser.cc) ----
  const Token& Peek(size_t ahead = 0) const;
  const Token& Next();
  bool AcceptPunct(std::string_view punct);
  const Token& ExpectPunct(std::string_view punct);
  const Token& ExpectKeyword(std::string_view word);
  const Token& ExpectName(std::string_view what);
  const Token& ExpectString(std::string_view what);
  void ExpectNewline();
  void ExpectIndent();
  [[noreturn]] void Fail(const Token& at, const std::string& detail) const;
  /// Fails with "expected WHAT, found <the next token>".
  [[noreturn]] void FailExpected(std::string_view what) const;

  /// Counts one level of recursion for its lifetime.
  class NestingGuard {
   public:
    NestingGuard(TextParser* parser, const Token& at);
    ~NestingGuard() { --parser_->depth_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    TextParser* parser_;
  };

  // ---- Scopes (parser.cc) ----
  /// Opens a scope for its lifetime.
  class ScopeGuard {
   public:
    explicit ScopeGuard(TextParser* parser) : parser_(parser) { parser_->scopes_.emplace_back(); }
    ~ScopeGuard() { parser_->scopes_.pop_back(); }
    ScopeGuard(const ScopeGuard&) = delete;
    ScopeGuard& operator=(const ScopeGuard&) = delete;

   private:
    TextParser* parser_;
  };
  /// Defines `name` in the innermost scope; fails on a reserved word or a redefinition there.
  void Define(const Token& name, Symbol symbol);
  /// The innermost definition of the name token; fails when there is none.
  const Symbol& Resolve(const Token& name) const;
  /// The buffer the name token names; fails when it names none.
  Buffer ResolveBuffer(const Token& name) const;

  // ---- Functions and statements (parser.cc) ----
  /// One function; an InternalError from its signature or the PrimFunc itself becomes a
  /// ParseError (statements convert their own).
  PrimFunc ParseFunction();
  PrimFunc ParseFunctionUnguarded();
  std::vector<Stmt> ParseStatementsUntilDedent();
  /// `:` NEWLINE INDENT statements DEDENT, in a new scope.
  Stmt ParseSuite();
  Stmt ParseStmt();
  Stmt ParseFor();
  Stmt ParseIf();
  Stmt ParseWith();
  Stmt ParseLetStmt();
  Stmt ParseAllocate();
  Stmt ParseStore();
  Stmt ParseEvaluate();
  Stmt ParseBarrier();

  // ---- Keyword arguments, annotations, buffer declarations (parser.cc) ----
  /// Parses `, key=value` pairs until the next token is not a comma. Keys must be among `order`,
  /// each at most once and in that order; `parse_value` parses the value after `=`.
  void ParseKeywordArgs(const std::vector<std::string_view>& order,
                        const std::function<void(const Token& key)>& parse_value);
  /// `{"key": LITERAL, ...}`.
  std::map<std::string, Expr> ParseDict();
  /// `(e0, e1, ...)`: integer expressions (a shape or strides).
  std::vector<Expr> ParseIntTuple(std::string_view what);
  /// `SHAPE, DTYPE[, strides=..][, scope=..][, align=N]`, the arguments of `Buffer(...)`,
  /// `alloc_buffer(...)` and (after the name, without strides) `allocate(...)`.
  Buffer ParseBufferSpec(const Token& name, bool allow_strides);

  // ---- Blocks (block_parser.cc) ----
  Stmt ParseBlock();
  void ParseIterVar(std::vector<IterVar>* iter_vars, std::vector<Expr>* bindings,
                    std::vector<const Token*>* names);
  std::vector<BufferRegion> ParseRegionLine(std::string_view keyword);
  BufferRegion ParseRegion();
  Range ParseRange();

  // ---- Expressions (expr_parser.cc) ----
  ParsedExpr ParseExpr();
  ParsedExpr ParseOr();
  ParsedExpr ParseAnd();
  ParsedExpr ParseNot();
  ParsedExpr ParseComparison();
  /// With `last_add` set (to the lower bound of a region `a:b`), parses the upper bound b and,
  /// when b's outermost operator is a `+` whose left side is structurally equal to the lower
  /// bound, stops before building that `+`: its right operand, as parsed, replaces `*last_add`
  /// and `*split` is set.
  ParsedExpr ParseAdditive(ParsedExpr* last_add = nullptr, bool* split = nullptr);
  ParsedExpr ParseMultiplicative();
  ParsedExpr ParseUnary();
  ParsedExpr ParsePrimary();
  ParsedExpr ParseName();
  ParsedExpr ParseCall(const Token& name);
  ParsedExpr ParseLetExpr(const Token& name);
  ParsedExpr ParseTypedLiteralOrCast(const Token& name, DataType type);
  /// `(e, ...)` after a function name.
  std::vector<ParsedExpr> ParseArgs();
  /// `[i, ...]` after a buffer name: one integer index per dimension.
  std::vector<ParsedExpr> ParseIndices(const Token& name, const Buffer& buffer);

  /// The value of a number token (negated when `negate`) as an untyped literal whose `expr` is
  /// not built yet; `start` is where the literal's text starts (its sign, if any).
  ParsedExpr ParseNumber(const Token& number, bool negate, const Token& start);
  /// Builds an untyped literal's expression in its default type (int64 or float32).
  ParsedExpr BareLiteral(ParsedExpr lit);
  /// An expression node over `children`; fails at `at` past kMaxExprHeight.
  ParsedExpr Node(Expr expr, const Token& start, const Token& at,
                  const std::vector<const ParsedExpr*>& children);
  ParsedExpr Binary(NodeKind kind, ParsedExpr a, ParsedExpr b, const Token& op);
  ParsedExpr CastOf(DataType type, const ParsedExpr& value, const Token& at);
  /// Gives the untyped literals among `operands` the type of the first typed operand (float32
  /// when there is none and a float literal is present: float wins, as in op.h). Leaves alone
  /// a literal that cannot take that type; the caller reports the mismatch.
  void Unify(const std::vector<ParsedExpr*>& operands);
  /// The literal `lit` as a constant of type `t`, or undefined when its kind does not fit `t`
  /// (a float literal for an integer type, any literal for a vector type); fails when the value
  /// is out of `t`'s range.
  Expr LiteralAs(const ParsedExpr& lit, DataType t);
  /// `e` converted to type `t` (when a literal) or checked to have it; `what` names it.
  Expr Coerce(const ParsedExpr& e, DataType t, std::string_view what);
  /// Whether `e` is an untyped int literal or a scalar (signed) integer.
  static bool IsIndexLike(const ParsedExpr& e);
  /// Checks that `e` is a scalar (signed) integer; `what` names it in the error.
  void CheckIndexType(const ParsedExpr& e, std::string_view what);
  /// Checks that `e` is a scalar bool.
  void CheckBool(const ParsedExpr& e, std::string_view what);
  /// The data type named by the next token.
  DataType ParseDType(bool scalar_only);
  /// An integer literal token in [min, max].
  int64_t ParseIntToken(std::string_view what, int64_t min, int64_t max);

  const SourceText& source_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<std::unordered_map<std::string, Symbol>> scopes_;
};

}  // namespace tirtune
