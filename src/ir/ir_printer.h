// The printer behind Print and ToString (docs/TEXT_FORMAT.md): statements append indented lines
// to a buffer, expressions return their text. Private to the ir library.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "name_table.h"
#include "tirtune/ir/function.h"
#include "tirtune/ir/printer.h"

namespace tirtune {

/// Binding strength of an expression's outermost operator, loosest first. An operand is
/// parenthesized when it binds more loosely than its position requires.
enum class Precedence : int {
  kLowest = 0,
  kOr,
  kAnd,
  kNot,
  kCompare,
  kAdd,
  kMul,
  kUnary,  // negative literals
  kAtom,   // names, calls, loads, non-negative literals
};

class IRPrinter {
 public:
  explicit IRPrinter(const PrintOptions& options);

  void PrintFunction(const PrimFunc& func);
  /// Appends the lines of `stmt`, indented `indent` levels.
  void PrintStmt(const Stmt& stmt, int indent);
  /// The text of `expr`, in parentheses when it binds more loosely than `context`.
  std::string ExprText(const Expr& expr, Precedence context = Precedence::kLowest);

  /// The lines printed so far.
  const std::string& text() const { return out_; }

 private:
  // Expressions (expr_printer.cc).
  std::string ExprTextOf(const ExprNode* node, Precedence* precedence);
  std::string LiteralText(const ExprNode* node, Precedence* precedence);
  std::string ArgsText(const std::vector<Expr>& args);

  // Statements (printer.cc).
  void Line(int indent, const std::string& text, bool marked = false);
  bool IsMarked(const Object* node) const { return marked_.count(node) != 0; }
  void PrintFor(const ForNode* loop, int indent);
  void PrintBlock(const BlockRealizeNode* realize, const BlockNode* block, int indent);
  void PrintIf(const IfThenElseNode* node, int indent);
  std::string BufferName(const Buffer& buffer);
  /// `(shape), DTYPE[, strides=(..)][, scope=".."][, align=N]`: the arguments of `Buffer(...)`,
  /// `alloc_buffer(...)` and, after the name, `allocate(...)`.
  std::string BufferSpecText(const BufferNode* buffer);
  std::string TupleText(const std::vector<Expr>& dims);
  std::string RegionText(const BufferRegion& region);
  std::string DictText(const std::map<std::string, Expr>& entries);

  std::unordered_set<const Object*> marked_;
  std::string mark_message_;
  NameTable names_;
  std::string out_;
};

}  // namespace tirtune
