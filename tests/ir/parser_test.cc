// Parsing hand-written IR text (docs/TEXT_FORMAT.md) into the expected node structure.
#include "tirtune/ir/parser.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tirtune/ir/stmt.h"

namespace tirtune {
namespace {

// The node of kind T at `ref`, failing the test (by returning null) when it is another kind.
template <typename T, typename Ref>
const T* As(const Ref& ref) {
  const T* node = ref.template as<T>();
  EXPECT_NE(node, nullptr) << "unexpected node kind " << static_cast<int>(ref.kind());
  return node;
}

int64_t IntValue(const Expr& e) {
  const auto* imm = e.as<IntImmNode>();
  EXPECT_NE(imm, nullptr);
  return imm == nullptr ? -1 : imm->value;
}

// The block under `stmt`, which must be a BlockRealize.
const BlockNode* BlockOf(const Stmt& stmt) {
  const auto* realize = As<BlockRealizeNode>(stmt);
  return realize == nullptr ? nullptr : realize->block.get();
}

constexpr const char* kGemm = R"(@prim_func
def gemm(A: Buffer((64, 32), float32), B: Buffer((32, 16), float32), C: Buffer((64, 16), float32)):
    with block("root"):
        for i in range(64):
            for j in range(16):
                for k in range(32):
                    with block("C"):
                        vi = axis.spatial(64, i)
                        vj = axis.spatial(16, j)
                        vk = axis.reduce(32, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

TEST(Parser, GemmSignature) {
  PrimFunc f = ParsePrimFunc(kGemm);
  EXPECT_EQ(f->name, "gemm");
  ASSERT_EQ(f->params.size(), 3u);
  const Buffer& a = f->params[0];
  EXPECT_EQ(a->name, "A");
  EXPECT_EQ(a->dtype, DataType::Float(32));
  ASSERT_EQ(a->ndim(), 2);
  EXPECT_EQ(IntValue(a->shape[0]), 64);
  EXPECT_EQ(IntValue(a->shape[1]), 32);
  EXPECT_EQ(a->shape[0].dtype(), DataType::Index());
  EXPECT_EQ(a->scope, StorageScope::kGlobal);
  EXPECT_EQ(a->align, 64);
  EXPECT_TRUE(a->strides.empty());
  EXPECT_TRUE(f->attrs.empty());
}

TEST(Parser, GemmLoopsBlockAndInit) {
  PrimFunc f = ParsePrimFunc(kGemm);
  const BlockNode* root = BlockOf(f->body);
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->iter_vars.empty());
  EXPECT_TRUE(root->reads.empty());
  EXPECT_TRUE(root->writes.empty());
  const auto* li = As<ForNode>(root->body);
  ASSERT_NE(li, nullptr);
  EXPECT_EQ(li->loop_var->name, "i");
  EXPECT_EQ(li->for_kind, ForKind::kSerial);
  EXPECT_EQ(IntValue(li->min), 0);
  EXPECT_EQ(IntValue(li->extent), 64);
  const auto* lj = As<ForNode>(li->body);
  ASSERT_NE(lj, nullptr);
  const auto* lk = As<ForNode>(lj->body);
  ASSERT_NE(lk, nullptr);

  const auto* realize = As<BlockRealizeNode>(lk->body);
  ASSERT_NE(realize, nullptr);
  EXPECT_TRUE(IsConstInt(realize->predicate, 1));
  EXPECT_TRUE(realize->predicate.dtype().is_bool());
  const BlockNode* c = realize->block.get();
  EXPECT_EQ(c->name, "C");
  ASSERT_EQ(c->iter_vars.size(), 3u);
  EXPECT_EQ(c->iter_vars[0].kind, IterKind::kSpatial);
  EXPECT_EQ(c->iter_vars[2].kind, IterKind::kReduce);
  EXPECT_EQ(IntValue(c->iter_vars[2].dom.extent), 32);
  EXPECT_EQ(IntValue(c->iter_vars[2].dom.min), 0);
  // Bindings are the loop variables themselves.
  ASSERT_EQ(realize->iter_values.size(), 3u);
  EXPECT_TRUE(realize->iter_values[0].same_as(li->loop_var));
  EXPECT_TRUE(realize->iter_values[2].same_as(lk->loop_var));

  ASSERT_EQ(c->reads.size(), 2u);
  EXPECT_TRUE(c->reads[0].buffer.same_as(f->params[0]));
  ASSERT_EQ(c->reads[0].region.size(), 2u);
  EXPECT_TRUE(c->reads[0].region[1].min.same_as(c->iter_vars[2].var));
  EXPECT_EQ(IntValue(c->reads[0].region[1].extent), 1);
  ASSERT_EQ(c->writes.size(), 1u);
  EXPECT_TRUE(c->writes[0].buffer.same_as(f->params[2]));

  const auto* init = As<BufferStoreNode>(c->init);
  ASSERT_NE(init, nullptr);
  const auto* zero = As<FloatImmNode>(init->value);
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->dtype, DataType::Float(32));
  EXPECT_EQ(zero->value, 0.0);

