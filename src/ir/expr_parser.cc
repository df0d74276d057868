// Parsing of expressions: precedence climbing by one function per level, literals and their
// promotion to the other operand's type, calls (min/max, select, casts, intrinsics, ramp,
// broadcast, let) and buffer loads. Nodes are built with the raw factories (no folding) so that
// the parsed tree is exactly the printed one; each call is preceded by the type checks that make
// the factory succeed.
#include <fmt/format.h>

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "text_parser.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune {
namespace {

struct OperatorKind {
  std::string_view text;
  NodeKind kind;
};
constexpr OperatorKind kComparisons[] = {
    {"==", NodeKind::kEQ}, {"!=", NodeKind::kNE}, {"<", NodeKind::kLT},
    {"<=", NodeKind::kLE}, {">", NodeKind::kGT},  {">=", NodeKind::kGE},
};
constexpr OperatorKind kMultiplicative[] = {
    {"*", NodeKind::kMul},
    {"/", NodeKind::kDiv},
    {"//", NodeKind::kFloorDiv},
    {"%", NodeKind::kFloorMod},
};

// Whether `t` is one of `ops`, and which.
template <size_t N>
bool OperatorOf(const Token& t, const OperatorKind (&ops)[N], NodeKind* kind) {
  if (t.kind != TokenKind::kPunct) return false;
  for (const OperatorKind& op : ops) {
    if (t.text == op.text) {
      *kind = op.kind;
      return true;
    }
  }
  return false;
}

bool CompareKind(const Token& t, NodeKind* kind) { return OperatorOf(t, kComparisons, kind); }
bool MultiplicativeKind(const Token& t, NodeKind* kind) {
  return OperatorOf(t, kMultiplicative, kind);
}

bool IsAdditive(const Token& t) { return t.IsPunct("+") || t.IsPunct("-"); }

// A token that starts a number: digits, or the names of the non-finite floats.
bool IsNumberToken(const Token& t) {
  return t.kind == TokenKind::kInt || t.kind == TokenKind::kFloat || t.IsName("inf") ||
         t.IsName("nan");
}

bool IntFits(DataType t, int64_t v) {
  if (t.is_bool()) return v == 0 || v == 1;
  if (t.bits() == 64) return t.is_int() || v >= 0;
  int64_t limit = int64_t{1} << (t.is_int() ? t.bits() - 1 : t.bits());
  return t.is_int() ? (v >= -limit && v < limit) : (v >= 0 && v < limit);
}

bool IsArithmetic(DataType t) { return t.is_integral() || t.is_float(); }

}  // namespace

// ---- Nodes, literals and types ----

ParsedExpr TextParser::Node(Expr expr, const Token& start, const Token& at,
                            const std::vector<const ParsedExpr*>& children) {
  ParsedExpr result;
  result.expr = std::move(expr);
  result.token = &start;
  for (const ParsedExpr* child : children) {
    result.height = std::max(result.height, child->height + 1);
  }
  if (result.height > kMaxExprHeight) {
    Fail(at, fmt::format("expression nesting too deep (more than {} levels)", kMaxExprHeight));
  }
  return result;
}

ParsedExpr TextParser::ParseNumber(const Token& number, bool negate, const Token& start) {
  ParsedExpr lit;
  lit.token = &start;
  if (number.kind == TokenKind::kInt) {
    // The sign is part of the text so that the most negative int64 reads back.
    std::string text = (negate ? "-" : "") + number.text;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), lit.int_value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      Fail(number, fmt::format("integer literal {} is out of range for int64", text));
    }
    lit.literal = ParsedExpr::Literal::kInt;
    return lit;
  }
  double value = 0;
  if (number.IsName("inf")) {
    value = std::numeric_limits<double>::infinity();
  } else if (number.IsName("nan")) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else {
    const char* first = number.text.data();
    auto [end, ec] = std::from_chars(first, first + number.text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // from_chars reports underflow as well; read the nearest double (a subnormal or zero).
      value = std::strtod(number.text.c_str(), nullptr);
      if (std::isinf(value)) {
        Fail(number, fmt::format("float literal {} is out of range", number.text));
      }
    } else if (ec != std::errc() || end != first + number.text.size()) {
      Fail(number, fmt::format("malformed float literal {}", number.text));
    }
  }
  lit.literal = ParsedExpr::Literal::kFloat;
  lit.float_value = negate ? -value : value;
  return lit;
}

