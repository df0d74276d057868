// Every workload of the operator library, at its small shape and at every benchmark shape, is
// well formed, prints, parses back structurally equal, and keeps its hash across the round trip.
#include <gtest/gtest.h>

#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/verify.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

std::string Spec(const WorkloadDef& def, const std::vector<int64_t>& args) {
  std::string s = def.name + ":";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? "," : "") + std::to_string(args[i]);
  return s;
}

std::vector<std::string> AllSpecs() {
  std::vector<std::string> specs;
  for (const WorkloadDef& def : AllWorkloads()) {
    specs.push_back(Spec(def, def.small_shape));
    for (const auto& shape : def.benchmark_shapes) specs.push_back(Spec(def, shape));
  }
  return specs;
}

class WorkloadRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(WorkloadRoundTrip, PrintsParsesAndHashesStably) {
  Workload w = MakeWorkload(GetParam());
  std::vector<std::string> problems = VerifyWellFormed(w.func);
  for (const std::string& p : problems) ADD_FAILURE() << p;
  EXPECT_GT(w.flops, 0);

  std::string text = Print(w.func);
  PrimFunc parsed = ParsePrimFunc(text, GetParam());
  std::optional<std::string> diff = StructuralDiff(w.func, parsed);
  EXPECT_FALSE(diff.has_value()) << *diff << "\n" << text;
  EXPECT_EQ(StructuralHashHex(parsed), StructuralHashHex(w.func));
  EXPECT_EQ(Print(parsed), text);
  // Building the same workload again gives new objects with the same hash.
  EXPECT_EQ(StructuralHashHex(MakeWorkload(GetParam()).func), StructuralHashHex(w.func));
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, WorkloadRoundTrip, ::testing::ValuesIn(AllSpecs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) name += std::isalnum(c) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace tirtune
