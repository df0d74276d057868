// VerifyWellFormed: each rule of ir/verify.h, broken once.
#include "tirtune/ir/verify.h"

#include <gtest/gtest.h>

#include "tirtune/ir/op.h"

namespace tirtune {
namespace {

// A[i] = B[i] + 1 for i in [0, 8), as one block under a root block.
struct Fixture {
  Buffer a{"A", DataType::Float(32), {8}};
  Buffer b{"B", DataType::Float(32), {8}};
  Var i{"i"};
  Var vi{"vi"};

  Stmt Root(Stmt body, std::vector<Buffer> allocs = {}) {
    Block root = MakeBlock("root", {}, {}, {}, std::move(body), Stmt(), std::move(allocs));
    return MakeBlockRealize({}, Bool(true), root);
  }
  Stmt Compute(Expr value_index, std::vector<BufferRegion> reads, std::vector<BufferRegion> writes,
               Expr binding) {
    Stmt store = MakeBufferStore(a, MakeBufferLoad(b, {value_index}) + 1.0f, {vi});
    Block blk = MakeBlock("A", {IterVar{vi, Range{0, 8}, IterKind::kSpatial}}, std::move(reads),
                          std::move(writes), store);
    return MakeFor(i, 0, 8, ForKind::kSerial, MakeBlockRealize({binding}, Bool(true), blk));
  }
  PrimFunc Func(Stmt body) { return PrimFunc("f", {b, a}, Root(std::move(body))); }
};

bool HasError(const std::vector<std::string>& errors, const std::string& needle) {
  for (const std::string& e : errors) {
    if (e.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(VerifyWellFormed, AcceptsWellFormedFunction) {
  Fixture f;
  PrimFunc func = f.Func(
      f.Compute(f.vi, {BufferRegion::Point(f.b, {f.vi})}, {BufferRegion::Point(f.a, {f.vi})}, f.i));
  EXPECT_TRUE(VerifyWellFormed(func).empty());
}

TEST(VerifyWellFormed, RejectsOuterLoopVariableInsideBlock) {
  Fixture f;
  PrimFunc func = f.Func(
      f.Compute(f.i, {BufferRegion::Point(f.b, {f.i})}, {BufferRegion::Point(f.a, {f.vi})}, f.i));
  EXPECT_TRUE(HasError(VerifyWellFormed(func), "uses outer variable 'i' directly"));
}

TEST(VerifyWellFormed, RejectsUndefinedVariable) {
  Fixture f;
  Var stray("stray");
  PrimFunc func = f.Func(f.Compute(f.vi, {BufferRegion::Point(f.b, {f.vi})},
                                   {BufferRegion::Point(f.a, {f.vi})}, stray));
  EXPECT_TRUE(HasError(VerifyWellFormed(func), "variable 'stray' is used but not defined"));
}

TEST(VerifyWellFormed, RejectsUndeclaredRead) {
  Fixture f;
  PrimFunc func = f.Func(f.Compute(f.vi, {}, {BufferRegion::Point(f.a, {f.vi})}, f.i));
  EXPECT_TRUE(HasError(VerifyWellFormed(func), "reads buffer 'B' without declaring it"));
}

TEST(VerifyWellFormed, RejectsUndeclaredWrite) {
  Fixture f;
  PrimFunc func = f.Func(f.Compute(f.vi, {BufferRegion::Point(f.b, {f.vi})}, {}, f.i));
  EXPECT_TRUE(HasError(VerifyWellFormed(func), "writes buffer 'A' without declaring it"));
}

TEST(VerifyWellFormed, RejectsBufferOutOfScope) {
  Fixture f;
  Buffer other("Other", DataType::Float(32), {8});
  Stmt store = MakeBufferStore(other, 0.0f, {0});
  PrimFunc func = f.Func(store);
  EXPECT_TRUE(HasError(VerifyWellFormed(func), "buffer 'Other' is used but not defined"));
}

TEST(VerifyWellFormed, RejectsDuplicateBlockNames) {
  Fixture f;
  Stmt one =
      f.Compute(f.vi, {BufferRegion::Point(f.b, {f.vi})}, {BufferRegion::Point(f.a, {f.vi})}, f.i);
  Var j("j");
  Var vj("vj");
  Stmt store = MakeBufferStore(f.a, MakeBufferLoad(f.b, {vj}), {vj});
  Block blk = MakeBlock("A", {IterVar{vj, Range{0, 8}, IterKind::kSpatial}},
                        {BufferRegion::Point(f.b, {vj})}, {BufferRegion::Point(f.a, {vj})}, store);
  Stmt two = MakeFor(j, 0, 8, ForKind::kSerial, MakeBlockRealize({j}, Bool(true), blk));
  PrimFunc func = f.Func(MakeSeq({one, two}));
  EXPECT_TRUE(HasError(VerifyWellFormed(func), "block name 'A' is used twice"));
}

TEST(VerifyWellFormed, RejectsNonPositiveExtent) {
  Fixture f;
  Var k("k");
  PrimFunc func = f.Func(MakeFor(k, 0, 0, ForKind::kSerial, MakeEvaluate(0)));
  EXPECT_TRUE(HasError(VerifyWellFormed(func), "non-positive extent 0"));
}

}  // namespace
}  // namespace tirtune
