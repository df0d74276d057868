// Binary operators (arithmetic, comparisons, logic) of the interpreter. Integer results wrap to
// their type's width, Div truncates and FloorDiv/FloorMod floor, integer division by zero is an
// InterpError, and float32 results are rounded to float after every operation.
#include <fmt/format.h>

#include <cmath>

#include "code.h"
#include "tirtune/interp/interpreter.h"

namespace tirtune::interp {
namespace {

[[noreturn]] void ThrowDivisionByZero(const char* op, int64_t a, Machine& m) {
  throw InterpError(fmt::format("integer division by zero: {}({}, 0){}", op, a, m.Where()));
}

// Each operator gives the raw result for signed (S), unsigned (U) and float (F) operands; the
// caller wraps or rounds it. Signed arithmetic goes through uint64 so overflow is defined.
struct AddOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine&) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
  static uint64_t U(uint64_t a, uint64_t b, Machine&) { return a + b; }
  static double F(double a, double b) { return a + b; }
};

struct SubOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine&) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  }
  static uint64_t U(uint64_t a, uint64_t b, Machine&) { return a - b; }
  static double F(double a, double b) { return a - b; }
};

struct MulOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine&) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  }
  static uint64_t U(uint64_t a, uint64_t b, Machine&) { return a * b; }
  static double F(double a, double b) { return a * b; }
};

int64_t Negate(int64_t a) { return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a)); }

struct DivOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine& m) {
    if (b == 0) ThrowDivisionByZero("div", a, m);
    if (b == -1) return Negate(a);  // INT64_MIN / -1 would trap
    return a / b;
  }
  static uint64_t U(uint64_t a, uint64_t b, Machine& m) {
    if (b == 0) ThrowDivisionByZero("div", static_cast<int64_t>(a), m);
    return a / b;
  }
  static double F(double a, double b) { return a / b; }
};

struct FloorDivOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine& m) {
    if (b == 0) ThrowDivisionByZero("floordiv", a, m);
    if (b == -1) return Negate(a);
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  }
  static uint64_t U(uint64_t a, uint64_t b, Machine& m) {
    if (b == 0) ThrowDivisionByZero("floordiv", static_cast<int64_t>(a), m);
    return a / b;
  }
  static double F(double a, double b) { return std::floor(a / b); }
};

struct FloorModOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine& m) {
    if (b == 0) ThrowDivisionByZero("floormod", a, m);
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
  static uint64_t U(uint64_t a, uint64_t b, Machine& m) {
    if (b == 0) ThrowDivisionByZero("floormod", static_cast<int64_t>(a), m);
    return a % b;
  }
  static double F(double a, double b) { return a - std::floor(a / b) * b; }
};

struct MinOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine&) { return a < b ? a : b; }
  static uint64_t U(uint64_t a, uint64_t b, Machine&) { return a < b ? a : b; }
  static double F(double a, double b) { return a < b ? a : b; }
};

struct MaxOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine&) { return a > b ? a : b; }
  static uint64_t U(uint64_t a, uint64_t b, Machine&) { return a > b ? a : b; }
  static double F(double a, double b) { return a > b ? a : b; }
};

// Logic operands are bools (uint1), so only U is ever used; S and F exist for the template.
struct AndOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine&) { return a & b; }
  static uint64_t U(uint64_t a, uint64_t b, Machine&) { return a & b; }
  static double F(double a, double b) { return (a != 0 && b != 0) ? 1 : 0; }
};

struct OrOp {
  static constexpr bool kCompare = false;
  static int64_t S(int64_t a, int64_t b, Machine&) { return a | b; }
  static uint64_t U(uint64_t a, uint64_t b, Machine&) { return a | b; }
  static double F(double a, double b) { return (a != 0 || b != 0) ? 1 : 0; }
};

#define TT_COMPARE_OP(Name, op)                                        \
  struct Name {                                                        \
    static constexpr bool kCompare = true;                             \
    static bool S(int64_t a, int64_t b, Machine&) { return a op b; }   \
    static bool U(uint64_t a, uint64_t b, Machine&) { return a op b; } \
    static bool F(double a, double b) { return a op b; }               \
  };
TT_COMPARE_OP(EqOp, ==)
TT_COMPARE_OP(NeOp, !=)
TT_COMPARE_OP(LtOp, <)
TT_COMPARE_OP(LeOp, <=)
TT_COMPARE_OP(GtOp, >)
TT_COMPARE_OP(GeOp, >=)
#undef TT_COMPARE_OP