Expr TextParser::LiteralAs(const ParsedExpr& lit, DataType t) {
  if (!t.is_scalar()) return Expr();
  if (lit.literal == ParsedExpr::Literal::kInt) {
    if (t.is_integral()) {
      if (!IntFits(t, lit.int_value)) {
        Fail(*lit.token,
             fmt::format("integer literal {} is out of range for {}", lit.int_value, t.str()));
      }
      return IntImm(t, lit.int_value);
    }
    if (!t.is_float()) return Expr();
    return LiteralAs(ParsedExpr{Expr(), lit.token, 1, ParsedExpr::Literal::kFloat, 0,
                                static_cast<double>(lit.int_value)},
                     t);
  }
  if (lit.literal != ParsedExpr::Literal::kFloat || !t.is_float()) return Expr();
  double value = lit.float_value;
  if (t.code() == DataType::Code::kFloat && t.bits() == 32) {
    // A float32 constant holds a float32 value, as MakeConst builds it. Converting a finite
    // double beyond the float range is undefined, so values past FLT_MAX are either rounded
    // down to it (within half a unit in the last place) or rejected.
    constexpr double kRoundsToMax = 3.4028235677973366e+38;
    if (std::isfinite(value) && std::fabs(value) > FLT_MAX) {
      if (std::fabs(value) >= kRoundsToMax) {
        Fail(*lit.token, fmt::format("float literal {} is out of range for float32", value));
      }
      value = std::copysign(static_cast<double>(FLT_MAX), value);
    }
    value = static_cast<double>(static_cast<float>(value));
  }
  return FloatImm(t, value);
}

void TextParser::Unify(const std::vector<ParsedExpr*>& operands) {
  const ParsedExpr* typed = nullptr;
  bool float_literal = false;
  for (const ParsedExpr* e : operands) {
    if (e->literal == ParsedExpr::Literal::kNone && typed == nullptr) typed = e;
    if (e->literal == ParsedExpr::Literal::kFloat) float_literal = true;
  }
  if (typed == nullptr && !float_literal) return;  // only int literals: all int64 already
  DataType target = typed != nullptr ? typed->expr.dtype() : DataType::Float(32);
  for (ParsedExpr* e : operands) {
    if (e->literal == ParsedExpr::Literal::kNone || e->expr.dtype() == target) continue;
    Expr converted = LiteralAs(*e, target);
    if (!converted.defined()) continue;  // the caller reports the type mismatch
    e->expr = converted;
    e->literal = ParsedExpr::Literal::kNone;
  }
}

Expr TextParser::Coerce(const ParsedExpr& e, DataType t, std::string_view what) {
  if (e.literal != ParsedExpr::Literal::kNone) {
    if (Expr converted = LiteralAs(e, t); converted.defined()) return converted;
  }
  if (e.expr.dtype() != t) {
    Fail(*e.token,
         fmt::format("{} must have type {}, found {}", what, t.str(), e.expr.dtype().str()));
  }
  return e.expr;
}

bool TextParser::IsIndexLike(const ParsedExpr& e) {
  if (e.literal != ParsedExpr::Literal::kNone) return e.literal == ParsedExpr::Literal::kInt;
  return e.expr.dtype().is_int() && e.expr.dtype().is_scalar();
}

void TextParser::CheckIndexType(const ParsedExpr& e, std::string_view what) {
  DataType t = e.expr.dtype();
  if (!t.is_int() || !t.is_scalar()) {
    Fail(*e.token, fmt::format("{} must be a scalar integer, found {}", what, t.str()));
  }
}

