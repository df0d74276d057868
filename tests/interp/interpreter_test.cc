// The interpreter on block-form and lowered programs: blocks, init, predicates, allocated
// buffers, vector accesses, split loops, and random-input runs.
#include "tirtune/interp/interpreter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "block_builder.h"

namespace tirtune {
namespace {

using namespace test_ir;  // NOLINT(google-build-using-namespace): test shorthands

const DataType kF32 = DataType::Float(32);

// C[i, j] = sum_k A[i, k] * B[k, j], in block form with an init statement.
PrimFunc Gemm(int64_t n) {
  Buffer a("A", kF32, {n, n}), b("B", kF32, {n, n}), c("C", kF32, {n, n});
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
  Stmt body = Store(c, Load(c, {vi, vj}) + Load(a, {vi, vk}) * Load(b, {vk, vj}), {vi, vj});
  Stmt init = Store(c, Expr(0.0f), {vi, vj});
  Stmt block = Realize("C", {Spatial(vi, n, i), Spatial(vj, n, j), Reduce(vk, n, k)}, body, init);
  return PrimFunc("gemm", {a, b, c}, Root(Loop(i, n, Loop(j, n, Loop(k, n, block)))));
}

TEST(Interpreter, GemmWithInitMatchesFloatLoop) {
  constexpr int64_t n = 64;
  NDArray a = NDArray::Empty({n, n}, kF32), b = NDArray::Empty({n, n}, kF32);
  NDArray c = NDArray::Empty({n, n}, kF32);
  a.FillRandom(1);
  b.FillRandom(2);
  c.Fill(123.0);  // init must overwrite whatever is there
  PrimFunc f = Gemm(n);
  auto start = std::chrono::steady_clock::now();
  Interpret(f, {a, b, c});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "GEMM " << n << "^3 interpreted in " << seconds * 1e3 << " ms\n";

  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < n; ++k) acc = acc + pa[i * n + k] * pb[k * n + j];
      ASSERT_EQ(c.data<float>()[i * n + j], acc) << "at " << i << ", " << j;
    }
  }
}

TEST(Interpreter, TwoBlocksShareAnIntermediateAllocBuffer) {
  Buffer a("A", kF32, {8}), t("T", kF32, {8}), c("C", kF32, {8});
  Var i("i"), j("j"), vi("vi"), vj("vj");
  Stmt produce =
      Loop(i, 8, Realize("T", {Spatial(vi, 8, i)}, Store(t, Load(a, {vi}) * 2.0f, {vi})));
  Stmt consume =
      Loop(j, 8, Realize("C", {Spatial(vj, 8, j)}, Store(c, Load(t, {vj}) + 1.0f, {vj})));
  PrimFunc f("two_blocks", {a, c}, Root(MakeSeq({produce, consume}), /*alloc_buffers=*/{t}));
  NDArray in = ArrayOf({8}, kF32, {0, 1, 2, 3, 4, 5, 6, 7});
  NDArray out = NDArray::Empty({8}, kF32);
  Interpret(f, {in, out});
  EXPECT_EQ(Values(out), (std::vector<double>{1, 3, 5, 7, 9, 11, 13, 15}));
}

TEST(Interpreter, AllocBufferIsFreshAndZeroedForEachBlockInstance) {
  // acc[0] += A[vi]; C[vi] = acc[0]: equals A only if every instance starts from zero.
  Buffer a("A", kF32, {4}), acc("acc", kF32, {1}), c("C", kF32, {4});
  Var i("i"), vi("vi");
  Stmt body =
      MakeSeq({Store(acc, Load(acc, {0}) + Load(a, {vi}), {0}), Store(c, Load(acc, {0}), {vi})});
  Stmt block = Realize("B", {Spatial(vi, 4, i)}, body, Stmt(), Bool(true), /*alloc=*/{acc});
  PrimFunc f("fresh", {a, c}, Root(Loop(i, 4, block)));
  NDArray out = NDArray::Empty({4}, kF32);
  Interpret(f, {ArrayOf({4}, kF32, {1, 2, 3, 4}), out});
  EXPECT_EQ(Values(out), (std::vector<double>{1, 2, 3, 4}));
}

TEST(Interpreter, ReductionOverNonDivisibleSplitUsesPredicateAndInitOnce) {
  // S[i] = sum_k A[i, k] with k (extent 10) split as ko * 4 + ki and guarded by a predicate.
  Buffer a("A", kF32, {2, 10}), s("S", kF32, {2});
  Var i("i"), ko("ko"), ki("ki"), vi("vi"), vk("vk");
  Expr k = ko * 4 + ki;
  Stmt block = Realize("S", {Spatial(vi, 2, i), Reduce(vk, 10, k)},
                       Store(s, Load(s, {vi}) + Load(a, {vi, vk}), {vi}),
                       /*init=*/Store(s, Expr(0.0f), {vi}), /*predicate=*/k < 10);
  PrimFunc f("row_sum", {a, s}, Root(Loop(i, 2, Loop(ko, 3, Loop(ki, 4, block)))));
  std::vector<double> values;
  for (int x = 0; x < 20; ++x) values.push_back(x);
  NDArray out = ArrayOf({2}, kF32, {-5, -5});
  Interpret(f, {ArrayOf({2, 10}, kF32, values), out});
  EXPECT_EQ(Values(out), (std::vector<double>{45, 145}));
}