  const auto* update = As<BufferStoreNode>(c->body);
  ASSERT_NE(update, nullptr);
  EXPECT_TRUE(update->buffer.same_as(f->params[2]));
  const auto* add = As<AddNode>(update->value);
  ASSERT_NE(add, nullptr);
  const auto* load_c = As<BufferLoadNode>(add->a);
  ASSERT_NE(load_c, nullptr);
  EXPECT_TRUE(load_c->indices[0].same_as(c->iter_vars[0].var));
  const auto* mul = As<MulNode>(add->b);
  ASSERT_NE(mul, nullptr);
  EXPECT_NE(mul->a.as<BufferLoadNode>(), nullptr);
}

TEST(Parser, MultiBlockWithAllocBuffer) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def relu_add(A: Buffer((8,), float32), C: Buffer((8,), float32)):
    with block("root"):
        reads()
        writes()
        T = alloc_buffer((8,), float32, scope="shared", align=16)
        for i in range(8):
            with block("T"):
                vi = axis.spatial(8, i)
                reads(A[vi])
                writes(T[vi])
                T[vi] = max(A[vi], 0.0)
        for i in range(8):
            with block("C"):
                vi = axis.spatial(8, i)
                reads(T[vi])
                writes(C[vi])
                C[vi] = T[vi] + 1.0
)");
  const BlockNode* root = BlockOf(f->body);
  ASSERT_NE(root, nullptr);
  ASSERT_EQ(root->alloc_buffers.size(), 1u);
  const Buffer& t = root->alloc_buffers[0];
  EXPECT_EQ(t->name, "T");
  EXPECT_EQ(t->scope, StorageScope::kShared);
  EXPECT_EQ(t->align, 16);
  const auto* seq = As<SeqStmtNode>(root->body);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 2u);
  const BlockNode* first = BlockOf(As<ForNode>(seq->seq[0])->body);
  const BlockNode* second = BlockOf(As<ForNode>(seq->seq[1])->body);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(first->writes[0].buffer.same_as(t));
  EXPECT_TRUE(second->reads[0].buffer.same_as(t));
  EXPECT_NE(As<MaxNode>(As<BufferStoreNode>(first->body)->value), nullptr);
  // The two loops define two different variables with the same name.
  EXPECT_FALSE(As<ForNode>(seq->seq[0])->loop_var.same_as(As<ForNode>(seq->seq[1])->loop_var));
}

TEST(Parser, RegionMayNameTheBlocksOwnAllocBuffer) {
  // The printer defines a block's allocations before its regions, so reads/writes may use them.
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes(T[0:4])
        T = alloc_buffer((4,), float32)
        A[0] = 1.0
)");
  const BlockNode* root = BlockOf(f->body);
  ASSERT_NE(root, nullptr);
  ASSERT_EQ(root->writes.size(), 1u);
  EXPECT_TRUE(root->writes[0].buffer.same_as(root->alloc_buffers[0]));
}

