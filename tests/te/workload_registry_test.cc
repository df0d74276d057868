// The workload registry: every definition is consistent with itself, and specs that name no
// valid workload are rejected with a message that says what is wrong.
#include "tirtune/te/workload_registry.h"

#include <gtest/gtest.h>

#include <set>

#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// The message of the UserError that building `spec` throws ("" when none is thrown).
std::string ErrorOf(const std::string& spec) {
  try {
    MakeWorkload(spec);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(WorkloadRegistry, DefinitionsAreConsistent) {
  std::set<std::string> names;
  for (const WorkloadDef& def : AllWorkloads()) {
    SCOPED_TRACE(def.name);
    EXPECT_TRUE(names.insert(def.name).second) << "duplicate name";
    size_t params = std::count(def.params.begin(), def.params.end(), ',') + 1;
    EXPECT_EQ(params, def.max_args);
    EXPECT_LE(def.min_args, def.max_args);
    EXPECT_FALSE(def.summary.empty());
    EXPECT_GE(def.small_shape.size(), def.min_args);
    EXPECT_LE(def.small_shape.size(), def.max_args);
    for (const auto& shape : def.benchmark_shapes) {
      EXPECT_GE(shape.size(), def.min_args);
      EXPECT_LE(shape.size(), def.max_args);
    }
    EXPECT_EQ(FindWorkload(def.name), &def);
  }
}

TEST(WorkloadRegistry, CoversTheBenchmarkSuite) {
  for (const char* name :
       {"gemm", "batch_matmul", "conv1d", "conv2d", "conv3d", "depthwise_conv2d",
        "conv2d_transpose", "capsule_conv2d", "norm", "softmax", "cbr", "tbg", "mbg"}) {
    const WorkloadDef* def = FindWorkload(name);
    ASSERT_NE(def, nullptr) << name;
    EXPECT_FALSE(def->benchmark_shapes.empty()) << name;
  }
  EXPECT_EQ(FindWorkload("conv2d")->benchmark_shapes.size(), 8u);  // C2D, GRP and DIL rows
}

TEST(WorkloadRegistry, SpecBuildsANamedFunctionWithItsFlops) {
  Workload w = MakeWorkload("gemm:64,32,16");
  EXPECT_EQ(w.spec, "gemm:64,32,16");
  EXPECT_EQ(w.func->name, "gemm");
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 64 * 32 * 16);
  ASSERT_EQ(w.func->params.size(), 3u);
  EXPECT_EQ(w.func->params[0]->name, "A");
  EXPECT_EQ(w.func->params[2]->name, "C");
}

TEST(WorkloadRegistry, SpecIsNormalized) {
  EXPECT_EQ(MakeWorkload(" gemm : 8, 8 ,8 ").spec, "gemm:8,8,8");
}

TEST(WorkloadRegistry, OptionalArgumentsMayBeOmitted) {
  Workload plain = MakeWorkload("conv2d:1,8,8,4,4,3,1,1");
  Workload grouped = MakeWorkload("conv2d:1,8,8,4,4,3,1,1,1,2");
  EXPECT_DOUBLE_EQ(grouped.flops * 2, plain.flops);
}

TEST(WorkloadRegistry, PaddingMayBeZero) {
  EXPECT_NO_THROW(MakeWorkload("conv2d:1,8,8,4,4,1,1,0"));
}

TEST(WorkloadRegistry, UnknownNameIsRejectedWithTheKnownNames) {
  std::string error = ErrorOf("gem:1,2,3");
  EXPECT_NE(error.find("unknown name 'gem'"), std::string::npos) << error;
  EXPECT_NE(error.find("gemm"), std::string::npos) << error;
}

TEST(WorkloadRegistry, WrongArgumentCountIsRejected) {
  EXPECT_NE(ErrorOf("gemm:1,2").find("takes 3 arguments (M,N,K), got 2"), std::string::npos)
      << ErrorOf("gemm:1,2");
  EXPECT_NE(ErrorOf("gemm").find("got 0"), std::string::npos);
  EXPECT_NE(ErrorOf("conv2d:1,2,3").find("8 to 10"), std::string::npos) << ErrorOf("conv2d:1,2,3");
}

TEST(WorkloadRegistry, NonIntegerArgumentIsRejected) {
  for (const char* spec : {"gemm:1,x,3", "gemm:1,2.5,3", "gemm:1,,3", "gemm:1,2,3abc"}) {
    EXPECT_NE(ErrorOf(spec).find("not an integer"), std::string::npos) << spec << ErrorOf(spec);
  }
}

TEST(WorkloadRegistry, NonPositiveArgumentIsRejected) {
  EXPECT_NE(ErrorOf("gemm:1,0,3").find("argument 2 (N) must be positive"), std::string::npos)
      << ErrorOf("gemm:1,0,3");
  EXPECT_NE(ErrorOf("gemm:1,-4,3").find("must be positive"), std::string::npos);
  EXPECT_NE(ErrorOf("conv2d:1,8,8,4,4,3,1,-1").find("non-negative"), std::string::npos);
}

TEST(WorkloadRegistry, InvalidCombinationIsRejected) {
  EXPECT_NE(ErrorOf("conv2d:1,8,8,6,8,3,1,1,1,4").find("not divisible by 4 groups"),
            std::string::npos)
      << ErrorOf("conv2d:1,8,8,6,8,3,1,1,1,4");
  EXPECT_NE(ErrorOf("conv2d:1,8,8,4,6,3,1,1,1,4").find("not divisible"), std::string::npos);
  EXPECT_NE(ErrorOf("conv2d:1,2,2,4,4,7,1,0").find("does not fit"), std::string::npos)
      << ErrorOf("conv2d:1,2,2,4,4,7,1,0");
  EXPECT_FALSE(ErrorOf("max_pool2d:1,2,2,4,3,1,5").empty());
  EXPECT_FALSE(ErrorOf("conv2d_transpose:1,4,4,4,4,3,2,3").empty());
}

}  // namespace
}  // namespace tirtune
