// EstimateFlops against the exact counts the operator library knows.
#include <gtest/gtest.h>

#include "tirtune/ir/flop_count.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

TEST(EstimateFlops, GemmCountsAMultiplyAddAsTwo) {
  Workload w = MakeWorkload("gemm:16,8,4");
  EXPECT_EQ(EstimateFlops(w.func), 2.0 * 16 * 8 * 4);
  EXPECT_EQ(EstimateFlops(w.func), w.flops);
}

TEST(EstimateFlops, ConvolutionMatchesTheLibraryCount) {
  Workload w = MakeWorkload("conv2d:1,8,8,4,4,3,1,1");
  // The padding stage's select and clamps are not float arithmetic; the convolution is.
  EXPECT_EQ(EstimateFlops(w.func), w.flops);
}

}  // namespace
}  // namespace tirtune
