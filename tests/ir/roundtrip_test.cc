// Printing then parsing gives back a structurally equal function with the same structural hash,
// for functions built here with the IR factories (docs/TEXT_FORMAT.md: "Printing then parsing
// gives a structurally equal function").
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tirtune/ir/function.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune {
namespace {

// Prints `f`, parses the text back and checks that the result matches `f` in every way the
// format promises: structural equality, the hash, and the printed text itself.
void ExpectRoundTrip(const PrimFunc& f) {
  for (bool canonical : {false, true}) {
    PrintOptions options;
    options.canonical_names = canonical;
    std::string text = Print(f, options);
    PrimFunc parsed;
    try {
      parsed = ParsePrimFunc(text, "printed.tir");
    } catch (const ParseError& e) {
      FAIL() << e.what() << "\nin:\n" << text;
    }
    std::optional<std::string> diff = StructuralDiff(f, parsed);
    EXPECT_FALSE(diff.has_value()) << *diff << "\nprinted:\n"
                                   << text << "\nreprinted:\n"
                                   << Print(parsed, options);
    EXPECT_TRUE(StructuralEqual(f, parsed));
    EXPECT_EQ(StructuralHash(f), StructuralHash(parsed)) << text;
    EXPECT_EQ(Print(parsed, options), text);
  }
}

Stmt Block(const std::string& name, std::vector<IterVar> iters, std::vector<Expr> bindings,
           std::vector<BufferRegion> reads, std::vector<BufferRegion> writes, Stmt body,
           Stmt init = Stmt(), std::vector<Buffer> allocs = {}, Annotations annotations = {},
           Expr predicate = Bool(true)) {
  return MakeBlockRealize(
      std::move(bindings), std::move(predicate),
      MakeBlock(name, std::move(iters), std::move(reads), std::move(writes), std::move(body),
                std::move(init), std::move(allocs), std::move(annotations)));
}

Stmt Root(Stmt body, std::vector<Buffer> allocs = {}) {
  return Block("root", {}, {}, {}, {}, std::move(body), Stmt(), std::move(allocs));
}

IterVar Spatial(const Var& v, Expr extent) { return {v, Range{0, extent}, IterKind::kSpatial}; }
IterVar Reduce(const Var& v, Expr extent) { return {v, Range{0, extent}, IterKind::kReduce}; }

Stmt Loop(const Var& v, Expr extent, Stmt body, ForKind kind = ForKind::kSerial,
          std::string thread = "") {
  Expr min = IntImm(extent.dtype(), 0);
  return MakeFor(v, min, extent, kind, std::move(body), std::move(thread));
}

PrimFunc Gemm() {
  Buffer a("A", DataType::Float(32), {64, 32});
  Buffer b("B", DataType::Float(32), {32, 16});
  Buffer c("C", DataType::Float(32), {64, 16});
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
  Stmt init = MakeBufferStore(c, 0.0f, {vi, vj});
  Stmt update = MakeBufferStore(
      c, MakeBufferLoad(c, {vi, vj}) + MakeBufferLoad(a, {vi, vk}) * MakeBufferLoad(b, {vk, vj}),
      {vi, vj});
  Stmt block = Block("C", {Spatial(vi, 64), Spatial(vj, 16), Reduce(vk, 32)}, {i, j, k},
                     {BufferRegion::Point(a, {vi, vk}), BufferRegion::Point(b, {vk, vj})},
                     {BufferRegion::Point(c, {vi, vj})}, update, init);
  Stmt loops = Loop(i, 64, Loop(j, 16, Loop(k, 32, block)));
  return PrimFunc("gemm", {a, b, c}, Root(loops));
}

TEST(RoundTrip, Gemm) { ExpectRoundTrip(Gemm()); }

TEST(RoundTrip, MultiBlockWithAllocBufferAndThreads) {
  Buffer a("A", DataType::Float(16), {128});
  Buffer c("C", DataType::Float(16), {128});
  Buffer shared = Buffer("A_shared", DataType::Float(16), {128}, StorageScope::kShared);
  Var bx("bx"), tx("tx"), v("v"), i("i"), vi("vi");
  Stmt copy =
      Block("A_shared", {Spatial(v, 128)}, {bx * 32 + tx}, {BufferRegion::Point(a, {v})},
            {BufferRegion::Point(shared, {v})},
            MakeBufferStore(shared, MakeBufferLoad(a, {v}), {v}), Stmt(), {},
            {{"meta_schedule.tiling", StringImm("SSR")}, {"unroll", Expr(16)}}, bx * 32 + tx < 128);
  Stmt compute = Block(
      "C", {IterVar{vi, Range{4, 124}, IterKind::kSpatial}}, {i}, {BufferRegion::Full(shared)},
      {BufferRegion{c, {Range{vi, 1}}}},
      MakeBufferStore(c, MakeBufferLoad(shared, {vi}) * FloatImm(DataType::Float(16), 0.5), {vi}));
  Annotations pragma = {{"pragma_auto_unroll_max_step", Expr(64)},
                        {"ratio", FloatImm(DataType::Float(64), 0.1)}};
  Stmt body = MakeSeq({Loop(bx, 4, Loop(tx, 32, copy, ForKind::kThreadBinding, "threadIdx.x"),
                            ForKind::kThreadBinding, "blockIdx.x"),
                       MakeFor(i, 4, 124, ForKind::kParallel, compute, "", pragma)});
  // The root block allocates the buffer and its writes region names it.
  Stmt root = MakeBlockRealize(
      {}, Bool(true),
      MakeBlock("root", {}, {}, {BufferRegion::Full(shared)}, body, Stmt(), {shared}));
  ExpectRoundTrip(PrimFunc("staged", {a, c}, root, {{"global_symbol", StringImm("staged")}}));
}

TEST(RoundTrip, RegionForms) {
  Buffer a("A", DataType::Float(32), {16, 16, 16, 16});
  Buffer b("B", DataType::Float(32), {16});
  Var i("i"), vi("vi"), n("n", DataType::Int(32)), m("m", DataType::Int(32));
  std::vector<BufferRegion> reads = {
      BufferRegion{a, {Range{2, 4}, Range{0, vi}, Range{vi * 2, vi + 1}, Range{vi, 3}}},
      BufferRegion::Full(b),
  };
  // int32 bounds, with an int64 extent of 1 (as BufferRegion::Point builds for an int32 index).
  Stmt inner = Block(
      "I", {Spatial(vi, 4)}, {i}, reads,
      {BufferRegion{
          a, {Range{Cast(DataType::Int(64), m), 1}, Range{m, 1}, Range{1, vi}, Range{vi - 1, vi}}}},
      MakeEvaluate(0));
  Stmt body = Loop(n, IntImm(DataType::Int(32), 4),
                   Loop(m, IntImm(DataType::Int(32), 4), Loop(i, 4, inner)));
  ExpectRoundTrip(PrimFunc("regions", {a, b}, Root(body)));
}

TEST(RoundTrip, LoweredStatementsAndExpressions) {
  Buffer a("A", DataType::Float(32), {64});
  Buffer idx("Idx", DataType::Int(8), {64});
  Buffer h("H", DataType::Float(64), {8}, StorageScope::kGlobal);
  Var i("i"), n("n"), x("x", DataType::Float(32)), t("t");
  Buffer local("local", DataType::Float(32), {4}, StorageScope::kLocal);
  Expr load = MakeBufferLoad(a, {i});
  Expr vec = MakeBufferLoad(a, {MakeRamp(i * 4, 1, 4)});
  std::vector<Stmt> seq = {
      MakeBufferStore(a, Select(i < 8 || !(i >= 60), Exp(load), Pow(load, 2.0f)), {i}),
      MakeBufferStore(a,
                      MakeCall(Intrinsic::kFma, {load, load, FloatImm(DataType::Float(32), -1.5)}),
                      {FloorMod(i + 1, 64)}),
      MakeBufferStore(a, vec + MakeBroadcast(1.0f, 4), {MakeRamp(i * 4, 1, 4)}),
      MakeBufferStore(idx, IntImm(DataType::Int(8), -1), {FloorDiv(i, 2)}),
      MakeBufferStore(a,
                      MakeCast(DataType::Float(32), MakeBufferLoad(idx, {i})) +
                          MakeCast(DataType::Float(32), IntImm(DataType::Int(32), 3)),
                      {i}),
      MakeBufferStore(h,
                      MakeLet(x, load, MakeCast(DataType::Float(64), x * x)) /
                          FloatImm(DataType::Float(64), 3.0),
                      {0}),
      MakeIfThenElse(Eq(i, n) && Ne(i, 0), MakeBufferStore(local, load, {0}),
                     MakeBufferStore(local, Min(load, Max(load, 0.25f)), {1})),
      MakeBufferStore(a,
                      MakeBinary(NodeKind::kSub, MakeBinary(NodeKind::kSub, load, load),
                                 MakeBinary(NodeKind::kSub, load, load)),
                      {i}),
      MakeBufferStore(a, MakeBinary(NodeKind::kSub, FloatImm(DataType::Float(32), 0), load), {i}),
      MakeEvaluate(MakeBinary(NodeKind::kMul, MakeBinary(NodeKind::kAdd, i, n), Expr(-3))),
  };
  Stmt body =
      MakeFor(i, 0, 64, ForKind::kSerial, MakeAllocate(local, MakeLetStmt(n, i * 2, MakeSeq(seq))));
  ExpectRoundTrip(PrimFunc("lowered", {a, idx, h}, MakeLetStmt(t, 1, body)));
}

TEST(RoundTrip, LiteralsOfEveryType) {
  Buffer a("A", DataType::Float(32), {1});
  std::vector<Stmt> stores;
  auto store = [&](DataType t, Expr value) {
    Buffer buf("B", t, {1});
    stores.push_back(MakeAllocate(buf, MakeBufferStore(buf, value, {0})));
  };
  store(DataType::Float(32), FloatImm(DataType::Float(32), static_cast<float>(0.1)));
  store(DataType::Float(32), FloatImm(DataType::Float(32), std::numeric_limits<float>::max()));
  store(DataType::Float(32), FloatImm(DataType::Float(32), 1e-05f));
  store(DataType::Float(32),
        FloatImm(DataType::Float(32), -std::numeric_limits<float>::infinity()));
  store(DataType::Float(32), FloatImm(DataType::Float(32), std::nanf("")));
  store(DataType::Float(64), FloatImm(DataType::Float(64), 0.1));
  store(DataType::Float(64), FloatImm(DataType::Float(64), 1e300));
  store(DataType::Float(16), FloatImm(DataType::Float(16), 1.0));
  store(DataType::BFloat16(), FloatImm(DataType::BFloat16(), -2.5));
  store(DataType::Int(64), IntImm(DataType::Int(64), std::numeric_limits<int64_t>::min()));
  store(DataType::Int(64), IntImm(DataType::Int(64), std::numeric_limits<int64_t>::max()));
  store(DataType::Int(32), IntImm(DataType::Int(32), -2147483648LL));
  store(DataType::UInt(8), IntImm(DataType::UInt(8), 255));
  store(DataType::Bool(), Bool(false));
  store(DataType::Int(8), MakeCast(DataType::Int(8), Expr(7)));
  ExpectRoundTrip(PrimFunc("literals", {a}, MakeSeq(stores)));
}

TEST(RoundTrip, ClashingAndReservedNames) {
  // Two variables named "i" in one scope, and names that are words of the format.
  Buffer a("A", DataType::Float(32), {4, 4});
  Buffer in_buffer("in", DataType::Float(32), {4});
  Var i1("i"), i2("i"), f32("float32"), mn("min");
  Stmt body =
      MakeBufferStore(a, MakeBufferLoad(in_buffer, {i1}) + MakeBufferLoad(a, {f32, mn}), {i1, i2});
  body = Loop(mn, 4, Loop(f32, 4, body));
  body = Loop(i1, 4, Loop(i2, 4, body));
  ExpectRoundTrip(PrimFunc("names", {a, in_buffer}, body));
}

TEST(RoundTrip, BufferSpecs) {
  auto node = MakeObject<BufferNode>();
  node->name = "S";
  node->dtype = DataType::Float(32);
  node->shape = {Expr(4), Expr(8)};
  node->strides = {Expr(16), Expr(1)};
  node->align = 16;
  Buffer strided{ObjectPtr<const BufferNode>(node)};
  Buffer scalar("Z", DataType::Int(32), {});
  Stmt body =
      MakeBufferStore(strided, MakeCast(DataType::Float(32), MakeBufferLoad(scalar, {})), {1, 2});
  ExpectRoundTrip(PrimFunc("specs", {strided, scalar}, body));
}

}  // namespace
}  // namespace tirtune
