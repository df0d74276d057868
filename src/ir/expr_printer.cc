// Expression text: literals, infix operators with the fewest parentheses precedence allows, and
// the call forms (min, select, casts, intrinsics, ramp, broadcast, let).
#include <fmt/format.h>

#include <cmath>

#include "ir_printer.h"
#include "literal_text.h"
#include "tirtune/ir/buffer.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

struct InfixOp {
  NodeKind kind;
  const char* symbol;
  Precedence precedence;
};

// Min and Max are binary nodes too but print as calls, so they have no entry here.
constexpr InfixOp kInfixOps[] = {
    {NodeKind::kAdd, "+", Precedence::kAdd},       {NodeKind::kSub, "-", Precedence::kAdd},
    {NodeKind::kMul, "*", Precedence::kMul},       {NodeKind::kDiv, "/", Precedence::kMul},
    {NodeKind::kFloorDiv, "//", Precedence::kMul}, {NodeKind::kFloorMod, "%", Precedence::kMul},
    {NodeKind::kEQ, "==", Precedence::kCompare},   {NodeKind::kNE, "!=", Precedence::kCompare},
    {NodeKind::kLT, "<", Precedence::kCompare},    {NodeKind::kLE, "<=", Precedence::kCompare},
    {NodeKind::kGT, ">", Precedence::kCompare},    {NodeKind::kGE, ">=", Precedence::kCompare},
    {NodeKind::kAnd, "and", Precedence::kAnd},     {NodeKind::kOr, "or", Precedence::kOr},
};

const InfixOp* FindInfixOp(NodeKind kind) {
  for (const InfixOp& op : kInfixOps) {
    if (op.kind == kind) return &op;
  }
  return nullptr;
}

Precedence Tighter(Precedence p) { return static_cast<Precedence>(static_cast<int>(p) + 1); }

bool IsLiteral(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

// A float32 immediate normally holds a float32 value (MakeConst rounds); one that does not is
// printed with double digits rather than silently rounded.
std::string FloatDigits(DataType t, double value) {
  bool float32_exact = static_cast<double>(static_cast<float>(value)) == value;
  if (t == DataType::Float(32) && (float32_exact || std::isnan(value))) {
    return Float32Text(static_cast<float>(value));
  }
  return Float64Text(value);
}

}  // namespace

std::string IRPrinter::ExprText(const Expr& expr, Precedence context) {
  TT_ICHECK(expr.defined(), "printing an undefined expression");
  Precedence own = Precedence::kAtom;
  std::string text = ExprTextOf(expr.get(), &own);
  if (own < context) return "(" + text + ")";
  return text;
}

std::string IRPrinter::ArgsText(const std::vector<Expr>& args) {
  std::string text;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) text += ", ";
    text += ExprText(args[i]);
  }
  return text;
}

std::string IRPrinter::LiteralText(const ExprNode* node, Precedence* precedence) {
  if (node->kind() == NodeKind::kIntImm) {
    const auto* imm = static_cast<const IntImmNode*>(node);
    if (imm->dtype.is_bool()) return imm->value ? "True" : "False";
    if (imm->dtype == DataType::Index()) {
      if (imm->value < 0) *precedence = Precedence::kUnary;
      return std::to_string(imm->value);
    }
    return fmt::format("{}({})", imm->dtype.str(), imm->value);
  }
  const auto* imm = static_cast<const FloatImmNode*>(node);
  std::string digits = FloatDigits(imm->dtype, imm->value);
  if (imm->dtype != DataType::Float(32)) return fmt::format("{}({})", imm->dtype.str(), digits);
  if (digits[0] == '-') *precedence = Precedence::kUnary;
  return digits;
}

std::string IRPrinter::ExprTextOf(const ExprNode* node, Precedence* precedence) {
  *precedence = Precedence::kAtom;
  NodeKind kind = node->kind();
  if (kind == NodeKind::kIntImm || kind == NodeKind::kFloatImm) {
    return LiteralText(node, precedence);
  }
  if (const InfixOp* op = FindInfixOp(kind)) {
    *precedence = op->precedence;
    // Left-associative: the left operand may share the level, the right one may not.
    // Comparisons do not chain, so neither of their operands may share it.
    Precedence left =
        op->precedence == Precedence::kCompare ? Tighter(op->precedence) : op->precedence;
    return fmt::format("{} {} {}", ExprText(BinaryA(node), left), op->symbol,
                       ExprText(BinaryB(node), Tighter(op->precedence)));
  }
  switch (kind) {
    case NodeKind::kStringImm:
      return QuotedString(static_cast<const StringImmNode*>(node)->value);
    case NodeKind::kVar: {
      const auto* var = static_cast<const VarNode*>(node);
      return names_.Var(var, var->name);
    }
    case NodeKind::kMin:
    case NodeKind::kMax:
      return fmt::format("{}({}, {})", kind == NodeKind::kMin ? "min" : "max",
                         ExprText(BinaryA(node)), ExprText(BinaryB(node)));
    case NodeKind::kNot:
      *precedence = Precedence::kNot;
      return "not " + ExprText(static_cast<const NotNode*>(node)->a, Precedence::kNot);
    case NodeKind::kSelect: {
      const auto* op = static_cast<const SelectNode*>(node);
      return fmt::format("select({}, {}, {})", ExprText(op->cond), ExprText(op->t),
                         ExprText(op->f));
    }
    case NodeKind::kCast: {
      // `float32(5)` would read as a float32 literal, so a cast of a literal is spelled out.
      const auto* op = static_cast<const CastNode*>(node);
      if (IsLiteral(op->value)) {
        return fmt::format("cast({}, {})", op->dtype.str(), ExprText(op->value));
      }
      return fmt::format("{}({})", op->dtype.str(), ExprText(op->value));
    }
    case NodeKind::kCall: {
      const auto* op = static_cast<const CallNode*>(node);
      return fmt::format("{}({})", IntrinsicName(op->op), ArgsText(op->args));
    }
    case NodeKind::kBufferLoad: {
      const auto* op = static_cast<const BufferLoadNode*>(node);
      return fmt::format("{}[{}]", BufferName(op->buffer), ArgsText(op->indices));
    }
    case NodeKind::kRamp: {
      const auto* op = static_cast<const RampNode*>(node);
      return fmt::format("ramp({}, {}, {})", ExprText(op->base), ExprText(op->stride), op->lanes);
    }
    case NodeKind::kBroadcast: {
      const auto* op = static_cast<const BroadcastNode*>(node);
      return fmt::format("broadcast({}, {})", ExprText(op->value), op->lanes);
    }
    case NodeKind::kLet: {
      // The value belongs to the enclosing scope: print it before the variable is (re)named.
      const auto* op = static_cast<const LetNode*>(node);
      std::string value = ExprText(op->value);
      std::string var = names_.DefineVar(op->var.get(), op->var->name);
      return fmt::format("let({}, {}, {})", var, value, ExprText(op->body));
    }
    default:
      TT_UNREACHABLE("not an expression kind: {}", static_cast<int>(kind));
  }
}

}  // namespace tirtune