// `num` and `bits` describe the operands (for comparisons they differ from the bool result).
template <typename Op>
class BinaryCode final : public ExprCode {
 public:
  BinaryCode(DataType dtype, DataType operand, const ExprCode* a, const ExprCode* b, Scalar* result)
      : ExprCode(dtype, result), num_(NumClassOf(operand)), bits_(operand.bits()), a_(a), b_(b) {}

  void Eval(Machine& m) const override {
    a_->Eval(m);
    b_->Eval(m);
    const Scalar* x = a_->result;
    const Scalar* y = b_->result;
    Scalar* r = result;
    int n = lanes;
    switch (num_) {
      case NumClass::kSInt:
        for (int l = 0; l < n; ++l) {
          if constexpr (Op::kCompare) {
            r[l].i = Op::S(x[l].i, y[l].i, m);
          } else {
            r[l].i = WrapInt(static_cast<uint64_t>(Op::S(x[l].i, y[l].i, m)), bits_, true);
          }
        }
        break;
      case NumClass::kUInt:
        for (int l = 0; l < n; ++l) {
          auto u = Op::U(static_cast<uint64_t>(x[l].i), static_cast<uint64_t>(y[l].i), m);
          if constexpr (Op::kCompare) {
            r[l].i = u;
          } else {
            r[l].i = WrapInt(u, bits_, false);
          }
        }
        break;
      case NumClass::kFloat32:
        for (int l = 0; l < n; ++l) {
          if constexpr (Op::kCompare) {
            r[l].i = Op::F(x[l].f, y[l].f);
          } else {
            r[l].f = RoundToFloat(Op::F(x[l].f, y[l].f));
          }
        }
        break;
      case NumClass::kFloat64:
        for (int l = 0; l < n; ++l) {
          if constexpr (Op::kCompare) {
            r[l].i = Op::F(x[l].f, y[l].f);
          } else {
            r[l].f = Op::F(x[l].f, y[l].f);
          }
        }
        break;
    }
  }

 private:
  NumClass num_;
  int bits_;
  const ExprCode* a_;
  const ExprCode* b_;
};

template <typename Op>
ExprCodePtr Make(DataType dtype, const ExprCode* a, const ExprCode* b, ScalarArena* arena) {
  return std::make_unique<BinaryCode<Op>>(dtype, a->dtype, a, b, arena->Allocate(dtype.lanes()));
}

}  // namespace

ExprCodePtr MakeBinaryCode(NodeKind kind, DataType dtype, const ExprCode* a, const ExprCode* b,
                           ScalarArena* arena) {
  switch (kind) {
    case NodeKind::kAdd:
      return Make<AddOp>(dtype, a, b, arena);
    case NodeKind::kSub:
      return Make<SubOp>(dtype, a, b, arena);
    case NodeKind::kMul:
      return Make<MulOp>(dtype, a, b, arena);
    case NodeKind::kDiv:
      return Make<DivOp>(dtype, a, b, arena);
    case NodeKind::kFloorDiv:
      return Make<FloorDivOp>(dtype, a, b, arena);
    case NodeKind::kFloorMod:
      return Make<FloorModOp>(dtype, a, b, arena);
    case NodeKind::kMin:
      return Make<MinOp>(dtype, a, b, arena);
    case NodeKind::kMax:
      return Make<MaxOp>(dtype, a, b, arena);
    case NodeKind::kEQ:
      return Make<EqOp>(dtype, a, b, arena);
    case NodeKind::kNE:
      return Make<NeOp>(dtype, a, b, arena);
    case NodeKind::kLT:
      return Make<LtOp>(dtype, a, b, arena);
    case NodeKind::kLE:
      return Make<LeOp>(dtype, a, b, arena);
    case NodeKind::kGT:
      return Make<GtOp>(dtype, a, b, arena);
    case NodeKind::kGE:
      return Make<GeOp>(dtype, a, b, arena);
    case NodeKind::kAnd:
      return Make<AndOp>(dtype, a, b, arena);
    case NodeKind::kOr:
      return Make<OrOp>(dtype, a, b, arena);
    default:
      TT_UNREACHABLE("kind {} is not a binary operator", static_cast<int>(kind));
  }
}

}  // namespace tirtune::interp