void TextParser::CheckBool(const ParsedExpr& e, std::string_view what) {
  DataType t = e.expr.dtype();
  if (!t.is_bool() || !t.is_scalar()) {
    Fail(*e.token, fmt::format("{} must be bool, found {}", what, t.str()));
  }
}

DataType TextParser::ParseDType(bool scalar_only) {
  const Token& name = ExpectName("data type");
  std::optional<DataType> type = DataType::Parse(name.text);
  if (!type.has_value()) Fail(name, fmt::format("unknown data type '{}'", name.text));
  if (scalar_only && !type->is_scalar()) {
    Fail(name, fmt::format("buffer element type must be a scalar type, found {}", name.text));
  }
  return *type;
}

int64_t TextParser::ParseIntToken(std::string_view what, int64_t min, int64_t max) {
  const Token& t = Peek();
  if (t.kind != TokenKind::kInt) FailExpected(fmt::format("{} (an integer)", what));
  int64_t value = 0;
  auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
  if (ec != std::errc() || value < min || value > max) {
    Fail(t, fmt::format("{} must be an integer from {} to {}", what, min, max));
  }
  Next();
  return value;
}

// ---- Operators, loosest first ----

ParsedExpr TextParser::ParseExpr() {
  NestingGuard guard(this, Peek());
  return ParseOr();
}

ParsedExpr TextParser::Binary(NodeKind kind, ParsedExpr a, ParsedExpr b, const Token& op) {
  Unify({&a, &b});
  DataType ta = a.expr.dtype(), tb = b.expr.dtype();
  if (ta != tb) {
    Fail(op, fmt::format("operands of '{}' have different types: {} and {}", op.text, ta.str(),
                         tb.str()));
  }
  if (kind == NodeKind::kAnd || kind == NodeKind::kOr) {
    if (!ta.is_bool()) {
      Fail(op, fmt::format("operands of '{}' must be bool, found {}", op.text, ta.str()));
    }
  } else if (!IsArithmetic(ta)) {
    Fail(op, fmt::format("'{}' does not apply to {} values", op.text, ta.str()));
  }
  return Node(MakeBinary(kind, a.expr, b.expr), *a.token, op, {&a, &b});
}

ParsedExpr TextParser::ParseOr() {
  ParsedExpr lhs = ParseAnd();
  while (Peek().IsName("or")) {
    const Token& op = Next();
    lhs = Binary(NodeKind::kOr, std::move(lhs), ParseAnd(), op);
  }
  return lhs;
}

ParsedExpr TextParser::ParseAnd() {
  ParsedExpr lhs = ParseNot();
  while (Peek().IsName("and")) {
    const Token& op = Next();
    lhs = Binary(NodeKind::kAnd, std::move(lhs), ParseNot(), op);
  }
  return lhs;
}

ParsedExpr TextParser::ParseNot() {
  if (!Peek().IsName("not")) return ParseComparison();
  const Token& op = Next();
  NestingGuard guard(this, op);
  ParsedExpr operand = ParseNot();
  if (!operand.expr.dtype().is_bool()) {
    Fail(*operand.token,
         fmt::format("operand of 'not' must be bool, found {}", operand.expr.dtype().str()));
  }
  return Node(MakeNot(operand.expr), op, op, {&operand});
}

ParsedExpr TextParser::ParseComparison() {
  ParsedExpr lhs = ParseAdditive();
  NodeKind kind;
  if (!CompareKind(Peek(), &kind)) return lhs;
  const Token& op = Next();
  ParsedExpr rhs = ParseAdditive();
  if (NodeKind next; CompareKind(Peek(), &next)) {
    Fail(Peek(), "comparisons do not chain; combine them with 'and'");
  }
  return Binary(kind, std::move(lhs), std::move(rhs), op);
}