TEST(Parser, LoopKindsMinAndAnnotations) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((64,), float32)):
    for b in thread_binding(2, thread="blockIdx.x"):
        for p in parallel(4, min=1):
            for v in vectorized(4, annotations={"pragma": "x", "n": 2, "w": 0.5}):
                for u in unroll(2, min=0, annotations={}):
                    A[b * 32 + p * 8 + v * 2 + u] = 0.0
)");
  const auto* b = As<ForNode>(f->body);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->for_kind, ForKind::kThreadBinding);
  EXPECT_EQ(b->thread_tag, "blockIdx.x");
  const auto* p = As<ForNode>(b->body);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->for_kind, ForKind::kParallel);
  EXPECT_EQ(IntValue(p->min), 1);
  EXPECT_TRUE(p->thread_tag.empty());
  const auto* v = As<ForNode>(p->body);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->for_kind, ForKind::kVectorized);
  ASSERT_EQ(v->annotations.size(), 3u);
  EXPECT_EQ(As<StringImmNode>(v->annotations.at("pragma"))->value, "x");
  EXPECT_EQ(IntValue(v->annotations.at("n")), 2);
  EXPECT_EQ(As<FloatImmNode>(v->annotations.at("w"))->value, 0.5);
  const auto* u = As<ForNode>(v->body);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->for_kind, ForKind::kUnrolled);
  EXPECT_TRUE(u->annotations.empty());
}

TEST(Parser, LoopVariableTakesTheExtentsType) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((8,), float32)):
    for i in range(int32(8), min=2):
        A[int64(i)] = 0.0
)");
  const auto* loop = As<ForNode>(f->body);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->loop_var.dtype(), DataType::Int(32));
  // The untyped literal min takes the extent's type.
  EXPECT_EQ(loop->min.dtype(), DataType::Int(32));
  EXPECT_EQ(IntValue(loop->min), 2);
  const auto* store = As<BufferStoreNode>(loop->body);
  ASSERT_NE(store, nullptr);
  EXPECT_NE(As<CastNode>(store->indices[0]), nullptr);
}

// Region entries: a point, `m:n` with constants, `0:e`, `a:a + e`, and the general `a:b`.
TEST(Parser, RegionRangeForms) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((16, 16, 16, 16, 16), float32)):
    for i in range(4):
        for n in range(4):
            with block("B"):
                vi = axis.spatial(4, i)
                vn = axis.spatial(4, n)
                reads(A[vi, 2:6, 0:vn, vi * 4:vi * 4 + vn, vi:vn])
                writes()
                evaluate(0)
)");
  const auto* loop = As<ForNode>(As<ForNode>(f->body)->body);
  ASSERT_NE(loop, nullptr);
  const BlockNode* block = BlockOf(loop->body);
  ASSERT_NE(block, nullptr);
  const Var& vi = block->iter_vars[0].var;
  const Var& vn = block->iter_vars[1].var;
  ASSERT_EQ(block->reads.size(), 1u);
  const std::vector<Range>& r = block->reads[0].region;
  ASSERT_EQ(r.size(), 5u);
  EXPECT_TRUE(r[0].min.same_as(vi));
  EXPECT_EQ(IntValue(r[0].extent), 1);
  EXPECT_EQ(IntValue(r[1].min), 2);
  EXPECT_EQ(IntValue(r[1].extent), 4);
  EXPECT_EQ(IntValue(r[2].min), 0);
  EXPECT_TRUE(r[2].extent.same_as(vn));
  EXPECT_NE(As<MulNode>(r[3].min), nullptr);
  EXPECT_TRUE(r[3].extent.same_as(vn));
  EXPECT_TRUE(r[4].min.same_as(vi));
  const auto* diff = As<SubNode>(r[4].extent);  // vn - vi, by the folding builder
  ASSERT_NE(diff, nullptr);
  EXPECT_TRUE(diff->a.same_as(vn));
  EXPECT_TRUE(diff->b.same_as(vi));
  EXPECT_TRUE(block->writes.empty());
}

TEST(Parser, IteratorMinAndPredicate) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((10,), float32)):
    for i in range(12):
        with block("B"):
            vi = axis.spatial(10, i, min=2)
            where(i < 10 and not i == 3)
            reads()
            writes(A[vi])
            block_attr({"meta": 1})
            A[vi] = 0.0
)");
  const auto* realize = As<BlockRealizeNode>(As<ForNode>(f->body)->body);
  ASSERT_NE(realize, nullptr);
  EXPECT_EQ(IntValue(realize->block->iter_vars[0].dom.min), 2);
  const auto* pred = As<AndNode>(realize->predicate);
  ASSERT_NE(pred, nullptr);
  EXPECT_NE(As<LTNode>(pred->a), nullptr);
  const auto* negated = As<NotNode>(pred->b);
  ASSERT_NE(negated, nullptr);
  EXPECT_NE(As<EQNode>(negated->a), nullptr);
  EXPECT_EQ(IntValue(realize->block->annotations.at("meta")), 1);
}

