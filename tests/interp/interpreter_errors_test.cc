// The interpreter's InterpErrors: each names what went wrong and where (buffer, indices, shape,
// parameter, block).
#include <gtest/gtest.h>

#include "block_builder.h"
#include "tirtune/interp/interpreter.h"

namespace tirtune {
namespace {

using namespace test_ir;  // NOLINT(google-build-using-namespace): test shorthands

const DataType kF32 = DataType::Float(32);

// Runs `f` on `args` and returns the InterpError message ("" when nothing was thrown).
std::string ErrorOf(const PrimFunc& f, const std::vector<NDArray>& args) {
  try {
    Interpret(f, args);
  } catch (const InterpError& e) {
    return e.what();
  }
  return "";
}

// B[vi] = A[vi + shift] for vi in [0, 4), in a block named "B".
PrimFunc Shifted(int64_t shift) {
  Buffer a("A", kF32, {4}), b("B", kF32, {4});
  Var i("i"), vi("vi");
  Stmt block = Realize("B", {Spatial(vi, 4, i)}, Store(b, Load(a, {vi + shift}), {vi}));
  return PrimFunc("shifted", {a, b}, Root(Loop(i, 4, block)));
}

TEST(InterpreterErrors, OutOfBoundsLoadNamesBufferIndicesShapeAndBlock) {
  std::string msg = ErrorOf(Shifted(1), {NDArray::Empty({4}, kF32), NDArray::Empty({4}, kF32)});
  EXPECT_EQ(msg, "out-of-bounds load A[4]: A has shape (4) (in block \"B\")");
}

TEST(InterpreterErrors, OutOfBoundsVectorStoreNamesTheLane) {
  Buffer b("B", kF32, {6});
  PrimFunc f("vec", {b}, Store(b, MakeBroadcast(Expr(1.0f), 4), {MakeRamp(Expr(4), Expr(1), 4)}));
  EXPECT_EQ(ErrorOf(f, {NDArray::Empty({6}, kF32)}),
            "out-of-bounds store B[6] (lane 2 of 4): B has shape (6)");
}

TEST(InterpreterErrors, WrongArgumentCount) {
  EXPECT_EQ(ErrorOf(Shifted(0), {NDArray::Empty({4}, kF32)}),
            "function shifted takes 2 arguments, got 1");
}

TEST(InterpreterErrors, ArgumentDtypeMismatchNamesTheParameter) {
  std::string msg =
      ErrorOf(Shifted(0), {NDArray::Empty({4}, kF32), NDArray::Empty({4}, DataType::Float(16))});
  EXPECT_EQ(msg, "argument 1 for parameter B has dtype float16, expected float32");
}

TEST(InterpreterErrors, ArgumentShapeMismatchNamesTheParameter) {
  std::string msg = ErrorOf(Shifted(0), {NDArray::Empty({5}, kF32), NDArray::Empty({4}, kF32)});
  EXPECT_EQ(msg, "argument 0 for parameter A has shape (5), expected (4)");
  msg = ErrorOf(Shifted(0), {NDArray::Empty({4}, kF32), NDArray::Empty({2, 2}, kF32)});
  EXPECT_EQ(msg, "argument 1 for parameter B has shape (2, 2), expected rank 1");
}

TEST(InterpreterErrors, SymbolicExtentMustAgreeAcrossParameters) {
  Var n("n");
  Buffer a("A", kF32, {n}), b("B", kF32, {n});
  Var i("i");
  PrimFunc f("copy", {a, b}, MakeFor(i, Expr(0), n, ForKind::kSerial, Store(b, Load(a, {i}), {i})));
  EXPECT_EQ(ErrorOf(f, {NDArray::Empty({3}, kF32), NDArray::Empty({4}, kF32)}),
            "argument 1 for parameter B has shape (4), expected (3)");
}

TEST(InterpreterErrors, IntegerDivisionByZero) {
  DataType i32 = DataType::Int(32);
  Buffer a("A", i32, {2}), b("B", i32, {2});
  Var i("i");
  PrimFunc f("div", {a, b}, Loop(i, 2, Store(b, FloorDiv(Load(a, {i}), Load(b, {i})), {i})));
  NDArray divisor = NDArray::Empty({2}, i32);
  divisor.SetDouble(0, 2);
  std::string msg = ErrorOf(f, {NDArray::Empty({2}, i32), divisor});
  EXPECT_EQ(msg, "integer division by zero: floordiv(0, 0)");
}

TEST(InterpreterErrors, IteratorOutsideItsDomainNamesTheBlock) {
  // A split of 10 into 3 x 4 without the predicate reaches vi = 10.
  Buffer b("B", kF32, {10});
  Var i0("i0"), i1("i1"), vi("vi");
  Stmt block = Realize("B", {Spatial(vi, 10, i0 * 4 + i1)}, Store(b, Expr(1.0f), {vi}));
  PrimFunc f("split", {b}, Root(Loop(i0, 3, Loop(i1, 4, block))));
  EXPECT_EQ(ErrorOf(f, {NDArray::Empty({10}, kF32)}),
            "block \"B\": iterator vi is bound to 10, outside its domain [0, 10)");
}

TEST(InterpreterErrors, VariableOutsideItsScope) {
  Buffer b("B", kF32, {4});
  Var i("i"), j("j");
  PrimFunc f("stray", {b}, Loop(i, 4, Store(b, Expr(0.0f), {j})));
  EXPECT_EQ(ErrorOf(f, {NDArray::Empty({4}, kF32)}),
            "variable j is used outside the scope that defines it");
}

TEST(InterpreterErrors, BufferOutsideItsAllocation) {
  Buffer b("B", kF32, {4}), t("T", kF32, {4});
  Var i("i");
  PrimFunc f("stray", {b}, Loop(i, 4, Store(b, Load(t, {i}), {i})));
  EXPECT_EQ(ErrorOf(f, {NDArray::Empty({4}, kF32)}),
            "buffer T is used but is neither a parameter nor allocated in an enclosing scope");
}

}  // namespace
}  // namespace tirtune
