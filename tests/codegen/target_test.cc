// Target strings: defaults come from the host, options parse and print back, and every kind of
// mistake is a UserError that names the offending token; which of a target's features the host
// lacks. CUDA targets: limits from the arch, overrides, the launcher's host target, and code
// that needs a CPU target refusing them.
#include "tirtune/codegen/target.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tirtune/support/error.h"

namespace tirtune {
namespace {

std::string ErrorOf(const std::string& text) {
  try {
    Target::Parse(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Target, BareLlvmIsTheHost) {
  Target t = Target::Parse("llvm");
  EXPECT_EQ(t, Target::Host());
  EXPECT_EQ(t.mcpu, HostCpuName());
  EXPECT_FALSE(t.mcpu.empty());
  EXPECT_EQ(t.num_cores, HostCoreCount());
  EXPECT_TRUE(t.mattr.empty());
}

TEST(Target, OptionsParseAndPrintBack) {
  Target t = Target::Parse("llvm -mcpu=skylake-avx512 -mattr=+avx2,-avx512f  -num-cores=3");
  EXPECT_EQ(t.kind, "llvm");
  EXPECT_EQ(t.mcpu, "skylake-avx512");
  EXPECT_EQ(t.mattr, "+avx2,-avx512f");
  EXPECT_EQ(t.num_cores, 3);
  EXPECT_EQ(t.str(), "llvm -mcpu=skylake-avx512 -mattr=+avx2,-avx512f -num-cores=3");
  EXPECT_EQ(Target::Parse(t.str()), t);
  EXPECT_EQ(Target::Parse("llvm -num-cores=2 -mcpu=znver5").str(),
            "llvm -mcpu=znver5 -num-cores=2");
}

TEST(Target, HostPrintsItsCpuAndCores) {
  Target host = Target::Host();
  EXPECT_EQ(host.str(),
            "llvm -mcpu=" + HostCpuName() + " -num-cores=" + std::to_string(HostCoreCount()));
  EXPECT_EQ(Target::Parse(host.str()), host);
}

TEST(Target, CodeForTheHostOrABaselineCpuRunsHereAndAForeignFeatureIsNamed) {
  EXPECT_TRUE(TargetFeaturesMissingOnHost(Target::Host()).empty());
  EXPECT_TRUE(TargetFeaturesMissingOnHost(Target::Parse("llvm -mcpu=x86-64")).empty());
  // An AMD CPU lacks Intel's AMX, an Intel CPU AMD's SSE4a: one of them is missing here.
  int missing_somewhere = 0;
  for (std::string feature : {"amx-tile", "sse4a"}) {
    std::vector<std::string> missing =
        TargetFeaturesMissingOnHost(Target::Parse("llvm -mcpu=x86-64 -mattr=+" + feature));
    if (missing.empty()) continue;
    ++missing_somewhere;
    EXPECT_NE(std::find(missing.begin(), missing.end(), feature), missing.end()) << feature;
  }
  EXPECT_GE(missing_somewhere, 1);
}

TEST(Target, ErrorsNameTheBadToken) {
  EXPECT_NE(ErrorOf("").find("empty target"), std::string::npos);
  EXPECT_NE(ErrorOf("rocm -arch=gfx90a").find("unknown target kind 'rocm'"), std::string::npos);
  EXPECT_NE(ErrorOf("llvm -mcpu=pentium9000").find("unknown CPU 'pentium9000'"), std::string::npos);
  EXPECT_NE(ErrorOf("llvm -mattr=+avx2,+warp_drive").find("unknown CPU feature 'warp_drive'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("llvm -mattr=avx2").find("bad feature 'avx2'"), std::string::npos);
  EXPECT_NE(ErrorOf("llvm -num-cores=0").find("bad core count '0'"), std::string::npos);
  EXPECT_NE(ErrorOf("llvm -num-cores=two").find("bad core count 'two'"), std::string::npos);
  EXPECT_NE(ErrorOf("llvm -num-cores=4x").find("bad core count '4x'"), std::string::npos);
  EXPECT_NE(ErrorOf("llvm -mcpu").find("'-mcpu' needs a value"), std::string::npos);
  EXPECT_NE(ErrorOf("llvm -mcpu=").find("'-mcpu=' needs a value"), std::string::npos);
  EXPECT_NE(ErrorOf("llvm -opt-level=3").find("unknown target option '-opt-level=3'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("llvm znver5").find("unknown target option 'znver5'"), std::string::npos);
  EXPECT_NE(ErrorOf("llvm -mcpu=znver5 -mcpu=znver4").find("'-mcpu' is given twice"),
            std::string::npos);
}

TEST(Target, ErrorMessagesQuoteTheWholeTarget) {
  EXPECT_NE(ErrorOf("llvm -mcpu=nope -num-cores=2").find("\"llvm -mcpu=nope -num-cores=2\""),
            std::string::npos);
}

TEST(CudaTarget, ArchGivesTheLimits) {
  Target t = Target::Parse("cuda -arch=sm_90");
  EXPECT_TRUE(t.is_cuda());
  EXPECT_EQ(t.arch, "sm_90");
  EXPECT_EQ(t.gpu.max_threads_per_block, 1024);
  EXPECT_EQ(t.gpu.max_shared_memory_per_block, 48 * 1024);
  EXPECT_EQ(t.gpu.max_dynamic_shared_memory_per_block, 227 * 1024);
  EXPECT_EQ(t.gpu.max_registers_per_thread, 255);
  EXPECT_EQ(t.gpu.max_registers_per_block, 65536);
  EXPECT_EQ(t.gpu.warp_size, 32);
  EXPECT_EQ(t.gpu.max_vthreads, 8);
  EXPECT_EQ(t.gpu.vector_bytes, 16);
  EXPECT_EQ(Target::Parse("cuda -arch=sm_80").gpu.max_dynamic_shared_memory_per_block, 163 * 1024);
  EXPECT_EQ(Target::Parse("cuda -arch=sm_89").gpu.max_dynamic_shared_memory_per_block, 99 * 1024);
  EXPECT_EQ(Target::Parse("cuda"), t) << "sm_90 is the default arch";
}

TEST(CudaTarget, PrintsCanonicallyAndParsesBack) {
  EXPECT_EQ(Target::Parse("cuda  -arch=sm_80").str(), "cuda -arch=sm_80");
  Target t = Target::Parse("cuda -vector-bytes=8 -arch=sm_89 -max-threads-per-block=512");
  EXPECT_EQ(t.gpu.max_threads_per_block, 512);
  EXPECT_EQ(t.gpu.vector_bytes, 8);
  EXPECT_EQ(t.str(), "cuda -arch=sm_89 -max-threads-per-block=512 -vector-bytes=8");
  EXPECT_EQ(Target::Parse(t.str()), t);
  // An override equal to the arch's limit changes nothing and is not printed.
  EXPECT_EQ(Target::Parse("cuda -arch=sm_90 -max-threads-per-block=1024").str(),
            "cuda -arch=sm_90");
}

TEST(CudaTarget, TheHostDefaultsToThisMachineAndIsPrintedOnlyWhenGiven) {
  Target t = Target::Parse("cuda -arch=sm_90");
  EXPECT_EQ(t.HostTarget(), Target::Host());
  EXPECT_FALSE(t.explicit_host);
  EXPECT_EQ(t.str(), "cuda -arch=sm_90") << "the database key does not name the tuning host";

  Target with_host = Target::Parse("cuda -arch=sm_90 -host=\"llvm -mcpu=x86-64 -num-cores=3\"");
  EXPECT_TRUE(with_host.explicit_host);
  EXPECT_EQ(with_host.HostTarget(), Target::Parse("llvm -mcpu=x86-64 -num-cores=3"));
  EXPECT_EQ(with_host.str(), "cuda -arch=sm_90 -host=\"llvm -mcpu=x86-64 -num-cores=3\"");
  EXPECT_EQ(Target::Parse(with_host.str()), with_host);
  EXPECT_EQ(Target::Parse("cuda -host=llvm").HostTarget(), Target::Host());
}

TEST(CudaTarget, ErrorsNameTheBadToken) {
  EXPECT_NE(ErrorOf("cuda -arch=sm_75").find("unknown CUDA arch 'sm_75'"), std::string::npos);
  EXPECT_NE(ErrorOf("cuda -arch=sm_90 -mcpu=znver5").find("unknown target option '-mcpu=znver5'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cuda -block=4").find("unknown target option '-block=4'"), std::string::npos);
  EXPECT_NE(ErrorOf("cuda -warp-size=64").find("unknown target option '-warp-size=64'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cuda -arch=sm_90 -arch=sm_80").find("'-arch' is given twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cuda -max-threads-per-block=2048")
                .find("bad value '2048' of -max-threads-per-block in target \"cuda "
                      "-max-threads-per-block=2048\": sm_90 allows an integer in [1, 1024]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cuda -arch=sm_89 -max-dynamic-shared-memory-per-block=200000")
                .find("sm_89 allows an integer in [1, 101376]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cuda -max-vthreads=0").find("bad value '0' of -max-vthreads"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cuda -max-vthreads=two").find("bad value 'two' of -max-vthreads"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cuda -vector-bytes=12").find("-vector-bytes"), std::string::npos);
  EXPECT_NE(ErrorOf("cuda -host=\"llvm -mcpu=nope\"").find("unknown CPU 'nope'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cuda -host=\"cuda -arch=sm_90\"").find("must be a CPU target"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cuda -host=\"llvm").find("unterminated quote"), std::string::npos);
}

TEST(CudaTarget, CpuCodeRefusesItAndItsHostFeaturesAreTheLaunchers) {
  Target t = Target::Parse("cuda -arch=sm_90");
  try {
    RequireCpuTarget(t, "JitCompile");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "JitCompile needs a CPU target (llvm ...); \"cuda -arch=sm_90\" is a cuda target"),
        std::string::npos);
  }
  RequireCpuTarget(Target::Host(), "JitCompile");  // a CPU target passes
  EXPECT_TRUE(TargetFeaturesMissingOnHost(t).empty());
}

}  // namespace
}  // namespace tirtune
