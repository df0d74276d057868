// Construction, sharing and folding behaviour of IR nodes.
#include <gtest/gtest.h>

#include "tirtune/ir/function.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"

namespace tirtune {
namespace {

TEST(DataType, TextRoundTrip) {
  for (const char* s : {"float32", "int64", "bool", "float16", "bfloat16", "int8", "uint8",
                        "float32x8", "handle"}) {
    auto t = DataType::Parse(s);
    ASSERT_TRUE(t.has_value()) << s;
    EXPECT_EQ(t->str(), s);
  }
  EXPECT_FALSE(DataType::Parse("float31").has_value());
  EXPECT_FALSE(DataType::Parse("int").has_value());
  EXPECT_FALSE(DataType::Parse("float32x").has_value());
}

TEST(Op, FoldsIntegerConstants) {
  Expr e = Expr(3) + Expr(4) * Expr(5);
  ASSERT_TRUE(AsConstInt(e));
  EXPECT_EQ(*AsConstInt(e), 23);
  EXPECT_EQ(*AsConstInt(FloorDiv(-7, 2)), -4);
  EXPECT_EQ(*AsConstInt(FloorMod(-7, 2)), 1);
}

TEST(Op, KeepsIdentityOperandsShared) {
  Var x("x");
  EXPECT_TRUE((x + 0).same_as(x));
  EXPECT_TRUE((x * 1).same_as(x));
  EXPECT_TRUE(IsConstInt(x * 0, 0));
}

TEST(Op, PromotesLiteralToOperandType) {
  Var f("f", DataType::Float(32));
  Expr e = f + 1;
  EXPECT_EQ(e.dtype(), DataType::Float(32));
}

TEST(Op, NegatesANonConstantAsZeroMinusIt) {
  Var f("f", DataType::Float(32));
  Expr e = -Expr(f);
  EXPECT_EQ(e.dtype(), DataType::Float(32));
  const auto* sub = e.as<SubNode>();
  ASSERT_NE(sub, nullptr);
  EXPECT_TRUE(sub->b.same_as(f));
}

TEST(Op, RejectsMixedNonLiteralTypes) {
  Var f("f", DataType::Float(32));
  Var i("i");
  EXPECT_THROW(f + i, InternalError);
}

class CountVars : public StmtVisitor {
 public:
  int count = 0;
  void VisitExpr_(const VarNode*) override { ++count; }
};

TEST(Functor, MutatorSharesUnchangedTree) {
  Buffer a("A", DataType::Float(32), {16});
  Var i("i");
  Stmt body = MakeBufferStore(a, MakeBufferLoad(a, {i}) + 1.0f, {i});
  Stmt loop = MakeFor(i, 0, 16, ForKind::kSerial, body);
  StmtMutator identity;
  EXPECT_TRUE(identity.VisitStmt(loop).same_as(loop));
  CountVars counter;
  counter.VisitStmt(loop);
  EXPECT_EQ(counter.count, 2);
}

}  // namespace
}  // namespace tirtune
