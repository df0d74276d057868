// Target strings: defaults come from the host, options parse and print back, and every kind of
// mistake is a UserError that names the offending token; which of a target's features the host
// lacks.
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
  EXPECT_NE(ErrorOf("cuda -arch=sm_90").find("unknown target kind 'cuda'"), std::string::npos);
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

}  // namespace
}  // namespace tirtune