TEST(Interpreter, SplitLoopBindingWithPredicateCoversExactlyTheDomain) {
  Buffer a("A", kF32, {10}), b("B", kF32, {10});
  Var i0("i0"), i1("i1"), vi("vi");
  Expr binding = i0 * 4 + i1;
  Stmt block = Realize("B", {Spatial(vi, 10, binding)}, Store(b, Load(a, {vi}) + 1.0f, {vi}),
                       Stmt(), binding < 10);
  PrimFunc f("split", {a, b}, Root(Loop(i0, 3, Loop(i1, 4, block))));
  std::vector<double> in(10), expected(10);
  for (int x = 0; x < 10; ++x) {
    in[x] = x;
    expected[x] = x + 1;
  }
  NDArray out = NDArray::Empty({10}, kF32);
  Interpret(f, {ArrayOf({10}, kF32, in), out});
  EXPECT_EQ(Values(out), expected);
}

TEST(Interpreter, VectorRampLoadAndStore) {
  Buffer a("A", kF32, {16}), b("B", kF32, {16});
  Var i("i");
  Expr lanes = MakeRamp(i * 4, 1, 4);
  Stmt store = Store(b, Load(a, {lanes}) * 2.0f + MakeBroadcast(Expr(1.0f), 4), {lanes});
  PrimFunc f("vec", {a, b}, Loop(i, 4, store));
  std::vector<double> in, expected;
  for (int x = 0; x < 16; ++x) {
    in.push_back(x);
    expected.push_back(2 * x + 1);
  }
  NDArray out = NDArray::Empty({16}, kF32);
  Interpret(f, {ArrayOf({16}, kF32, in), out});
  EXPECT_EQ(Values(out), expected);
}

TEST(Interpreter, StridedRampGathersColumns) {
  // B[j, 0:4] = A[0:4, j]: a ramp with stride 4 over a flattened 4x4 matrix.
  Buffer a("A", kF32, {16}), b("B", kF32, {16});
  Var j("j");
  Stmt store = Store(b, Load(a, {MakeRamp(j, 4, 4)}), {MakeRamp(j * 4, 1, 4)});
  PrimFunc f("transpose", {a, b}, Loop(j, 4, store));
  std::vector<double> in, expected(16);
  for (int x = 0; x < 16; ++x) in.push_back(x);
  for (int r = 0; r < 4; ++r) {
    for (int col = 0; col < 4; ++col) expected[col * 4 + r] = r * 4 + col;
  }
  NDArray out = NDArray::Empty({16}, kF32);
  Interpret(f, {ArrayOf({16}, kF32, in), out});
  EXPECT_EQ(Values(out), expected);
}

TEST(Interpreter, LoweredAllocateWithStrides) {
  // T is a column-major 2x3 scratch buffer (strides (1, 2)); B = A through T.
  Buffer a("A", kF32, {2, 3}), b("B", kF32, {2, 3});
  Buffer t = Buffer("T", kF32, {2, 3}, StorageScope::kLocal).WithStrides({Expr(1), Expr(2)});
  Var r("r"), c("c");
  Stmt fill = Loop(r, 2, Loop(c, 3, Store(t, Load(a, {r, c}) * 3.0f, {r, c})));
  Stmt copy = Loop(r, 2, Loop(c, 3, Store(b, Load(t, {r, c}), {r, c})));
  PrimFunc f("strided", {a, b}, MakeAllocate(t, MakeSeq({fill, copy})));
  NDArray out = NDArray::Empty({2, 3}, kF32);
  Interpret(f, {ArrayOf({2, 3}, kF32, {1, 2, 3, 4, 5, 6}), out});
  EXPECT_EQ(Values(out), (std::vector<double>{3, 6, 9, 12, 15, 18}));
}

TEST(Interpreter, SymbolicExtentIsBoundFromTheArgument) {
  Var n("n");
  Buffer a("A", kF32, {n}), b("B", kF32, {n});
  Var i("i");
  PrimFunc f("add_one", {a, b},
             MakeFor(i, Expr(0), n, ForKind::kParallel, Store(b, Load(a, {i}) + 1.0f, {i})));
  for (int64_t size : {3, 5}) {
    NDArray in = NDArray::Empty({size}, kF32), out = NDArray::Empty({size}, kF32);
    in.Fill(2.0);
    Interpret(f, {in, out});
    EXPECT_EQ(Values(out), std::vector<double>(size, 3.0));
  }
}

TEST(Interpreter, ExtentMayUseAVariableALaterParameterDefines) {
  // A has n * 2 elements, B has n: B[i] = A[2i] + A[2i + 1].
  Var n("n"), i("i");
  Buffer a("A", kF32, {n * 2}), b("B", kF32, {n});
  Stmt body = Store(b, Load(a, {i * 2}) + Load(a, {i * 2 + 1}), {i});
  PrimFunc f("pairs", {a, b}, MakeFor(i, Expr(0), n, ForKind::kSerial, body));
  NDArray out = NDArray::Empty({3}, kF32);
  Interpret(f, {ArrayOf({6}, kF32, {1, 2, 3, 4, 5, 6}), out});
  EXPECT_EQ(Values(out), (std::vector<double>{3, 7, 11}));
}

TEST(Interpreter, RandomInputsAreDeterministicAndProduceTheOutput) {
  PrimFunc f = Gemm(4);
  std::vector<NDArray> first = InterpretWithRandomInputs(f, /*seed=*/7);
  std::vector<NDArray> second = InterpretWithRandomInputs(f, /*seed=*/7);
  ASSERT_EQ(first.size(), 3u);
  for (size_t p = 0; p < 3; ++p) EXPECT_EQ(Values(first[p]), Values(second[p]));
  EXPECT_NE(Values(first[0]), Values(first[1]));  // each parameter has its own seed
  for (double v : Values(first[0])) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
  NDArray expected = first[2].Copy();
  Interpret(f, {first[0], first[1], expected});
  EXPECT_EQ(Values(expected), Values(first[2]));
}

}  // namespace
}  // namespace tirtune
