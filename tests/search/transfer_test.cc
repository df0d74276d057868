// Transfer of stored schedules to other shapes: perfect tilings fitted to a new extent, a record
// of GEMM 16^3 replayed on other GEMMs into correct kernels (checked by the interpreter), refused
// on a function of another structure, and a new task's first batch starting from them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tirtune/interp/interpreter.h"
#include "tirtune/measure/verify.h"
#include "tirtune/search/tune.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

TEST(FitPerfectTile, KeepsTheInnerPartsThatDivideAndGivesTheRestToTheOutermost) {
  EXPECT_EQ(FitPerfectTile({16, 1, 4, 8, 2}, 4096), (std::vector<int64_t>{64, 1, 4, 8, 2}));
  EXPECT_EQ(FitPerfectTile({16, 1, 4, 8, 2}, 1000), (std::vector<int64_t>{125, 1, 1, 4, 2}));
  EXPECT_EQ(FitPerfectTile({4, 8}, 7), (std::vector<int64_t>{7, 1}));
  EXPECT_EQ(FitPerfectTile({64, 16}, 16), (std::vector<int64_t>{1, 16}));
  EXPECT_EQ(FitPerfectTile({5}, 12), (std::vector<int64_t>{12}));
}

class TransferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tirtune_transfer_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = OpenDatabase((dir_ / "t.db").string());
    Workload w = MakeWorkload("gemm:16,16,16");
    TuneResult r = Tune({TuneTask{w.spec, w.func, 1, w.flops}}, *db_, Options(16));
    source_ = r.tasks[0].workload;
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  static TuneOptions Options(int trials) {
    TuneOptions o;
    o.max_trials = trials;
    o.trials_per_round = 8;
    o.evolutionary.population_size = 32;
    o.evolutionary.init_min_unmeasured = 8;
    o.runner.timer.repeat = 2;
    o.runner.timer.min_repeat_ms = 0.2;
    o.runner.timeout_s = 10;
    return o;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Database> db_;
  WorkloadId source_ = -1;
};

TEST_F(TransferTest, AStoredRecordReplaysOnAnotherGemmIntoACorrectKernel) {
  SpaceGenerator space = SpaceGenerator::For(Target::Host());
  std::vector<TuningRecord> top = db_->TopK(source_, CanonicalTarget(Target::Host().str()), 4);
  ASSERT_FALSE(top.empty());
  for (const char* spec : {"gemm:32,48,64", "gemm:20,16,12"}) {
    PrimFunc func = MakeWorkload(spec).func;
    int transferred = 0;
    for (const TuningRecord& r : top) {
      std::optional<Schedule> sch = TransferRecord(space, func, r.trace, 1);
      if (!sch) continue;
      ++transferred;
      std::vector<NDArray> expected = InterpretWithRandomInputs(func, 3);
      std::vector<NDArray> actual = InterpretWithRandomInputs(sch->func(), 3);
      EXPECT_TRUE(CompareAll({"A", "B", "C"}, expected, actual).ok) << spec;
    }
    EXPECT_GT(transferred, 0) << spec;
  }
  // Another structure (no block "C" with three loops): nothing.
  PrimFunc softmax = MakeWorkload("softmax:16,16").func;
  EXPECT_FALSE(TransferRecord(space, softmax, top[0].trace, 1).has_value());
}

TEST_F(TransferTest, ANewTasksFirstBatchStartsFromTheTransferredSchedules) {
  Workload w = MakeWorkload("gemm:32,16,64");
  TuneTask task{w.spec, w.func, 1, w.flops};
  std::string lines;
  TuneOptions o = Options(8);
  o.transfer = 2;
  o.log = [&](const std::string& l) {
    if (l.find("transferred") != std::string::npos) lines += l + "\n";
  };
  TuneResult r = Tune({task}, *db_, o);
  EXPECT_NE(lines.find("2 schedule(s) transferred from 1 other workload(s)"), std::string::npos)
      << lines;
  // The two are the source's best two that transfer, fitted: they are among the new workload's
  // records.
  SpaceGenerator space = SpaceGenerator::For(Target::Host());
  std::string target = CanonicalTarget(Target::Host().str());
  std::set<std::string> stored;
  for (const TuningRecord& rec : db_->RecordsOf(r.tasks[0].workload)) {
    if (std::optional<Schedule> s = ReplayRecord(w.func, rec.trace))
      stored.insert(CandidateKey(*s));
  }
  EXPECT_EQ(stored.size(), 8u);
  int checked = 0;
  for (const TuningRecord& best : db_->TopK(source_, target, 4)) {
    std::optional<Schedule> s = TransferRecord(space, w.func, best.trace, o.seed);
    if (!s || checked == 2) continue;  // the untuned record (an empty trace) transfers nothing
    EXPECT_TRUE(stored.count(CandidateKey(*s)));
    ++checked;
  }
  EXPECT_EQ(checked, 2);
  // A task with records of its own (the run above stored 8) transfers nothing.
  lines.clear();
  Tune({task}, *db_, o);
  EXPECT_EQ(lines, "");
}

TEST_F(TransferTest, TransferZeroTransfersNothing) {
  Workload w = MakeWorkload("gemm:32,16,64");
  std::string lines;
  TuneOptions o = Options(8);
  o.transfer = 0;
  o.log = [&](const std::string& l) {
    if (l.find("transferred") != std::string::npos) lines += l + "\n";
  };
  Tune({TuneTask{w.spec, w.func, 1, w.flops}}, *db_, o);
  EXPECT_EQ(lines, "");
}

}  // namespace
}  // namespace tirtune