TEST(Parser, IfElseLetAllocateEvaluate) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((8,), int32)):
    with let(n, 4):
        with allocate(T, (n,), int32, scope="local"):
            if n > 2:
                T[0] = int32(1)
            else:
                T[0] = let(x, int32(2), x * x)
            evaluate(0)
)");
  const auto* let = As<LetStmtNode>(f->body);
  ASSERT_NE(let, nullptr);
  EXPECT_EQ(let->var->name, "n");
  EXPECT_EQ(let->var.dtype(), DataType::Index());
  const auto* alloc = As<AllocateNode>(let->body);
  ASSERT_NE(alloc, nullptr);
  EXPECT_EQ(alloc->buffer->scope, StorageScope::kLocal);
  EXPECT_TRUE(alloc->buffer->shape[0].same_as(let->var));
  const auto* seq = As<SeqStmtNode>(alloc->body);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 2u);
  const auto* branch = As<IfThenElseNode>(seq->seq[0]);
  ASSERT_NE(branch, nullptr);
  EXPECT_NE(As<GTNode>(branch->condition), nullptr);
  const auto* then_store = As<BufferStoreNode>(branch->then_case);
  ASSERT_NE(then_store, nullptr);
  EXPECT_TRUE(then_store->buffer.same_as(alloc->buffer));
  const auto* else_store = As<BufferStoreNode>(branch->else_case);
  ASSERT_NE(else_store, nullptr);
  const auto* let_expr = As<LetNode>(else_store->value);
  ASSERT_NE(let_expr, nullptr);
  EXPECT_EQ(let_expr->var.dtype(), DataType::Int(32));
  EXPECT_TRUE(As<MulNode>(let_expr->body)->a.same_as(let_expr->var));
  const auto* eval = As<EvaluateNode>(seq->seq[1]);
  ASSERT_NE(eval, nullptr);
  EXPECT_EQ(IntValue(eval->value), 0);
}

TEST(Parser, CastsAndTypedLiterals) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((8,), float32), B: Buffer((8,), int8)):
    A[0] = float32(B[0]) + cast(float32, 5) + float32(inf) + -0.5
    B[1] = int8(-1)
    A[2] = exp(float32(float64(0.1))) + sqrt(A[1]) + pow(A[1], 2)
    A[3] = float32(-inf)
)");
  const auto* seq = As<SeqStmtNode>(f->body);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 4u);
  // ((float32(B[0]) + cast(float32, 5)) + float32(inf)) + -0.5
  const auto* outer = As<AddNode>(As<BufferStoreNode>(seq->seq[0])->value);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(As<FloatImmNode>(outer->b)->value, -0.5);
  const auto* middle = As<AddNode>(outer->a);
  ASSERT_NE(middle, nullptr);
  EXPECT_TRUE(std::isinf(As<FloatImmNode>(middle->b)->value));
  const auto* inner = As<AddNode>(middle->a);
  ASSERT_NE(inner, nullptr);
  const auto* cast_load = As<CastNode>(inner->a);
  ASSERT_NE(cast_load, nullptr);
  EXPECT_NE(As<BufferLoadNode>(cast_load->value), nullptr);
  const auto* cast_literal = As<CastNode>(inner->b);
  ASSERT_NE(cast_literal, nullptr);
  EXPECT_EQ(cast_literal->value.dtype(), DataType::Index());

  const auto* minus_one = As<IntImmNode>(As<BufferStoreNode>(seq->seq[1])->value);
  ASSERT_NE(minus_one, nullptr);
  EXPECT_EQ(minus_one->dtype, DataType::Int(8));
  EXPECT_EQ(minus_one->value, -1);

  const auto* sum = As<AddNode>(As<BufferStoreNode>(seq->seq[2])->value);
  ASSERT_NE(sum, nullptr);
  const auto* pow = As<CallNode>(sum->b);
  ASSERT_NE(pow, nullptr);
  EXPECT_EQ(pow->op, Intrinsic::kPow);
  EXPECT_EQ(As<FloatImmNode>(pow->args[1])->dtype, DataType::Float(32));  // promoted literal
  const auto* exp = As<CallNode>(As<AddNode>(sum->a)->a);
  ASSERT_NE(exp, nullptr);
  const auto* f64 = As<FloatImmNode>(As<CastNode>(exp->args[0])->value);
  ASSERT_NE(f64, nullptr);
  EXPECT_EQ(f64->dtype, DataType::Float(64));
  EXPECT_EQ(f64->value, 0.1);  // float64 keeps every digit
  const auto* neg_inf = As<FloatImmNode>(As<BufferStoreNode>(seq->seq[3])->value);
  ASSERT_NE(neg_inf, nullptr);
  EXPECT_TRUE(std::isinf(neg_inf->value) && neg_inf->value < 0);
}

