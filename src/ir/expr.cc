// Expression factories: each checks the operand types before building a node.
#include "tirtune/ir/expr.h"

#include <array>

#include "tirtune/support/error.h"

namespace tirtune {

Expr::Expr(int value) : Expr(IntImm(DataType::Index(), value)) {}
Expr::Expr(int64_t value) : Expr(IntImm(DataType::Index(), value)) {}
Expr::Expr(float value) : Expr(FloatImm(DataType::Float(32), value)) {}

Var::Var(std::string name, DataType t)
    : Expr(ObjectPtr<const ExprNode>(MakeObject<VarNode>(std::move(name), t))) {}

namespace {
struct IntrinsicInfo {
  const char* name;
  int arity;
};
constexpr std::array<IntrinsicInfo, 19> kIntrinsics = {{
    {"exp", 1},
    {"exp2", 1},
    {"log", 1},
    {"log2", 1},
    {"sqrt", 1},
    {"rsqrt", 1},
    {"tanh", 1},
    {"sigmoid", 1},
    {"erf", 1},
    {"pow", 2},
    {"fabs", 1},
    {"floor", 1},
    {"ceil", 1},
    {"round", 1},
    {"trunc", 1},
    {"sin", 1},
    {"cos", 1},
    {"fma", 3},
    {"warp_shuffle_xor", 2},
}};
static_assert(kIntrinsics.size() == static_cast<size_t>(Intrinsic::kWarpShuffleXor) + 1);
}  // namespace

const char* IntrinsicName(Intrinsic op) { return kIntrinsics[static_cast<size_t>(op)].name; }
int IntrinsicArity(Intrinsic op) { return kIntrinsics[static_cast<size_t>(op)].arity; }
bool IntrinsicFromName(const std::string& name, Intrinsic* out) {
  // warp_shuffle_xor is made by GPU lowering only, never written.
  for (size_t i = 0; i < static_cast<size_t>(Intrinsic::kWarpShuffleXor); ++i) {
    if (name == kIntrinsics[i].name) {
      *out = static_cast<Intrinsic>(i);
      return true;
    }
  }
  return false;
}

Expr IntImm(DataType t, int64_t value) {
  TT_ICHECK(t.is_integral() && t.is_scalar(), "IntImm of type {}", t.str());
  if (t.is_bool()) value = value != 0;
  return Expr(ObjectPtr<const ExprNode>(MakeObject<IntImmNode>(t, value)));
}

Expr FloatImm(DataType t, double value) {
  TT_ICHECK(t.is_float() && t.is_scalar(), "FloatImm of type {}", t.str());
  return Expr(ObjectPtr<const ExprNode>(MakeObject<FloatImmNode>(t, value)));
}

Expr StringImm(std::string value) {
  return Expr(ObjectPtr<const ExprNode>(MakeObject<StringImmNode>(std::move(value))));
}

Expr Bool(bool value) { return IntImm(DataType::Bool(), value); }

namespace {
template <NodeKind K>
Expr MakeBinaryOf(DataType t, Expr a, Expr b) {
  return Expr(
      ObjectPtr<const ExprNode>(MakeObject<BinaryOpNode<K>>(t, std::move(a), std::move(b))));
}
}  // namespace

Expr MakeBinary(NodeKind k, Expr a, Expr b) {
  TT_ICHECK(a.defined() && b.defined(), "binary operand undefined");
  TT_ICHECK(a.dtype() == b.dtype(), "binary operands of different types: {} and {}",
            a.dtype().str(), b.dtype().str());
  DataType t = a.dtype();
  if (IsCompareKind(k)) t = DataType::Bool(t.lanes());
  if (k == NodeKind::kAnd || k == NodeKind::kOr) {
    TT_ICHECK(a.dtype().is_bool(), "logical operand of type {}", a.dtype().str());
  }
  switch (k) {
#define TT_CASE(Name)     \
  case NodeKind::k##Name: \
    return MakeBinaryOf<NodeKind::k##Name>(t, std::move(a), std::move(b));
    TT_CASE(Add)
    TT_CASE(Sub) TT_CASE(Mul) TT_CASE(Div) TT_CASE(FloorDiv) TT_CASE(FloorMod) TT_CASE(Min)
        TT_CASE(Max) TT_CASE(EQ) TT_CASE(NE) TT_CASE(LT) TT_CASE(LE) TT_CASE(GT) TT_CASE(GE)
            TT_CASE(And) TT_CASE(Or)
#undef TT_CASE
                default : TT_UNREACHABLE("kind {} is not binary", static_cast<int>(k));
  }
}

Expr MakeNot(Expr a) {
  TT_ICHECK(a.dtype().is_bool(), "not of type {}", a.dtype().str());
  return Expr(ObjectPtr<const ExprNode>(MakeObject<NotNode>(std::move(a))));
}

Expr MakeSelect(Expr cond, Expr t, Expr f) {
  TT_ICHECK(cond.dtype().is_bool(), "select condition of type {}", cond.dtype().str());
  TT_ICHECK(t.dtype() == f.dtype(), "select branches of types {} and {}", t.dtype().str(),
            f.dtype().str());
  return Expr(ObjectPtr<const ExprNode>(
      MakeObject<SelectNode>(std::move(cond), std::move(t), std::move(f))));
}

Expr MakeCast(DataType t, Expr value) {
  TT_ICHECK(t.lanes() == value.dtype().lanes(), "cast changes lanes: {} to {}", value.dtype().str(),
            t.str());
  return Expr(ObjectPtr<const ExprNode>(MakeObject<CastNode>(t, std::move(value))));
}

Expr MakeCall(Intrinsic op, std::vector<Expr> args) {
  TT_ICHECK(static_cast<int>(args.size()) == IntrinsicArity(op), "{} takes {} arguments, got {}",
            IntrinsicName(op), IntrinsicArity(op), args.size());
  DataType t = args[0].dtype();
  if (op == Intrinsic::kWarpShuffleXor) {
    TT_ICHECK(t.is_scalar() && (t.is_float() || t.is_int()) && t.bits() <= 64 &&
                  args[1].as<IntImmNode>() != nullptr,
              "warp_shuffle_xor({}, {})", t.str(), args[1].dtype().str());
    return Expr(ObjectPtr<const ExprNode>(MakeObject<CallNode>(t, op, std::move(args))));
  }
  for (const Expr& a : args) {
    TT_ICHECK(a.dtype() == t, "{} arguments of different types", IntrinsicName(op));
  }
  TT_ICHECK(t.is_float(), "{} of non-float type {}", IntrinsicName(op), t.str());
  return Expr(ObjectPtr<const ExprNode>(MakeObject<CallNode>(t, op, std::move(args))));
}

Expr MakeRamp(Expr base, Expr stride, int lanes) {
  TT_ICHECK(lanes > 1 && base.dtype().is_scalar() && base.dtype() == stride.dtype(), "bad ramp");
  return Expr(
      ObjectPtr<const ExprNode>(MakeObject<RampNode>(std::move(base), std::move(stride), lanes)));
}

Expr MakeBroadcast(Expr value, int lanes) {
  TT_ICHECK(lanes > 1 && value.dtype().is_scalar(), "bad broadcast");
  return Expr(ObjectPtr<const ExprNode>(MakeObject<BroadcastNode>(std::move(value), lanes)));
}

Expr MakeLet(Var var, Expr value, Expr body) {
  TT_ICHECK(var.dtype() == value.dtype(), "let binds {} to a {} value", var.dtype().str(),
            value.dtype().str());
  return Expr(ObjectPtr<const ExprNode>(
      MakeObject<LetNode>(std::move(var), std::move(value), std::move(body))));
}

const int64_t* AsConstInt(const Expr& e) {
  if (const auto* imm = e.as<IntImmNode>()) return &imm->value;
  return nullptr;
}

bool IsConstInt(const Expr& e, int64_t value) {
  const int64_t* v = AsConstInt(e);
  return v != nullptr && *v == value;
}

bool IsConstZero(const Expr& e) {
  if (const auto* f = e.as<FloatImmNode>()) return f->value == 0.0;
  return IsConstInt(e, 0);
}

void SplitConjuncts(const Expr& cond, std::vector<Expr>* out) {
  if (const auto* both = cond.as<AndNode>()) {
    SplitConjuncts(both->a, out);
    SplitConjuncts(both->b, out);
    return;
  }
  out->push_back(cond);
}

}  // namespace tirtune
