// CreatePrimFunc: the block form of tensor-expression graphs (loops per axis, block iterators and
// their kinds, read/write regions, reduction inits, the root block's allocations) and the errors
// of the TE DSL.
#include "tirtune/te/create_prim_func.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>

#include "tirtune/ir/op.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/verify.h"
#include "tirtune/support/error.h"
#include "tirtune/te/layout.h"
#include "tirtune/te/linear_algebra.h"

namespace tirtune::te {
namespace {

Tensor Input(std::vector<Expr> shape, std::string name) {
  return Placeholder(std::move(shape), DataType::Float(32), std::move(name));
}

// The root block of a function in block form.
const BlockNode* Root(const PrimFunc& f) {
  const auto* realize = f->body.as<BlockRealizeNode>();
  EXPECT_NE(realize, nullptr);
  EXPECT_EQ(realize->block->name, "root");
  return realize->block.get();
}

// The statements directly under the root block (one loop nest per compute).
std::vector<Stmt> Nests(const PrimFunc& f) {
  const Stmt& body = Root(f)->body;
  if (const auto* seq = body.as<SeqStmtNode>()) return seq->seq;
  return {body};
}

// Walks down a loop nest; fills `loops` and returns the block realize at its bottom.
const BlockRealizeNode* Descend(const Stmt& nest, std::vector<const ForNode*>* loops) {
  Stmt s = nest;
  while (const auto* loop = s.as<ForNode>()) {
    loops->push_back(loop);
    s = loop->body;
  }
  const auto* realize = s.as<BlockRealizeNode>();
  EXPECT_NE(realize, nullptr);
  return realize;
}

int64_t ConstOf(const Expr& e) {
  const int64_t* v = AsConstInt(e);
  EXPECT_NE(v, nullptr);
  return v ? *v : -1;
}

bool IsVar(const Expr& e, const Var& v) { return e.same_as(v); }

// Fails with both texts when `actual` is not structurally equal to the parsed `expected`.
void ExpectFunction(const PrimFunc& actual, const std::string& expected) {
  PrimFunc want = ParsePrimFunc(expected, "expected");
  std::optional<std::string> diff = StructuralDiff(actual, want);
  EXPECT_FALSE(diff.has_value()) << *diff << "\nactual:\n"
                                 << Print(actual) << "\nexpected:\n"
                                 << Print(want);
}

TEST(CreatePrimFunc, GemmHasTheBlockFormOfTheTextFormatExample) {
  Tensor a = Input({64, 64}, "A");
  Tensor b = Input({64, 64}, "B");
  ExpectFunction(CreatePrimFunc({a, b, Matmul(a, b)}, "gemm"), R"(
@prim_func
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

TEST(CreatePrimFunc, PaddingIsAnIntermediateBlockWithClampedReads) {
  Tensor a = Input({6}, "A");
  Tensor padded = Pad(a, {1}, {1});
  IterVar r = ReduceAxis(3, "r");
  Tensor b = Compute(
      {6}, {"i"}, [&](const std::vector<Var>& i) { return Sum(padded(i[0] + r.var), {r}); }, "B");
  ExpectFunction(CreatePrimFunc({a, b}), R"(
@prim_func
def main(A: Buffer((6,), float32), B: Buffer((6,), float32)):
    with block("root"):
        reads()
        writes()
        pad_temp = alloc_buffer((8,), float32)
        for i0 in range(8):
            with block("pad_temp"):
                vi0 = axis.spatial(8, i0)
                reads(A[min(max(vi0 - 1, 0), 5)])
                writes(pad_temp[vi0])
                pad_temp[vi0] = select(vi0 >= 1 and vi0 < 7, A[min(max(vi0 - 1, 0), 5)], 0.0)
        for i in range(6):
            for r in range(3):
                with block("B"):
                    vi = axis.spatial(6, i)
                    vr = axis.reduce(3, r)
                    reads(pad_temp[vi + vr])
                    writes(B[vi])
                    with init():
                        B[vi] = 0.0
                    B[vi] = B[vi] + pad_temp[vi + vr]
)");
}

TEST(CreatePrimFunc, GemmIsOneReductionBlockUnderTheRoot) {
  Tensor a = Input({4, 6}, "A");
  Tensor b = Input({6, 5}, "B");
  Tensor c = Matmul(a, b);
  PrimFunc f = CreatePrimFunc({a, b, c}, "gemm");

  EXPECT_EQ(f->name, "gemm");
  ASSERT_EQ(f->params.size(), 3u);
  EXPECT_TRUE(f->params[0].same_as(a.buffer()));
  EXPECT_TRUE(f->params[2].same_as(c.buffer()));
  EXPECT_TRUE(Root(f)->alloc_buffers.empty());
  EXPECT_TRUE(Root(f)->iter_vars.empty());

  std::vector<Stmt> nests = Nests(f);
  ASSERT_EQ(nests.size(), 1u);
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = Descend(nests[0], &loops);
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(loops[0]->loop_var->name, "i");
  EXPECT_EQ(loops[1]->loop_var->name, "j");
  EXPECT_EQ(loops[2]->loop_var->name, "k");
  EXPECT_EQ(ConstOf(loops[0]->extent), 4);
  EXPECT_EQ(ConstOf(loops[1]->extent), 5);
  EXPECT_EQ(ConstOf(loops[2]->extent), 6);
  for (const ForNode* loop : loops) EXPECT_EQ(loop->for_kind, ForKind::kSerial);

  const BlockNode* block = realize->block.get();
  EXPECT_EQ(block->name, "C");
  ASSERT_EQ(block->iter_vars.size(), 3u);
  EXPECT_EQ(block->iter_vars[0].var->name, "vi");
  EXPECT_EQ(block->iter_vars[0].kind, IterKind::kSpatial);
  EXPECT_EQ(block->iter_vars[1].kind, IterKind::kSpatial);
  EXPECT_EQ(block->iter_vars[2].kind, IterKind::kReduce);
  EXPECT_EQ(ConstOf(block->iter_vars[2].dom.extent), 6);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(IsVar(realize->iter_values[i], loops[i]->loop_var));
  EXPECT_TRUE(IsConstInt(realize->predicate, 1));

  const Var& vi = block->iter_vars[0].var;
  const Var& vj = block->iter_vars[1].var;
  const Var& vk = block->iter_vars[2].var;
  ASSERT_EQ(block->reads.size(), 2u);
  EXPECT_TRUE(block->reads[0].buffer.same_as(a.buffer()));
  EXPECT_TRUE(IsVar(block->reads[0].region[0].min, vi));
  EXPECT_TRUE(IsVar(block->reads[0].region[1].min, vk));
  EXPECT_EQ(ConstOf(block->reads[0].region[1].extent), 1);
  EXPECT_TRUE(block->reads[1].buffer.same_as(b.buffer()));
  EXPECT_TRUE(IsVar(block->reads[1].region[0].min, vk));
  EXPECT_TRUE(IsVar(block->reads[1].region[1].min, vj));
  ASSERT_EQ(block->writes.size(), 1u);
  EXPECT_TRUE(block->writes[0].buffer.same_as(c.buffer()));
  EXPECT_TRUE(IsVar(block->writes[0].region[0].min, vi));
  EXPECT_TRUE(IsVar(block->writes[0].region[1].min, vj));

  // init: C[vi, vj] = 0.0; body: C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj].
  const auto* init = block->init.as<BufferStoreNode>();
  ASSERT_NE(init, nullptr);
  EXPECT_TRUE(init->buffer.same_as(c.buffer()));
  const auto* zero = init->value.as<FloatImmNode>();
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->value, 0.0);
  const auto* update = block->body.as<BufferStoreNode>();
  ASSERT_NE(update, nullptr);
  const auto* add = update->value.as<AddNode>();
  ASSERT_NE(add, nullptr);
  const auto* acc = add->a.as<BufferLoadNode>();
  ASSERT_NE(acc, nullptr);
  EXPECT_TRUE(acc->buffer.same_as(c.buffer()));
  EXPECT_NE(add->b.as<MulNode>(), nullptr);

  EXPECT_TRUE(VerifyWellFormed(f).empty());
}

TEST(CreatePrimFunc, IntermediatesAreAllocatedByTheRootInDependencyOrder) {
  Tensor a = Input({8}, "A");
  Tensor b = Compute(
      {8}, [&](const std::vector<Var>& i) { return a(i[0]) + 1.0f; }, "B");
  Tensor c = Compute(
      {8}, [&](const std::vector<Var>& i) { return b(i[0]) * 2.0f; }, "C");
  Tensor d = Compute(
      {8}, [&](const std::vector<Var>& i) { return c(i[0]) + b(i[0]); }, "D");
  PrimFunc f = CreatePrimFunc({a, d});

  const BlockNode* root = Root(f);
  ASSERT_EQ(root->alloc_buffers.size(), 2u);
  EXPECT_TRUE(root->alloc_buffers[0].same_as(b.buffer()));
  EXPECT_TRUE(root->alloc_buffers[1].same_as(c.buffer()));
  std::vector<std::string> names;
  for (const Stmt& nest : Nests(f)) {
    std::vector<const ForNode*> loops;
    const BlockRealizeNode* realize = Descend(nest, &loops);
    names.push_back(realize->block->name);
    EXPECT_EQ(loops.size(), 1u);
    EXPECT_EQ(loops[0]->loop_var->name, "i0");
    EXPECT_FALSE(realize->block->init.defined());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"B", "C", "D"}));
  EXPECT_TRUE(VerifyWellFormed(f).empty());
}

TEST(CreatePrimFunc, ComputeArgumentsAreParametersNotAllocations) {
  Tensor a = Input({8}, "A");
  Tensor b = Compute(
      {8}, [&](const std::vector<Var>& i) { return a(i[0]) + 1.0f; }, "B");
  Tensor c = Compute(
      {8}, [&](const std::vector<Var>& i) { return b(i[0]) * 2.0f; }, "C");
  PrimFunc f = CreatePrimFunc({a, b, c});
  EXPECT_TRUE(Root(f)->alloc_buffers.empty());
  EXPECT_EQ(Nests(f).size(), 2u);
}

TEST(CreatePrimFunc, MaxAndMinReductionsStartFromTheirIdentities) {
  Tensor a = Input({4, 6}, "A");
  IterVar k = ReduceAxis(6, "k");
  Tensor mx = Compute(
      {4}, [&](const std::vector<Var>& i) { return MaxReduce(a(i[0], k.var), {k}); }, "mx");
  IterVar k2 = ReduceAxis(6, "k");
  Tensor mn = Compute(
      {4}, [&](const std::vector<Var>& i) { return MinReduce(a(i[0], k2.var), {k2}); }, "mn");
  PrimFunc f = CreatePrimFunc({a, mx, mn});
  std::vector<Stmt> nests = Nests(f);
  ASSERT_EQ(nests.size(), 2u);

  std::vector<const ForNode*> loops;
  const BlockNode* max_block = Descend(nests[0], &loops)->block.get();
  const BlockNode* min_block = Descend(nests[1], &loops)->block.get();
  EXPECT_EQ(max_block->init.as<BufferStoreNode>()->value.as<FloatImmNode>()->value,
            -std::numeric_limits<float>::max());
  EXPECT_EQ(min_block->init.as<BufferStoreNode>()->value.as<FloatImmNode>()->value,
            std::numeric_limits<float>::max());
  EXPECT_NE(max_block->body.as<BufferStoreNode>()->value.as<MaxNode>(), nullptr);
  EXPECT_NE(min_block->body.as<BufferStoreNode>()->value.as<MinNode>(), nullptr);
  EXPECT_EQ(max_block->iter_vars[1].kind, IterKind::kReduce);
}

TEST(CreatePrimFunc, ReadsAtConstantOffsetsCoverTheirHull) {
  Tensor a = Input({16, 16}, "A");
  Tensor b = Compute(
      {8, 8},
      [&](const std::vector<Var>& i) {
        return a(i[0] + 1, i[1]) + a(i[0] + 3, i[1] * 2) + a(i[0], i[1] + 4);
      },
      "B");
  PrimFunc f = CreatePrimFunc({a, b});
  std::vector<const ForNode*> loops;
  const BlockNode* block = Descend(Nests(f)[0], &loops)->block.get();
  ASSERT_EQ(block->reads.size(), 1u);
  const BufferRegion& read = block->reads[0];
  // Rows vi .. vi + 3: the hull of offsets 1, 3 and 0.
  EXPECT_TRUE(IsVar(read.region[0].min, block->iter_vars[0].var));
  EXPECT_EQ(ConstOf(read.region[0].extent), 4);
  // Columns vj, 2 vj and vj + 4 do not differ by constants: the whole dimension.
  EXPECT_EQ(ConstOf(read.region[1].min), 0);
  EXPECT_EQ(ConstOf(read.region[1].extent), 16);
}

TEST(CreatePrimFunc, RepeatedReadOfOneElementIsAPoint) {
  Tensor a = Input({4, 6}, "A");
  IterVar k = ReduceAxis(6, "k");
  Tensor b = Compute(
      {4}, [&](const std::vector<Var>& i) { return Sum(a(i[0], k.var) * a(i[0], k.var), {k}); },
      "B");
  PrimFunc f = CreatePrimFunc({a, b});
  std::vector<const ForNode*> loops;
  const BlockNode* block = Descend(Nests(f)[0], &loops)->block.get();
  ASSERT_EQ(block->reads.size(), 1u);
  EXPECT_EQ(ConstOf(block->reads[0].region[0].extent), 1);
  EXPECT_EQ(ConstOf(block->reads[0].region[1].extent), 1);
  EXPECT_TRUE(IsVar(block->reads[0].region[1].min, block->iter_vars[1].var));
}

TEST(CreatePrimFunc, AttrsBecomeBlockAnnotations) {
  Tensor a = Input({4}, "A");
  Tensor b = Compute(
      {4}, [&](const std::vector<Var>& i) { return a(i[0]); }, "B",
      Annotations{{"schedule_rule", StringImm("none")}});
  PrimFunc f = CreatePrimFunc({a, b});
  std::vector<const ForNode*> loops;
  const BlockNode* block = Descend(Nests(f)[0], &loops)->block.get();
  ASSERT_EQ(block->annotations.count("schedule_rule"), 1u);
}

TEST(CreatePrimFunc, TensorsWithOneNameGetDistinctBlockNames) {
  Tensor a = Input({4}, "A");
  Tensor b = Compute(
      {4}, [&](const std::vector<Var>& i) { return a(i[0]) + 1.0f; }, "T");
  Tensor c = Compute(
      {4}, [&](const std::vector<Var>& i) { return b(i[0]) + 1.0f; }, "T");
  PrimFunc f = CreatePrimFunc({a, c});
  std::vector<std::string> names;
  for (const Stmt& nest : Nests(f)) {
    std::vector<const ForNode*> loops;
    names.push_back(Descend(nest, &loops)->block->name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"T", "T_1"}));
  EXPECT_TRUE(VerifyWellFormed(f).empty());
}