ParsedExpr TextParser::ParseAdditive(ParsedExpr* last_add, bool* split) {
  ParsedExpr lhs = ParseMultiplicative();
  while (IsAdditive(Peek())) {
    const Token& op = Next();
    ParsedExpr rhs = ParseMultiplicative();
    if (last_add != nullptr && op.text == "+" && !IsAdditive(Peek()) &&
        StructuralEqual(lhs.expr, last_add->expr)) {
      *last_add = std::move(rhs);
      *split = true;
      return lhs;
    }
    NodeKind kind = op.text == "+" ? NodeKind::kAdd : NodeKind::kSub;
    lhs = Binary(kind, std::move(lhs), std::move(rhs), op);
  }
  return lhs;
}

ParsedExpr TextParser::ParseMultiplicative() {
  ParsedExpr lhs = ParseUnary();
  NodeKind kind;
  while (MultiplicativeKind(Peek(), &kind)) {
    const Token& op = Next();
    lhs = Binary(kind, std::move(lhs), ParseUnary(), op);
  }
  return lhs;
}

ParsedExpr TextParser::ParseUnary() {
  if (!Peek().IsPunct("-")) return ParsePrimary();
  const Token& op = Next();
  // `-3` and `-0.5` are negative literals, not negations: that is how the printer writes them.
  if (IsNumberToken(Peek()) && !Peek(1).IsPunct("(")) {
    return BareLiteral(ParseNumber(Next(), /*negate=*/true, op));
  }
  NestingGuard guard(this, op);
  ParsedExpr operand = ParseUnary();
  DataType t = operand.expr.dtype();
  if (!t.is_scalar() || !(t.is_int() || t.is_uint() || t.is_float())) {
    Fail(op, fmt::format("cannot negate a {} value", t.str()));
  }
  Expr zero = t.is_float() ? FloatImm(t, 0.0) : IntImm(t, 0);
  return Node(MakeBinary(NodeKind::kSub, zero, operand.expr), op, op, {&operand});
}

// ---- Atoms ----

ParsedExpr TextParser::BareLiteral(ParsedExpr lit) {
  DataType t = lit.literal == ParsedExpr::Literal::kInt ? DataType::Index() : DataType::Float(32);
  lit.expr = LiteralAs(lit, t);
  return lit;
}

ParsedExpr TextParser::ParsePrimary() {
  const Token& t = Peek();
  if (t.kind == TokenKind::kInt || t.kind == TokenKind::kFloat) {
    Next();
    return BareLiteral(ParseNumber(t, /*negate=*/false, t));
  }
  if (t.kind == TokenKind::kString) {
    Next();
    ParsedExpr s;
    s.expr = StringImm(t.text);
    s.token = &t;
    return s;
  }
  if (t.IsPunct("(")) {
    Next();
    ParsedExpr inner = ParseExpr();
    ExpectPunct(")");
    return inner;
  }
  if (t.kind == TokenKind::kName && !t.IsName("and") && !t.IsName("or") && !t.IsName("not")) {
    return ParseName();
  }
  FailExpected("an expression");
}

ParsedExpr TextParser::ParseName() {
  const Token& name = Next();
  if (Peek().IsPunct("(")) return ParseCall(name);
  if (name.IsName("True") || name.IsName("False")) {
    ParsedExpr b;
    b.expr = Bool(name.text == "True");
    b.token = &name;
    return b;
  }
  if (name.IsName("inf") || name.IsName("nan")) {
    return BareLiteral(ParseNumber(name, /*negate=*/false, name));
  }
  Symbol symbol = Resolve(name);
  if (symbol.buffer.defined()) {
    if (!Peek().IsPunct("[")) {
      Fail(name, fmt::format("buffer '{}' is used as a value; index it, as in {}[...]", name.text,
                             name.text));
    }
    std::vector<ParsedExpr> indices = ParseIndices(name, symbol.buffer);
    std::vector<const ParsedExpr*> children;
    std::vector<Expr> exprs;
    for (const ParsedExpr& i : indices) {
      children.push_back(&i);
      exprs.push_back(i.expr);
    }
    return Node(MakeBufferLoad(symbol.buffer, std::move(exprs)), name, name, children);
  }
  if (Peek().IsPunct("[")) {
    Fail(name, fmt::format("'{}' is not a buffer and cannot be indexed", name.text));
  }
  ParsedExpr var;
  var.expr = symbol.var;
  var.token = &name;
  return var;
}

