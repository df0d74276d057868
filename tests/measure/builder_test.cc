// The parallel builder: a batch of scheduled workloads compiles on the TBB arena into objects that
// load and compute what the interpreter computes; a candidate that lowering or code generation
// rejects becomes its own status with a message, and the rest of the batch is unaffected.
#include "tirtune/measure/builder.h"

#include <gtest/gtest.h>

#include "../common/workload_schedules.h"
#include "planted_faults.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/stmt.h"
#include "tirtune/measure/verify.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using testing::kBadAlign;
using testing::ThroughFloat8;

TEST(Builder, CompilesScheduledWorkloadsThatMatchTheInterpreter) {
  std::vector<PrimFunc> funcs;
  std::vector<PrimFunc> originals;
  for (const char* name : {"gemm", "conv2d", "softmax", "layer_norm"}) {
    const WorkloadDef* def = FindWorkload(name);
    ASSERT_NE(def, nullptr) << name;
    PrimFunc f = def->build(def->small_shape);
    for (const testing::NamedSchedule& s : testing::Schedules()) {
      Schedule sch(f);
      s.apply(sch);
      funcs.push_back(sch.func());
      originals.push_back(f);
    }
  }
  ASSERT_GT(funcs.size(), 8u);
  BuilderConfig config;
  config.num_jobs = 2;
  Builder builder(config);
  EXPECT_EQ(builder.num_jobs(), 2);
  std::vector<BuildResult> results = builder.Build(funcs, Target::Host());
  ASSERT_EQ(results.size(), funcs.size());
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].message;
    EXPECT_GT(results[i].build_ms, 0);
    std::unique_ptr<Kernel> k = LoadObject(results[i].object, results[i].func_name, Target::Host());
    std::vector<NDArray> expected = InterpretWithRandomInputs(originals[i], 3);
    std::vector<NDArray> actual = MakeRandomArgs(originals[i], 3);
    ASSERT_EQ(k->Run(actual), 0);
    std::vector<std::string> names(actual.size(), "param");
    VerifyResult v = CompareAll(names, expected, actual);
    EXPECT_TRUE(v.ok) << i << ": " << v.message;
  }
}

TEST(Builder, FailuresAreStatusesAndTheBatchGoesOn) {
  PrimFunc good = MakeWorkload("gemm:8,8,8").func;
  std::vector<PrimFunc> funcs = {good, ParsePrimFunc(kBadAlign), ThroughFloat8(), good};
  std::vector<BuildResult> results = Builder().Build(funcs, Target::Host());
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].ok()) << results[0].message;
  EXPECT_EQ(results[1].status, BuildStatus::kLoweringError);
  EXPECT_NE(results[1].message.find("lowering: block 'c'"), std::string::npos)
      << results[1].message;
  EXPECT_TRUE(results[1].object.empty());
  EXPECT_EQ(results[2].status, BuildStatus::kCodegenError);
  EXPECT_NE(results[2].message.find("code generation: "), std::string::npos) << results[2].message;
  EXPECT_NE(results[2].message.find("float8"), std::string::npos) << results[2].message;
  EXPECT_TRUE(results[3].ok()) << results[3].message;
  EXPECT_STREQ(BuildStatusName(results[2].status), "codegen_error");
}

TEST(Builder, RejectsANegativeJobCountAndDefaultsToTheHardware) {
  BuilderConfig negative;
  negative.num_jobs = -1;
  EXPECT_THROW(Builder{negative}, UserError);
  EXPECT_GE(Builder().num_jobs(), 1);
}

}  // namespace
}  // namespace tirtune