TEST(Parser, Float32LiteralsHoldFloat32Values) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((1,), float32)):
    A[0] = 0.1
)");
  const auto* v = As<FloatImmNode>(As<BufferStoreNode>(f->body)->value);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->value, static_cast<double>(0.1f));
}

TEST(Parser, Float16BuffersAndLiteralPromotion) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((4,), float16), B: Buffer((4,), bfloat16)):
    for i in range(4):
        A[i] = A[i] * 2.0 + float16(1.5)
        B[i] = 0
)");
  const auto* seq = As<SeqStmtNode>(As<ForNode>(f->body)->body);
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(f->params[0]->dtype, DataType::Float(16));
  const auto* add = As<AddNode>(As<BufferStoreNode>(seq->seq[0])->value);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->dtype, DataType::Float(16));
  EXPECT_EQ(As<MulNode>(add->a)->b.dtype(), DataType::Float(16));
  EXPECT_EQ(As<FloatImmNode>(add->b)->value, 1.5);
  // An untyped literal stored to a buffer takes the buffer's element type.
  const auto* zero = As<FloatImmNode>(As<BufferStoreNode>(seq->seq[1])->value);
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->dtype, DataType::BFloat16());
}

TEST(Parser, UntypedLiteralTakesTheOtherOperandsType) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((4,), int32)):
    for i in range(int32(4)):
        A[i] = i + 1
)");
  const auto* add = As<AddNode>(As<BufferStoreNode>(As<ForNode>(f->body)->body)->value);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->b.dtype(), DataType::Int(32));
  EXPECT_EQ(IntValue(add->b), 1);
}

TEST(Parser, PrecedenceAndParentheses) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((4,), int64), a: Buffer((1,), int64)):
    A[0] = a[0] - (a[0] - a[0])
    A[1] = a[0] - a[0] - a[0]
    A[2] = a[0] + a[0] * a[0] // 2 % 3
    A[3] = -a[0] * -3
    A[4] = select(a[0] < 2 or a[0] >= 5, min(a[0], 1), max(2, a[0]))
)");
  const auto* seq = As<SeqStmtNode>(f->body);
  ASSERT_NE(seq, nullptr);
  auto value = [&](size_t i) { return As<BufferStoreNode>(seq->seq[i])->value; };
  EXPECT_NE(As<SubNode>(As<SubNode>(value(0))->b), nullptr);
  EXPECT_NE(As<SubNode>(As<SubNode>(value(1))->a), nullptr);
  // a + (((a * a) // 2) % 3)
  const auto* mod = As<FloorModNode>(As<AddNode>(value(2))->b);
  ASSERT_NE(mod, nullptr);
  EXPECT_NE(As<MulNode>(As<FloorDivNode>(mod->a)->a), nullptr);
  // (0 - a) * -3: a negated operand is a subtraction from zero; a negative number a literal.
  const auto* mul = As<MulNode>(value(3));
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(IntValue(As<SubNode>(mul->a)->a), 0);
  EXPECT_EQ(IntValue(mul->b), -3);
  const auto* select = As<SelectNode>(value(4));
  ASSERT_NE(select, nullptr);
  EXPECT_NE(As<OrNode>(select->cond), nullptr);
  EXPECT_NE(As<MinNode>(select->t), nullptr);
  EXPECT_NE(As<MaxNode>(select->f), nullptr);
}