std::vector<ParsedExpr> TextParser::ParseIndices(const Token& name, const Buffer& buffer) {
  ExpectPunct("[");
  std::vector<ParsedExpr> indices;
  while (!Peek().IsPunct("]")) {
    ParsedExpr index = ParseExpr();
    if (!index.expr.dtype().is_int()) {
      Fail(*index.token,
           fmt::format("a buffer index must be an integer, found {}", index.expr.dtype().str()));
    }
    indices.push_back(std::move(index));
    if (!AcceptPunct(",")) break;
  }
  ExpectPunct("]");
  if (static_cast<int>(indices.size()) != buffer->ndim()) {
    Fail(name, fmt::format("buffer '{}' has rank {}, found {} indices", name.text, buffer->ndim(),
                           indices.size()));
  }
  return indices;
}

// ---- Calls ----

std::vector<ParsedExpr> TextParser::ParseArgs() {
  ExpectPunct("(");
  std::vector<ParsedExpr> args;
  while (!Peek().IsPunct(")")) {
    args.push_back(ParseExpr());
    if (!AcceptPunct(",")) break;
  }
  ExpectPunct(")");
  return args;
}

ParsedExpr TextParser::ParseCall(const Token& name) {
  const std::string& f = name.text;
  if (f == "let") return ParseLetExpr(name);
  if (f == "cast") {
    ExpectPunct("(");
    DataType type = ParseDType(/*scalar_only=*/false);
    ExpectPunct(",");
    ParsedExpr value = ParseExpr();
    ExpectPunct(")");
    return CastOf(type, value, name);
  }
  if (std::optional<DataType> type = DataType::Parse(f)) {
    return ParseTypedLiteralOrCast(name, *type);
  }
  Intrinsic intrinsic = Intrinsic::kExp;
  bool is_intrinsic = IntrinsicFromName(f, &intrinsic);
  size_t arity = f == "min" || f == "max" || f == "broadcast" ? 2
                 : f == "select" || f == "ramp"               ? 3
                 : is_intrinsic ? static_cast<size_t>(IntrinsicArity(intrinsic))
                                : 0;
  if (arity == 0) Fail(name, fmt::format("unknown function '{}'", f));
  std::vector<ParsedExpr> args = ParseArgs();
  if (args.size() != arity) {
    Fail(name, fmt::format("'{}' takes {} arguments, found {}", f, arity, args.size()));
  }
  if (f == "min" || f == "max") {
    return Binary(f == "min" ? NodeKind::kMin : NodeKind::kMax, std::move(args[0]),
                  std::move(args[1]), name);
  }
  if (f == "select") {
    Unify({&args[1], &args[2]});
    DataType c = args[0].expr.dtype(), t = args[1].expr.dtype(), e = args[2].expr.dtype();
    if (!c.is_bool() || (c.lanes() != 1 && c.lanes() != t.lanes())) {
      Fail(*args[0].token, fmt::format("select condition must be bool, found {}", c.str()));
    }
    if (t != e) {
      Fail(name, fmt::format("select branches have different types: {} and {}", t.str(), e.str()));
    }
    return Node(MakeSelect(args[0].expr, args[1].expr, args[2].expr), name, name,
                {&args[0], &args[1], &args[2]});
  }
  if (f == "ramp" || f == "broadcast") {
    const ParsedExpr& lanes_arg = args.back();
    if (lanes_arg.literal != ParsedExpr::Literal::kInt || lanes_arg.int_value < 2 ||
        lanes_arg.int_value > 1024) {
      Fail(*lanes_arg.token, "lanes must be an integer literal from 2 to 1024");
    }
    int lanes = static_cast<int>(lanes_arg.int_value);
    if (f == "ramp") Unify({&args[0], &args[1]});
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      DataType t = args[i].expr.dtype();
      if (!t.is_scalar() || !IsArithmetic(t)) {
        Fail(*args[i].token, fmt::format("'{}' needs a scalar number, found {}", f, t.str()));
      }
    }
    if (f == "broadcast") {
      return Node(MakeBroadcast(args[0].expr, lanes), name, name, {&args[0]});
    }
    if (args[0].expr.dtype() != args[1].expr.dtype()) {
      Fail(name, fmt::format("ramp base and stride have different types: {} and {}",
                             args[0].expr.dtype().str(), args[1].expr.dtype().str()));
    }
    return Node(MakeRamp(args[0].expr, args[1].expr, lanes), name, name, {&args[0], &args[1]});
  }
  // A math intrinsic: float arguments of one type.
  std::vector<ParsedExpr*> operands;
  std::vector<const ParsedExpr*> children;
  for (ParsedExpr& a : args) {
    operands.push_back(&a);
    children.push_back(&a);
  }
  Unify(operands);
  std::vector<Expr> exprs;
  for (const ParsedExpr& a : args) {
    if (a.expr.dtype() != args[0].expr.dtype()) {
      Fail(*a.token, fmt::format("arguments of '{}' have different types: {} and {}", f,
                                 args[0].expr.dtype().str(), a.expr.dtype().str()));
    }
    if (!a.expr.dtype().is_float()) {
      Fail(*a.token, fmt::format("'{}' needs float arguments, found {}", f, a.expr.dtype().str()));
    }
    exprs.push_back(a.expr);
  }
  return Node(MakeCall(intrinsic, std::move(exprs)), name, name, children);
}

