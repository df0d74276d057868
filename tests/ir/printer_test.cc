// The printer against docs/TEXT_FORMAT.md: each test builds IR with the factories and states the
// exact text it must print.
#include "tirtune/ir/printer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tirtune/ir/op.h"

namespace tirtune {
namespace {

const DataType kF32 = DataType::Float(32);

Stmt Store(const Buffer& buffer, Expr value, std::vector<Expr> indices) {
  return MakeBufferStore(buffer, std::move(value), std::move(indices));
}

Expr Load(const Buffer& buffer, std::vector<Expr> indices) {
  return MakeBufferLoad(buffer, std::move(indices));
}

Stmt Loop(const Var& var, Expr extent, Stmt body) {
  return MakeFor(var, 0, std::move(extent), ForKind::kSerial, std::move(body));
}

IterVar Spatial(const Var& var, Expr extent) { return {var, {0, std::move(extent)}}; }
IterVar Reduce(const Var& var, Expr extent) {
  return {var, {0, std::move(extent)}, IterKind::kReduce};
}

// The root block every function in block form has.
Stmt Root(Stmt body, std::vector<Buffer> alloc_buffers = {}) {
  Block root = MakeBlock("root", {}, {}, {}, std::move(body), Stmt(), std::move(alloc_buffers));
  return MakeBlockRealize({}, Bool(true), root);
}

PrimFunc Gemm() {
  Buffer a("A", kF32, {64, 64}), b("B", kF32, {64, 64}), c("C", kF32, {64, 64});
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
  Block block =
      MakeBlock("C", {Spatial(vi, 64), Spatial(vj, 64), Reduce(vk, 64)},
                {BufferRegion::Point(a, {vi, vk}), BufferRegion::Point(b, {vk, vj})},
                {BufferRegion::Point(c, {vi, vj})},
                Store(c, Load(c, {vi, vj}) + Load(a, {vi, vk}) * Load(b, {vk, vj}), {vi, vj}),
                /*init=*/Store(c, 0.0f, {vi, vj}));
  Stmt nest = Loop(i, 64, Loop(j, 64, Loop(k, 64, MakeBlockRealize({i, j, k}, Bool(true), block))));
  return PrimFunc("gemm", {a, b, c}, Root(nest));
}

// A function around `body` with one float32 buffer A of shape (16,).
std::string PrintWithA(const Buffer& a, Stmt body) {
  return Print(PrimFunc("f", {a}, std::move(body)));
}

TEST(Printer, PrintsGemmInBlockForm) {
  EXPECT_EQ(Print(Gemm()), R"(@prim_func
def gemm(A: Buffer((64, 64), float32), B: Buffer((64, 64), float32), C: Buffer((64, 64), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(64):
            for j in range(64):
                for k in range(64):
                    with block("C"):
                        vi = axis.spatial(64, i)
                        vj = axis.spatial(64, j)
                        vk = axis.reduce(64, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(Printer, PrintsIntermediateBufferAllocatedInRootBlock) {
  Buffer a("A", kF32, {16}), b("B", kF32, {16}), t("T", kF32, {16});
  Var i("i"), j("j"), vi("vi"), vj("vj");
  Block first = MakeBlock("T", {Spatial(vi, 16)}, {BufferRegion::Point(a, {vi})},
                          {BufferRegion::Point(t, {vi})}, Store(t, Load(a, {vi}) * 2.0f, {vi}));
  Block second = MakeBlock("B", {Spatial(vj, 16)}, {BufferRegion::Point(t, {vj})},
                           {BufferRegion::Point(b, {vj})}, Store(b, Load(t, {vj}) + 1.0f, {vj}));
  Stmt body = MakeSeq({Loop(i, 16, MakeBlockRealize({i}, Bool(true), first)),
                       Loop(j, 16, MakeBlockRealize({j}, Bool(true), second))});
  EXPECT_EQ(Print(PrimFunc("two", {a, b}, Root(body, {t}))), R"(@prim_func
def two(A: Buffer((16,), float32), B: Buffer((16,), float32)):
    with block("root"):
        reads()
        writes()
        T = alloc_buffer((16,), float32)
        for i in range(16):
            with block("T"):
                vi = axis.spatial(16, i)
                reads(A[vi])
                writes(T[vi])
                T[vi] = A[vi] * 2.0
        for j in range(16):
            with block("B"):
                vj = axis.spatial(16, j)
                reads(T[vj])
                writes(B[vj])
                B[vj] = T[vj] + 1.0
)");
}

TEST(Printer, PrintsLoopKindAndSortedAnnotations) {
  Buffer a("A", kF32, {16});
  Var i("i");
  Annotations annotations = {{"unroll_explicit", Expr(1)}, {"pragma", StringImm("auto")}};
  Stmt loop = MakeFor(i, 0, 16, ForKind::kParallel, Store(a, 0.0f, {i}), "", annotations);
  EXPECT_EQ(ToString(loop),
            "for i in parallel(16, annotations={\"pragma\": \"auto\", \"unroll_explicit\": 1}):\n"
            "    A[i] = 0.0");
}

TEST(Printer, PrintsVectorizedAndUnrolledLoops) {
  Buffer a("A", kF32, {16});
  Var i("i"), j("j");
  Stmt inner = MakeFor(j, 0, 4, ForKind::kVectorized, Store(a, 0.0f, {i * 4 + j}));
  EXPECT_EQ(ToString(MakeFor(i, 0, 4, ForKind::kUnrolled, inner)), R"(for i in unroll(4):
    for j in vectorized(4):
        A[i * 4 + j] = 0.0)");
}

TEST(Printer, PrintsThreadBindingWithThreadTag) {
  Buffer a("A", kF32, {256});
  Var tx("tx");
  Stmt loop = MakeFor(tx, 0, 256, ForKind::kThreadBinding, Store(a, 0.0f, {tx}), "threadIdx.x");
  EXPECT_EQ(ToString(loop), R"(for tx in thread_binding(256, thread="threadIdx.x"):
    A[tx] = 0.0)");
}

TEST(Printer, PrintsLoopMinOnlyWhenNotZero) {
  Buffer a("A", kF32, {16});
  Var i("i");
  Stmt loop = MakeFor(i, 2, 14, ForKind::kSerial, Store(a, 0.0f, {i}));
  EXPECT_EQ(ToString(loop), "for i in range(14, min=2):\n    A[i] = 0.0");
}

TEST(Printer, PrintsLoopOverInt32WithTypedExtent) {
  Buffer a("A", kF32, {16});
  Var i("i", DataType::Int(32));
  Stmt loop = MakeFor(i, IntImm(DataType::Int(32), 0), IntImm(DataType::Int(32), 16),
                      ForKind::kSerial, Store(a, 0.0f, {i}));
  EXPECT_EQ(ToString(loop), "for i in range(int32(16)):\n    A[i] = 0.0");
}

TEST(Printer, PrintsFloat16BufferAndLiterals) {
  DataType f16 = DataType::Float(16);
  Buffer a("A", f16, {8});
  Var i("i");
  Stmt loop = Loop(i, 8, Store(a, Load(a, {i}) * FloatImm(f16, 0.5), {i}));
  EXPECT_EQ(PrintWithA(a, loop), R"(@prim_func
def f(A: Buffer((8,), float16)):
    for i in range(8):
        A[i] = A[i] * float16(0.5)
)");
}

TEST(Printer, PrintsBufferStridesScopeAndAlign) {
  Buffer a = Buffer("A", kF32, {4, 8}, StorageScope::kShared).WithStrides({16, 1});
  Var i("i");
  std::string text = PrintWithA(a, Loop(i, 4, Store(a, 0.0f, {i, 0})));
  EXPECT_EQ(text.substr(0, text.find('\n', 12)),
            "@prim_func\n"
            "def f(A: Buffer((4, 8), float32, strides=(16, 1), scope=\"shared\")):");
}

TEST(Printer, PrintsIfWithElse) {
  Buffer a("A", kF32, {16});
  Var i("i");
  Stmt branch = MakeIfThenElse(i < 8, Store(a, 1.0f, {i}), Store(a, 0.0f, {i}));
  EXPECT_EQ(ToString(Loop(i, 16, branch)), R"(for i in range(16):
    if i < 8:
        A[i] = 1.0
    else:
        A[i] = 0.0)");
}

TEST(Printer, PrintsIfWithoutElse) {
  Buffer a("A", kF32, {16});
  Var i("i");
  EXPECT_EQ(ToString(MakeIfThenElse(i >= 8 && i < 12, Store(a, 1.0f, {i}))),
            "if i >= 8 and i < 12:\n    A[i] = 1.0");
}

TEST(Printer, PrintsLetStatementAndLetExpression) {
  Buffer a("A", kF32, {16});
  Var i("i"), x("x"), y("y");
  Stmt let = MakeLetStmt(x, i * 2, Store(a, Cast(kF32, MakeLet(y, x + 1, y * y)), {x}));
  EXPECT_EQ(ToString(let), R"(with let(x, i * 2):
    A[x] = float32(let(y, x + 1, y * y)))");
}

TEST(Printer, PrintsAllocateWithScope) {
  Buffer a("A", kF32, {16});
  Buffer scratch("scratch", kF32, {4}, StorageScope::kLocal);
  Var i("i");
  Stmt body = MakeAllocate(scratch,
                           MakeSeq({Store(scratch, 0.0f, {0}), Store(a, Load(scratch, {0}), {i})}));
  EXPECT_EQ(ToString(body), R"(with allocate(scratch, (4,), float32, scope="local"):
    scratch[0] = 0.0
    A[i] = scratch[0])");
}

TEST(Printer, PrintsRampAndBroadcast) {
  Buffer a("A", kF32, {16});
  Var i("i");
  Stmt store = Store(a, MakeBroadcast(1.5f, 4), {MakeRamp(i * 4, 1, 4)});
  EXPECT_EQ(ToString(store), "A[ramp(i * 4, 1, 4)] = broadcast(1.5, 4)");
}

TEST(Printer, PrintsEvaluate) { EXPECT_EQ(ToString(MakeEvaluate(0)), "evaluate(0)"); }

TEST(Printer, PrintsFuncAttrsBeforeBody) {
  Buffer a("A", kF32, {4});
  PrimFunc func("f", {a}, MakeEvaluate(0), {{"global_symbol", StringImm("f")}, {"tag", Expr(3)}});
  EXPECT_EQ(Print(func), R"(@prim_func
def f(A: Buffer((4,), float32)):
    func_attr({"global_symbol": "f", "tag": 3})
    evaluate(0)
)");
}

TEST(Printer, PrintsBlockIteratorMinAndPredicate) {
  Buffer a("A", kF32, {16});
  Var i("i"), vi("vi");
  Block block =
      MakeBlock("A", {{vi, {2, 14}}}, {}, {BufferRegion::Point(a, {vi})}, Store(a, 0.0f, {vi}));
  EXPECT_EQ(ToString(Loop(i, 16, MakeBlockRealize({i}, i >= 2, block))), R"(for i in range(16):
    with block("A"):
        vi = axis.spatial(14, i, min=2)
        where(i >= 2)
        reads()
        writes(A[vi])
        A[vi] = 0.0)");
}

TEST(Printer, PrintsBlockAnnotations) {
  Buffer a("A", kF32, {1});
  Block block = MakeBlock("A", {}, {}, {BufferRegion::Full(a)}, Store(a, 0.0f, {0}), Stmt(), {},
                          {{"meta_schedule.tiling", StringImm("SSRSRS")}});
  EXPECT_EQ(ToString(MakeBlockRealize({}, Bool(true), block)), R"(with block("A"):
    reads()
    writes(A[0])
    block_attr({"meta_schedule.tiling": "SSRSRS"})
    A[0] = 0.0)");
}

TEST(Printer, PrintsRegionsInTheirThreeRangeForms) {
  Buffer a("A", kF32, {64, 64, 64, 64});
  Var i("i"), n("n");
  BufferRegion region{a, {{i, 1}, {8, 16}, {0, n}, {i * 4, n - 1}}};
  Block block = MakeBlock("R", {}, {region}, {}, MakeEvaluate(0));
  EXPECT_EQ(ToString(MakeBlockRealize({}, Bool(true), block)), R"(with block("R"):
    reads(A[i, 8:24, 0:n, i * 4:i * 4 + (n - 1)])
    writes()
    evaluate(0))");
}

TEST(Printer, KeepsParenthesesOnlyWherePrecedenceNeedsThem) {
  Var a("a"), b("b"), c("c");
  EXPECT_EQ(ToString(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(ToString((a - b) - c), "a - b - c");
  EXPECT_EQ(ToString((a + b) * c), "(a + b) * c");
  EXPECT_EQ(ToString(a + b * c), "a + b * c");
  EXPECT_EQ(ToString(FloorDiv(a, b * c)), "a // (b * c)");
  EXPECT_EQ(ToString(FloorMod(a * b, c)), "a * b % c");
  EXPECT_EQ(ToString(Min(a + b, c)), "min(a + b, c)");
}

TEST(Printer, ParenthesizesLogicAndChainedComparisons) {
  Var a("a"), b("b"), c("c");
  EXPECT_EQ(ToString((a < b) || (b < c && !(a < c))), "a < b or b < c and not a < c");
  EXPECT_EQ(ToString((a < b || b < c) && a < c), "(a < b or b < c) and a < c");
  EXPECT_EQ(ToString(Eq(a < b, b < c)), "(a < b) == (b < c)");
  EXPECT_EQ(ToString(!(a < b && b < c)), "not (a < b and b < c)");
}

TEST(Printer, PrintsNegativeLiteralsWithoutParentheses) {
  Var a("a");
  Var f("f", kF32);
  EXPECT_EQ(ToString(a - -3), "a - -3");
  EXPECT_EQ(ToString(Expr(-3) * a), "-3 * a");
  EXPECT_EQ(ToString(f * -0.5f), "f * -0.5");
}

TEST(Printer, PrintsIntegerLiteralsByType) {
  EXPECT_EQ(ToString(Expr(5)), "5");
  EXPECT_EQ(ToString(Expr(-3)), "-3");
  EXPECT_EQ(ToString(IntImm(DataType::Int(32), 5)), "int32(5)");
  EXPECT_EQ(ToString(IntImm(DataType::UInt(8), 3)), "uint8(3)");
  EXPECT_EQ(ToString(IntImm(DataType::Int(8), -1)), "int8(-1)");
  EXPECT_EQ(ToString(Bool(true)), "True");
  EXPECT_EQ(ToString(Bool(false)), "False");
}

TEST(Printer, PrintsFloat32WithShortestRoundTripDigits) {
  EXPECT_EQ(ToString(Expr(0.5f)), "0.5");
  EXPECT_EQ(ToString(Expr(1.0f)), "1.0");
  EXPECT_EQ(ToString(Expr(0.1f)), "0.1");
  EXPECT_EQ(ToString(Expr(1e-5f)), "1e-05");
  EXPECT_EQ(ToString(Expr(100000.0f)), "100000.0");
  EXPECT_EQ(ToString(Expr(16777216.0f)), "16777216.0");
  EXPECT_EQ(ToString(Expr(0.3333333432674408f)), "0.33333334");
  EXPECT_EQ(ToString(Expr(std::numeric_limits<float>::max())), "3.4028235e+38");
}

TEST(Printer, PrintsNonFiniteFloats) {
  EXPECT_EQ(ToString(Expr(std::numeric_limits<float>::infinity())), "inf");
  EXPECT_EQ(ToString(Expr(-std::numeric_limits<float>::infinity())), "-inf");
  EXPECT_EQ(ToString(Expr(std::nanf(""))), "nan");
  EXPECT_EQ(ToString(FloatImm(DataType::Float(64), -HUGE_VAL)), "float64(-inf)");
}

TEST(Printer, PrintsOtherFloatTypesAsTypedLiterals) {
  EXPECT_EQ(ToString(FloatImm(DataType::Float(64), 0.1)), "float64(0.1)");
  EXPECT_EQ(ToString(FloatImm(DataType::Float(64), 1.0 / 3.0)), "float64(0.3333333333333333)");
  EXPECT_EQ(ToString(FloatImm(DataType::Float(16), 1.0)), "float16(1.0)");
  EXPECT_EQ(ToString(FloatImm(DataType::BFloat16(), 1.0)), "bfloat16(1.0)");
}

TEST(Printer, PrintsCastOfLiteralWithCastKeyword) {
  Var i("i", DataType::Int(32));
  EXPECT_EQ(ToString(MakeCast(kF32, i)), "float32(i)");
  EXPECT_EQ(ToString(MakeCast(kF32, IntImm(DataType::Int(32), 5))), "cast(float32, int32(5))");
  EXPECT_EQ(ToString(MakeCast(DataType::Int(32), Expr(7))), "cast(int32, 7)");
}

TEST(Printer, PrintsIntrinsicCallsSelectAndStrings) {
  Var x("x", kF32);
  EXPECT_EQ(ToString(Exp(x)), "exp(x)");
  EXPECT_EQ(ToString(Pow(x, 2.0f)), "pow(x, 2.0)");
  EXPECT_EQ(ToString(Select(x > 0.0f, x, 0.0f)), "select(x > 0.0, x, 0.0)");
  EXPECT_EQ(ToString(StringImm("a\"b\\c\nd\te")), R"("a\"b\\c\nd\te")");
}

TEST(Printer, SuffixesClashingNamesOfDifferentVariables) {
  Buffer a("A", kF32, {16});
  Var i1("i"), i2("i");
  Stmt body = MakeSeq({Loop(i1, 16, Store(a, 0.0f, {i1})), Loop(i2, 16, Store(a, 1.0f, {i2}))});
  EXPECT_EQ(ToString(body), R"(for i in range(16):
    A[i] = 0.0
for i_1 in range(16):
    A[i_1] = 1.0)");
}

TEST(Printer, KeepsTheNameOfAVariableDefinedTwice) {
  Buffer a("A", kF32, {16});
  Var i("i");
  Stmt body = MakeSeq({Loop(i, 16, Store(a, 0.0f, {i})), Loop(i, 16, Store(a, 1.0f, {i}))});
  EXPECT_EQ(ToString(body), R"(for i in range(16):
    A[i] = 0.0
for i in range(16):
    A[i] = 1.0)");
}

TEST(Printer, SuffixesABufferNamedLikeAnEarlierVariable) {
  Buffer a("x", kF32, {16});
  Var x("x");
  EXPECT_EQ(ToString(Loop(x, 16, Store(a, 0.0f, {x}))), "for x in range(16):\n    x_1[x] = 0.0");
}

TEST(Printer, MakesHintsIntoIdentifiersAvoidingKeywords) {
  Buffer shared("A.shared", kF32, {16});
  Var in("in"), dtype_name("float32"), empty("");
  Stmt body = Store(shared, 0.0f, {in + dtype_name + empty});
  EXPECT_EQ(ToString(body), "A_shared[in_1 + float32_1 + v] = 0.0");
}

TEST(Printer, CanonicalModeNumbersVariablesAndBuffersInDefinitionOrder) {
  PrintOptions options;
  options.canonical_names = true;
  EXPECT_EQ(Print(Gemm(), options), R"(@prim_func
def main(b0: Buffer((64, 64), float32), b1: Buffer((64, 64), float32), b2: Buffer((64, 64), float32)):
    with block("root"):
        reads()
        writes()
        for v0 in range(64):
            for v1 in range(64):
                for v2 in range(64):
                    with block("C"):
                        v3 = axis.spatial(64, v0)
                        v4 = axis.spatial(64, v1)
                        v5 = axis.reduce(64, v2)
                        reads(b0[v3, v5], b1[v5, v4])
                        writes(b2[v3, v4])
                        with init():
                            b2[v3, v4] = 0.0
                        b2[v3, v4] = b2[v3, v4] + b0[v3, v5] * b1[v5, v4]
)");
}

TEST(Printer, MarksALoopWithCaretsUnderItsHeader) {
  Buffer a("A", kF32, {4, 4});
  Var i("i"), j("j");
  Stmt inner = Loop(j, 4, Store(a, 0.0f, {i, j}));
  PrintOptions options;
  options.marked = {inner.get()};
  options.mark_message = "not the only child";
  EXPECT_EQ(Print(PrimFunc("f", {a}, Loop(i, 4, inner)), options), R"(@prim_func
def f(A: Buffer((4, 4), float32)):
    for i in range(4):
        for j in range(4):
        ^^^^^^^^^^^^^^^^^^ not the only child
            A[i, j] = 0.0
)");
}

TEST(Printer, MarksABlockAndAStore) {
  Buffer a("A", kF32, {4});
  Stmt store = Store(a, 1.0f, {0});
  Block block = MakeBlock("B", {}, {}, {}, store);
  PrintOptions options;
  options.marked = {block.get(), store.get()};
  options.mark_message = "here";
  EXPECT_EQ(Print(PrimFunc("f", {a}, MakeBlockRealize({}, Bool(true), block)), options),
            R"(@prim_func
def f(A: Buffer((4,), float32)):
    with block("B"):
    ^^^^^^^^^^^^^^^^ here
        reads()
        writes()
        A[0] = 1.0
        ^^^^^^^^^^ here
)");
}

TEST(Printer, IsDeterministic) { EXPECT_EQ(Print(Gemm()), Print(Gemm())); }

}  // namespace
}  // namespace tirtune