TEST(Parser, VectorExpressions) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((8,), float32)):
    A[ramp(0, 1, 4)] = A[ramp(4, 1, 4)] + broadcast(1.0, 4)
)");
  const auto* store = As<BufferStoreNode>(f->body);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->value.dtype(), DataType::Float(32, 4));
  EXPECT_EQ(As<RampNode>(store->indices[0])->lanes, 4);
  EXPECT_EQ(As<BroadcastNode>(As<AddNode>(store->value)->b)->lanes, 4);
}

TEST(Parser, CommentsBlankLinesAndFuncAttr) {
  PrimFunc f = ParsePrimFunc(R"(
# A leading comment.

@prim_func  # decorator
def f(A: Buffer((2, 2), float32, strides=(4, 1), align=32)):   # trailing
    func_attr({"global_symbol": "f", "tir.noalias": True})

        # an indented comment does not open a block
    for i in range(2):

        A[i, 0] = 1.0   # comment after a statement
# a comment at column 0 inside the body
        A[i, 1] = 2.0
)");
  EXPECT_EQ(As<StringImmNode>(f->attrs.at("global_symbol"))->value, "f");
  EXPECT_EQ(IntValue(f->attrs.at("tir.noalias")), 1);
  ASSERT_EQ(f->params[0]->strides.size(), 2u);
  EXPECT_EQ(IntValue(f->params[0]->strides[0]), 4);
  EXPECT_EQ(f->params[0]->align, 32);
  const auto* seq = As<SeqStmtNode>(As<ForNode>(f->body)->body);
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->seq.size(), 2u);
}

TEST(Parser, BracketsJoinLines) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((2,), float32),
      B: Buffer((2,), float32)):
    A[0] = (B[0] +
  B[1])
)");
  EXPECT_EQ(f->params.size(), 2u);
  EXPECT_NE(As<AddNode>(As<BufferStoreNode>(f->body)->value), nullptr);
}

TEST(Parser, InnerScopesMayShadowOuterNames) {
  PrimFunc f = ParsePrimFunc(R"(@prim_func
def f(A: Buffer((4, 4), float32)):
    for i in range(4):
        for i in range(4):
            A[i, i] = 0.0
)");
  const auto* outer = As<ForNode>(f->body);
  const auto* inner = As<ForNode>(outer->body);
  ASSERT_NE(inner, nullptr);
  const auto* store = As<BufferStoreNode>(inner->body);
  EXPECT_TRUE(store->indices[0].same_as(inner->loop_var));
}

TEST(Parser, SeveralFunctions) {
  std::vector<PrimFunc> funcs = ParsePrimFuncs(R"(@prim_func
def a(A: Buffer((1,), float32)):
    A[0] = 1.0

@prim_func
def b(A: Buffer((), float32)):
    A[] = 2.0
)");
  ASSERT_EQ(funcs.size(), 2u);
  EXPECT_EQ(funcs[0]->name, "a");
  EXPECT_EQ(funcs[1]->name, "b");
  EXPECT_EQ(funcs[1]->params[0]->ndim(), 0);
  EXPECT_TRUE(ParsePrimFuncs("# only a comment\n").empty());
}

TEST(Parser, ParsePrimFuncWantsExactlyOneFunction) {
  const char* two = R"(@prim_func
def a(A: Buffer((1,), float32)):
    A[0] = 1.0
@prim_func
def b(A: Buffer((1,), float32)):
    A[0] = 1.0
)";
  try {
    ParsePrimFunc(two, "two.tir");
    FAIL() << "expected a ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.column(), 1);
    EXPECT_EQ(e.source(), "two.tir");
  }
}

TEST(ParseError, MessageQuotesTheLineWithACaret) {
  try {
    ParsePrimFunc("@prim_func\ndef f(A: Buffer((4,), float32)):\n    A[0] = B[0]\n", "in.tir");
    FAIL() << "expected a ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.detail(), "undefined name 'B'");
    EXPECT_STREQ(e.what(),
                 "in.tir:3:12: error: undefined name 'B'\n"
                 "    A[0] = B[0]\n"
                 "           ^");
  }
}

}  // namespace
}  // namespace tirtune