ParsedExpr TextParser::ParseTypedLiteralOrCast(const Token& name, DataType type) {
  ExpectPunct("(");
  // `int32(5)`, `float16(-1.5)`, `float32(inf)`: a literal of the named type. Anything else in
  // the parentheses is converted: `float32(x)` is a Cast.
  size_t sign = Peek().IsPunct("-") ? 1 : 0;
  const Token& number = Peek(sign);
  if (IsNumberToken(number) && Peek(sign + 1).IsPunct(")")) {
    if (sign != 0) Next();
    Next();
    ParsedExpr lit = ParseNumber(number, /*negate=*/sign != 0, name);
    Next();  // ')'
    Expr typed = LiteralAs(lit, type);
    if (!typed.defined()) {
      Fail(number,
           fmt::format("a {} literal cannot have type {}",
                       lit.literal == ParsedExpr::Literal::kInt ? "integer" : "float", type.str()));
    }
    ParsedExpr result;
    result.expr = typed;
    result.token = &name;
    return result;
  }
  ParsedExpr value = ParseExpr();
  ExpectPunct(")");
  return CastOf(type, value, name);
}

ParsedExpr TextParser::CastOf(DataType type, const ParsedExpr& value, const Token& at) {
  DataType from = value.expr.dtype();
  if (!IsArithmetic(from) || !IsArithmetic(type)) {
    Fail(at, fmt::format("cannot cast {} to {}", from.str(), type.str()));
  }
  if (from.lanes() != type.lanes()) {
    Fail(at, fmt::format("cast from {} to {} changes the number of lanes", from.str(), type.str()));
  }
  return Node(MakeCast(type, value.expr), at, at, {&value});
}

ParsedExpr TextParser::ParseLetExpr(const Token& name) {
  ExpectPunct("(");
  const Token& var_name = ExpectName("variable name");
  ExpectPunct(",");
  ParsedExpr value = ParseExpr();
  ExpectPunct(",");
  // The variable is visible in the body only, as in the statement form.
  Var var(var_name.text, value.expr.dtype());
  ScopeGuard scope(this);
  Define(var_name, Symbol{var, Buffer()});
  ParsedExpr body = ParseExpr();
  ExpectPunct(")");
  return Node(MakeLet(var, value.expr, body.expr), name, name, {&value, &body});
}

}  // namespace tirtune