TEST(CreatePrimFunc, PlaceholderMissingFromArgumentsIsAUserError) {
  Tensor a = Input({4}, "A");
  Tensor b = Compute(
      {4}, [&](const std::vector<Var>& i) { return a(i[0]); }, "B");
  EXPECT_THROW(CreatePrimFunc({b}), UserError);
}

TEST(CreatePrimFunc, ArgumentPassedTwiceIsAUserError) {
  Tensor a = Input({4}, "A");
  Tensor b = Compute(
      {4}, [&](const std::vector<Var>& i) { return a(i[0]); }, "B");
  EXPECT_THROW(CreatePrimFunc({a, b, b}), UserError);
}

TEST(TensorExpression, ReductionInsideALargerExpressionIsAUserError) {
  Tensor a = Input({4, 6}, "A");
  IterVar k = ReduceAxis(6, "k");
  auto make = [&] {
    return Compute(
        {4}, [&](const std::vector<Var>& i) { return Sum(a(i[0], k.var), {k}) * 2.0f; }, "B");
  };
  EXPECT_THROW(make(), UserError);
}

TEST(TensorExpression, ReductionOutsideAComputeIsAUserError) {
  Tensor a = Input({6}, "A");
  IterVar k = ReduceAxis(6, "k");
  EXPECT_THROW(Sum(a(k.var), {k}), UserError);
}

TEST(TensorExpression, ReadWithTheWrongNumberOfIndicesIsAUserError) {
  Tensor a = Input({4, 6}, "A");
  EXPECT_THROW(a(Expr(1)), UserError);
}

TEST(TensorExpression, ComputeRecordsItsInputsInFirstReadOrder) {
  Tensor a = Input({4}, "A");
  Tensor b = Input({4}, "B");
  Tensor c = Compute(
      {4}, [&](const std::vector<Var>& i) { return b(i[0]) * a(i[0]) + b(i[0]); }, "C");
  ASSERT_EQ(c->inputs.size(), 2u);
  EXPECT_TRUE(c->inputs[0].same_as(b));
  EXPECT_TRUE(c->inputs[1].same_as(a));
  EXPECT_EQ(c.dtype(), DataType::Float(32));
  EXPECT_EQ(c.dim(0), 4);
}

}  // namespace
}  // namespace tirtune::te
