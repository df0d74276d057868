// Structural equality (alpha-equivalence over definition points), its diff messages and the
// stable structural hash.
#include "tirtune/ir/structural_equal.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tirtune/ir/op.h"

namespace tirtune {
namespace {

const DataType kF32 = DataType::Float(32);

// What can vary between two otherwise identical GEMMs.
struct GemmSpec {
  std::string func_name = "gemm";
  std::string block_name = "C";
  std::string loop_prefix;
  float init_value = 0.0f;
  bool swap_product = false;
  ForKind outer_kind = ForKind::kSerial;
  Annotations outer_annotations;
  DataType dtype = DataType::Float(32);
};

PrimFunc Gemm(const GemmSpec& spec) {
  Buffer a("A", spec.dtype, {64, 64}), b("B", spec.dtype, {64, 64}), c("C", spec.dtype, {64, 64});
  Var i(spec.loop_prefix + "i"), j(spec.loop_prefix + "j"), k(spec.loop_prefix + "k");
  Var vi("vi"), vj("vj"), vk("vk");
  Expr lhs = MakeBufferLoad(a, {vi, vk}), rhs = MakeBufferLoad(b, {vk, vj});
  Expr product = spec.swap_product ? rhs * lhs : lhs * rhs;
  Block block =
      MakeBlock(spec.block_name, {{vi, {0, 64}}, {vj, {0, 64}}, {vk, {0, 64}, IterKind::kReduce}},
                {BufferRegion::Point(a, {vi, vk}), BufferRegion::Point(b, {vk, vj})},
                {BufferRegion::Point(c, {vi, vj})},
                MakeBufferStore(c, MakeBufferLoad(c, {vi, vj}) + product, {vi, vj}),
                /*init=*/MakeBufferStore(c, MakeConst(spec.dtype, spec.init_value), {vi, vj}));
  Stmt nest = MakeFor(
      i, 0, 64, spec.outer_kind,
      MakeFor(j, 0, 64, ForKind::kSerial,
              MakeFor(k, 0, 64, ForKind::kSerial, MakeBlockRealize({i, j, k}, Bool(true), block))),
      "", spec.outer_annotations);
  Block root = MakeBlock("root", {}, {}, {}, nest);
  return PrimFunc(spec.func_name, {a, b, c}, MakeBlockRealize({}, Bool(true), root));
}

PrimFunc Gemm() { return Gemm(GemmSpec{}); }

// Specs that differ from the default in one field each.
GemmSpec WithLoopPrefix(std::string prefix) {
  GemmSpec spec;
  spec.loop_prefix = std::move(prefix);
  return spec;
}
GemmSpec WithFuncName(std::string name) {
  GemmSpec spec;
  spec.func_name = std::move(name);
  return spec;
}
GemmSpec WithBlockName(std::string name) {
  GemmSpec spec;
  spec.block_name = std::move(name);
  return spec;
}
GemmSpec WithInitValue(float value) {
  GemmSpec spec;
  spec.init_value = value;
  return spec;
}
GemmSpec WithSwappedProduct() {
  GemmSpec spec;
  spec.swap_product = true;
  return spec;
}
GemmSpec WithOuterKind(ForKind kind) {
  GemmSpec spec;
  spec.outer_kind = kind;
  return spec;
}
GemmSpec WithOuterAnnotations(Annotations annotations) {
  GemmSpec spec;
  spec.outer_annotations = std::move(annotations);
  return spec;
}
GemmSpec WithDtype(DataType dtype) {
  GemmSpec spec;
  spec.dtype = dtype;
  return spec;
}

TEST(StructuralEqual, FunctionsBuiltTwiceAreEqual) {
  EXPECT_TRUE(StructuralEqual(Gemm(), Gemm()));
  EXPECT_EQ(StructuralDiff(Gemm(), Gemm()), std::nullopt);
}

TEST(StructuralEqual, RenamedVariablesAreEqual) {
  EXPECT_TRUE(StructuralEqual(Gemm(), Gemm(WithLoopPrefix("ax_"))));
}

TEST(StructuralEqual, RenamedBuffersAreEqual) {
  PrimFunc func = Gemm();
  std::vector<Buffer> renamed;
  for (const Buffer& b : func->params) renamed.push_back(b.WithName(b->name + "_renamed"));
  // Different buffer objects, used nowhere in the body: the parameters alone must still match.
  PrimFunc lhs("f", func->params, MakeEvaluate(0));
  PrimFunc rhs("f", renamed, MakeEvaluate(0));
  EXPECT_TRUE(StructuralEqual(lhs, rhs));
}

TEST(StructuralEqual, FunctionNameIsIgnored) {
  EXPECT_TRUE(StructuralEqual(Gemm(), Gemm(WithFuncName("matmul"))));
}

TEST(StructuralEqual, DifferentBlockNameIsNotEqual) {
  EXPECT_FALSE(StructuralEqual(Gemm(), Gemm(WithBlockName("D"))));
}

TEST(StructuralEqual, DifferentConstantIsNotEqual) {
  EXPECT_FALSE(StructuralEqual(Gemm(), Gemm(WithInitValue(1.0f))));
}

TEST(StructuralEqual, SwappedOperandsAreNotEqual) {
  EXPECT_FALSE(StructuralEqual(Gemm(), Gemm(WithSwappedProduct())));
}

TEST(StructuralEqual, DifferentLoopKindIsNotEqual) {
  EXPECT_FALSE(StructuralEqual(Gemm(), Gemm(WithOuterKind(ForKind::kParallel))));
}

TEST(StructuralEqual, DifferentAnnotationsAreNotEqual) {
  EXPECT_FALSE(StructuralEqual(Gemm(), Gemm(WithOuterAnnotations({{"pragma", Expr(1)}}))));
  EXPECT_FALSE(StructuralEqual(Gemm(WithOuterAnnotations({{"pragma", Expr(1)}})),
                               Gemm(WithOuterAnnotations({{"pragma", Expr(2)}}))));
}

TEST(StructuralEqual, DifferentBufferTypeIsNotEqual) {
  EXPECT_FALSE(StructuralEqual(Gemm(), Gemm(WithDtype(DataType::Float(16)))));
}

TEST(StructuralEqual, DifferentBufferScopeIsNotEqual) {
  Buffer a("A", kF32, {4});
  PrimFunc global("f", {a}, MakeEvaluate(0));
  PrimFunc shared("f", {a.WithScope(StorageScope::kShared)}, MakeEvaluate(0));
  EXPECT_FALSE(StructuralEqual(global, shared));
}

TEST(StructuralEqual, VariablesMatchByDefinitionNotByName) {
  // for i: for j: A[i, j] = 0   versus   for i: for j: A[j, i] = 0
  Buffer a("A", kF32, {4, 4});
  Var i("i"), j("j");
  auto nest = [&](Expr row, Expr col) {
    Stmt store = MakeBufferStore(a, 0.0f, {std::move(row), std::move(col)});
    return MakeFor(i, 0, 4, ForKind::kSerial, MakeFor(j, 0, 4, ForKind::kSerial, store));
  };
  EXPECT_FALSE(StructuralEqual(nest(i, j), nest(j, i)));
  EXPECT_TRUE(StructuralEqual(nest(i, j), nest(i, j)));
}

TEST(StructuralEqual, FreeVariablesMustBeTheSameUnlessMapped) {
  Var x("x"), y("y");
  EXPECT_TRUE(StructuralEqual(x + 1, x + 1));
  EXPECT_FALSE(StructuralEqual(x + 1, y + 1));
  EXPECT_TRUE(StructuralEqual(x + 1, y + 1, /*map_free_vars=*/true));
}

TEST(StructuralEqual, MappedFreeVariablesStayConsistent) {
  Var x("x"), y("y"), z("z");
  EXPECT_FALSE(StructuralEqual(x + y, z + z, /*map_free_vars=*/true));
  EXPECT_FALSE(StructuralEqual(x + x, y + z, /*map_free_vars=*/true));
  EXPECT_TRUE(StructuralEqual(x * y + x, y * z + y, /*map_free_vars=*/true));
  EXPECT_FALSE(StructuralEqual(x * x, x * y, /*map_free_vars=*/true));
}

TEST(StructuralEqual, DifferentTypesAreNotEqual) {
  Var x("x"), y("y", DataType::Int(32));
  EXPECT_FALSE(StructuralEqual(x, y, /*map_free_vars=*/true));
  EXPECT_FALSE(StructuralEqual(Expr(1), IntImm(DataType::Int(32), 1)));
}

TEST(StructuralEqual, NanEqualsNanButZeroSignsDiffer) {
  EXPECT_TRUE(StructuralEqual(Expr(std::nanf("")), Expr(std::nanf(""))));
  EXPECT_FALSE(StructuralEqual(Expr(0.0f), Expr(-0.0f)));
}

TEST(StructuralEqual, LetVariablesAreDefinitions) {
  Var x("x"), y("y"), n("n");
  EXPECT_TRUE(StructuralEqual(MakeLet(x, n, x + 1), MakeLet(y, n, y + 1)));
  EXPECT_FALSE(StructuralEqual(MakeLet(x, n, x + 1), MakeLet(y, n, n + 1)));
}

TEST(StructuralEqual, AllocatedBuffersAreDefinitions) {
  Buffer t1("T", kF32, {4}), t2("scratch", kF32, {4});
  auto alloc = [](const Buffer& t) { return MakeAllocate(t, MakeBufferStore(t, 0.0f, {0})); };
  EXPECT_TRUE(StructuralEqual(alloc(t1), alloc(t2)));
  EXPECT_FALSE(StructuralEqual(alloc(t1), alloc(t2.WithScope(StorageScope::kLocal))));
}

TEST(StructuralDiff, NamesThePathAndBothSides) {
  std::optional<std::string> diff = StructuralDiff(Gemm(), Gemm(WithSwappedProduct()));
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(*diff,
            "body.block(root).for(i).for(j).for(k).block(C).store(C).value.b.a: "
            "buffers defined at different places\n"
            "  lhs: A\n"
            "  rhs: B");
}

TEST(StructuralDiff, ReportsADifferentConstant) {
  std::optional<std::string> diff = StructuralDiff(Gemm(), Gemm(WithInitValue(1.0f)));
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(*diff,
            "body.block(root).for(i).for(j).for(k).block(C).init.store(C).value: "
            "constants differ\n"
            "  lhs: 0.0\n"
            "  rhs: 1.0");
}

TEST(StructuralDiff, ReportsADifferentBlockName) {
  std::optional<std::string> diff = StructuralDiff(Gemm(), Gemm(WithBlockName("D")));
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(*diff,
            "body.block(root).for(i).for(j).for(k).block(C): block names differ\n"
            "  lhs: C\n"
            "  rhs: D");
}

TEST(StructuralHash, AlphaEquivalentFunctionsHashEqually) {
  EXPECT_EQ(StructuralHash(Gemm()), StructuralHash(Gemm(WithLoopPrefix("ax_"))));
  EXPECT_EQ(StructuralHash(Gemm()), StructuralHash(Gemm(WithFuncName("matmul"))));
}

TEST(StructuralHash, DifferentFunctionsHashDifferently) {
  uint64_t base = StructuralHash(Gemm());
  EXPECT_NE(base, StructuralHash(Gemm(WithBlockName("D"))));
  EXPECT_NE(base, StructuralHash(Gemm(WithInitValue(1.0f))));
  EXPECT_NE(base, StructuralHash(Gemm(WithSwappedProduct())));
  EXPECT_NE(base, StructuralHash(Gemm(WithOuterKind(ForKind::kParallel))));
}

TEST(StructuralHash, ReusedLoopVariableEqualsAndHashesLikeDistinctOnes) {
  Buffer a("A", kF32, {4});
  Var i("i"), j("j");
  auto two_loops = [&](const Var& first, const Var& second) {
    return PrimFunc(
        "f", {a},
        MakeSeq({MakeFor(first, 0, 4, ForKind::kSerial, MakeBufferStore(a, 0.0f, {first})),
                 MakeFor(second, 0, 4, ForKind::kSerial, MakeBufferStore(a, 1.0f, {second}))}));
  };
  EXPECT_TRUE(StructuralEqual(two_loops(i, i), two_loops(i, j)));
  EXPECT_EQ(StructuralHash(two_loops(i, i)), StructuralHash(two_loops(i, j)));
}

TEST(StructuralHash, HexIsSixteenLowerCaseDigitsOfTheHash) {
  std::string hex = StructuralHashHex(Gemm());
  ASSERT_EQ(hex.size(), 16u);
  EXPECT_EQ(std::stoull(hex, nullptr, 16), StructuralHash(Gemm()));
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
}

// The hash keys workloads in databases: a change here invalidates every stored measurement, so it
// must be deliberate (a change of the canonical text or of the hash function).
TEST(StructuralHash, IsStableAcrossPlatformsAndRuns) {
  EXPECT_EQ(StructuralHashHex(Gemm()), "86cd410a3e3ba399");
}

}  // namespace
}  // namespace tirtune
