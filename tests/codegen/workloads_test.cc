// Every workload of the registry, lowered unscheduled (include/tirtune/lower/lower.h) and
// compiled for the host, computes what the interpreter computes on the block-form function.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "differential.h"
#include "tirtune/lower/lower.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/schedule/trace.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::test_codegen {
namespace {

std::string Spec(const WorkloadDef& def) {
  std::string spec = def.name + ":";
  for (size_t i = 0; i < def.small_shape.size(); ++i) {
    spec += (i ? "," : "") + std::to_string(def.small_shape[i]);
  }
  return spec;
}

TEST(CodegenWorkloads, EveryWorkloadMatchesTheInterpreter) {
  for (const WorkloadDef& def : AllWorkloads()) {
    std::string spec = Spec(def);
    SCOPED_TRACE(spec);
    Workload w = MakeWorkload(spec);
    PrimFunc lowered = Lower(w.func);
    std::unique_ptr<Kernel> kernel;
    ASSERT_NO_THROW(kernel = JitCompile(lowered, Target::Host())) << Print(lowered);
    std::vector<NDArray> expected = RandomArgs(w.func, 7);
    std::vector<NDArray> actual = CopyAll(expected);
    Interpret(w.func, expected);
    ASSERT_EQ(kernel->Run(actual), 0);
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_TRUE(AllClose(expected[i], actual[i], /*rtol=*/1e-4, /*atol=*/1e-4))
          << "parameter " << i << " of " << spec << "; lowered:\n"
          << Print(lowered);
    }
  }
}

// gemm with a parallel outer loop, a vectorized inner loop and an unrolled middle loop: what a
// tuned schedule looks like after lowering (parallel outlining, vector code, pragmas).
TEST(CodegenWorkloads, ScheduledGemmMatchesTheInterpreter) {
  Workload w = MakeWorkload("gemm:64,48,32");
  Schedule sch(w.func);
  BlockRV c = sch.GetBlock("C");
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> j = sch.Split(loops[1], {std::monostate(), int64_t{16}});
  std::vector<LoopRV> k = sch.Split(loops[2], {std::monostate(), int64_t{4}});
  sch.Reorder({loops[0], j[0], k[0], k[1], j[1]});
  sch.Parallel(loops[0]);
  sch.Unroll(k[1]);
  sch.Vectorize(j[1]);
  PrimFunc lowered = Lower(sch.func());
  std::string ir = EmitLLVMIR(lowered, Target::Host(), /*optimized=*/false);
  EXPECT_NE(ir.find("@tirtune_parallel_for"), std::string::npos);
  EXPECT_NE(ir.find("<16 x float>"), std::string::npos);
  std::unique_ptr<Kernel> kernel = JitCompile(lowered, Target::Host());
  std::vector<NDArray> expected = RandomArgs(w.func, 3);
  std::vector<NDArray> actual = CopyAll(expected);
  Interpret(w.func, expected);
  ASSERT_EQ(kernel->Run(actual), 0);
  EXPECT_TRUE(AllClose(expected[2], actual[2], 1e-4, 1e-4)) << Print(lowered);
}

// A tuned candidate whose cache write is copied out by a rolled loop of 64 one-load-one-store
// iterations in a 7 x 28 nest. O3 alone unrolls the whole nest into thousands of scalar copies
// that the SLP vectorizer then takes minutes to regroup (this candidate: over two minutes in
// the tuner's builder); with LLVM's full unrolling capped the copy stays a loop for the loop
// vectorizer, and the optimized function stays small.
TEST(CodegenWorkloads, RolledCopyOutOfACacheWriteIsNotUnrolledIntoScalars) {
  std::ifstream in(std::string(TIRTUNE_TEST_DATA_DIR) + "/traces/conv2d_g4_rolled_copy_out.json");
  ASSERT_TRUE(in.good());
  Workload w = MakeWorkload("conv2d:1,56,56,64,128,3,2,1,1,4");
  Schedule sch(w.func);
  Trace::FromJson(nlohmann::json::parse(in)).ApplyTo(sch);
  std::string ir = EmitLLVMIR(Lower(sch.func()), Target::Parse("llvm -mcpu=znver5"),
                              /*optimized=*/true);
  size_t lines = std::count(ir.begin(), ir.end(), '\n');
  EXPECT_LT(lines, 20000u);
}

}  // namespace
}  // namespace tirtune::test_codegen
