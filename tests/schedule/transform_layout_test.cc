// transform_layout and the packed layouts it stores weights in: packing is a permutation of
// the elements (plus zero padding) that unpacking inverts, every access reads the element the
// function read before, the preconditions are refused by number, and the trace replays.
#include "schedule_check.h"
#include "tirtune/interp/interpreter.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

const char* kDense = R"(@prim_func
def dense(X: Buffer((4, 6), float32), W: Buffer((10, 6), float32), Y: Buffer((4, 10), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(4):
            for j in range(10):
                for k in range(6):
                    with block("Y"):
                        vi = axis.spatial(4, i)
                        vj = axis.spatial(10, j)
                        vk = axis.reduce(6, k)
                        reads(X[vi, vk], W[vj, vk])
                        writes(Y[vi, vj])
                        with init():
                            Y[vi, vj] = 0.0
                        Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
)";

// W[j, k] as [j / 4, k, j % 4]: the outer digit of j covers 10 with 3 x 4 (two padding rows).
PackedLayout TiledRows() { return PackedLayout{{10, 6}, {{0, 4, 3}, {1, 1, 6}, {0, 1, 4}}}; }

TEST(PackedLayout, PacksAsAPermutationWithZeroPaddingAndUnpacksBack) {
  PackedLayout layout = TiledRows();
  layout.Check();
  EXPECT_EQ(layout.PackedShape(), (std::vector<int64_t>{3, 6, 4}));
  EXPECT_FALSE(layout.IsIdentity());
  NDArray w = NDArray::Empty({10, 6}, DataType::Float(32));
  for (int64_t i = 0; i < w.size(); ++i) w.SetDouble(i, static_cast<double>(i + 1));
  NDArray p = layout.Pack(w);
  // Element (j, k) = j * 6 + k + 1 lands at [j / 4, k, j % 4].
  for (int64_t j = 0; j < 10; ++j) {
    for (int64_t k = 0; k < 6; ++k) {
      EXPECT_EQ(p.GetDouble((j / 4) * 24 + k * 4 + j % 4), static_cast<double>(j * 6 + k + 1));
    }
  }
  // Rows 10 and 11 of the last tile are padding.
  for (int64_t k = 0; k < 6; ++k) {
    EXPECT_EQ(p.GetDouble(2 * 24 + k * 4 + 2), 0.0);
    EXPECT_EQ(p.GetDouble(2 * 24 + k * 4 + 3), 0.0);
  }
  NDArray back = layout.Unpack(p);
  for (int64_t i = 0; i < w.size(); ++i) EXPECT_EQ(back.GetDouble(i), w.GetDouble(i));
  // The JSON form reads back to the same layout.
  EXPECT_EQ(PackedLayout::FromJson(layout.ToJson(), "test"), layout);
}

TEST(PackedLayout, TheSourceOrderIsTheIdentity) {
  EXPECT_TRUE((PackedLayout{{10, 6}, {{0, 1, 10}, {1, 1, 6}}}.IsIdentity()));
  // Digits of one axis in order, no padding: the same memory order.
  EXPECT_TRUE((PackedLayout{{8, 6}, {{0, 4, 2}, {0, 1, 4}, {1, 1, 6}}}.IsIdentity()));
  EXPECT_FALSE((PackedLayout{{10, 6}, {{1, 1, 6}, {0, 1, 10}}}.IsIdentity()));
}

TEST(PackedLayout, RefusesDigitsThatDoNotCoverAnAxisExactlyOnce) {
  auto refused = [](const PackedLayout& layout, const std::string& text) {
    try {
      layout.Check();
      ADD_FAILURE() << "accepted; expected: " << text;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  refused(PackedLayout{{10, 6}, {{0, 1, 10}}}, "axis 1 (extent 6) has no packed dimension");
  refused(PackedLayout{{10, 6}, {{0, 2, 5}, {1, 1, 6}}}, "divides by 2, not 1");
  refused(PackedLayout{{10, 6}, {{0, 5, 2}, {0, 1, 4}, {1, 1, 6}}}, "do not nest");
  refused(PackedLayout{{10, 6}, {{0, 4, 4}, {0, 1, 4}, {1, 1, 6}}}, "does not cover");
  refused(PackedLayout{{10, 6}, {{0, 1, 9}, {1, 1, 6}}}, "does not cover");
  refused(PackedLayout{{10, 6}, {{2, 1, 10}, {1, 1, 6}}}, "names axis 2");
  EXPECT_THROW(PackedLayout::FromJson("{\"dims\": 3}", "test"), UserError);
}

TEST(TransformLayout, ReadsEveryElementFromItsPackedPlace) {
  PrimFunc f = ParseFunc(kDense);
  Schedule sch(f);
  sch.TransformLayout(1, TiledRows());
  const PrimFunc& g = sch.func();
  ASSERT_EQ(g->params[1]->shape.size(), 3u);
  std::map<int, PackedLayout> packed = PackedParams(g);
  ASSERT_EQ(packed.size(), 1u);
  EXPECT_EQ(packed.at(1), TiledRows());
  // The interpreter draws W at its source shape and packs it; the numbers are the function's.
  ExpectSameNumbers(f, g);
  ExpectTraceRoundTrip(sch, f);
}

TEST(TransformLayout, PacksTwiceOnlyOnce) {
  PrimFunc f = ParseFunc(kDense);
  Schedule sch(f);
  sch.TransformLayout(1, TiledRows());
  ExpectScheduleError(sch, "TransformLayoutError", "packed already",
                      [&] { sch.TransformLayout(1, TiledRows()); });
}

TEST(TransformLayout, RefusesEachPreconditionByName) {
  PrimFunc f = ParseFunc(kDense);
  Schedule sch(f);
  ExpectScheduleError(sch, "TransformLayoutError", "has 3 parameters",
                      [&] { sch.TransformLayout(3, TiledRows()); });
  ExpectScheduleError(sch, "TransformLayoutError", "'Y' is written", [&] {
    sch.TransformLayout(2, PackedLayout{{4, 10}, {{1, 1, 10}, {0, 1, 4}}});
  });
  ExpectScheduleError(sch, "TransformLayoutError", "has shape (4, 6)",
                      [&] { sch.TransformLayout(0, TiledRows()); });
  ExpectScheduleError(sch, "TransformLayoutError", "does not cover", [&] {
    sch.TransformLayout(1, PackedLayout{{10, 6}, {{0, 1, 9}, {1, 1, 6}}});
  });
}

TEST(TransformLayout, CheckOnlyChangesNothing) {
  PrimFunc f = ParseFunc(kDense);
  Schedule sch(f);
  EXPECT_TRUE(sch.CanApply([](Schedule& s) { s.TransformLayout(1, TiledRows()); }));
  EXPECT_FALSE(sch.CanApply([](Schedule& s) { s.TransformLayout(2, TiledRows()); }));
  EXPECT_TRUE(sch.func().same_as(f));
  EXPECT_TRUE(sch.trace().insts().empty());
}

TEST(TransformLayout, AMalformedLayoutInATraceIsRefusedByName) {
  nlohmann::json trace = {
      {"format", "tirtune-trace"},
      {"version", 1},
      {"insts",
       {{{"kind", "TransformLayout"},
         {"v", 1},
         {"inputs", nlohmann::json::array()},
         {"outputs", nlohmann::json::array()},
         {"attrs", {{"param_index", 1}, {"layout", {{"source_shape", {10, 6}}, {"dims", 7}}}}}}}}};
  try {
    Trace::FromJson(trace);
    ADD_FAILURE() << "a malformed layout was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("layout"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tirtune
