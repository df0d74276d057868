// The tuning loop end to end on a small GEMM: real design space, compilation, runner and SQLite
// database. Checked: every trial is stored with its status, the best record replays to a correct
// kernel, a resumed run counts what is stored and proposes nothing already measured, a stop
// request ends the run after the current batch with that batch committed, pre-training takes other
// workloads' records with "all" only (capped) and not when nothing is left to do, bad options are
// errors; the default batch size of one and of several tasks; and transfer: tilings fitted to a
// new extent, a record of GEMM 16^3 replayed on other GEMMs into correct kernels, refused on a
// function of another structure, and a new task's first batch starting from them.
#include "tirtune/search/tune.h"

#include <gtest/gtest.h>

#include <set>

#include "tirtune/interp/interpreter.h"
#include "tirtune/measure/verify.h"
#include "tirtune/te/workload_registry.h"
#include "tune_fixture.h"

namespace tirtune {
namespace {

TuneTask SmallGemm();

class TuneTest : public testing::TuneFixture {
 protected:
  // A database holding 16 tuned records of GEMM 16^3, and that workload: the source of the
  // transfer tests.
  std::pair<std::unique_ptr<Database>, WorkloadId> TunedSource() {
    std::unique_ptr<Database> db = OpenDatabase((dir_ / "t.db").string());
    TuneResult r = Tune({SmallGemm()}, *db, SmallOptions(16));
    return {std::move(db), r.tasks[0].workload};
  }
};

TuneTask SmallGemm() {
  Workload w = MakeWorkload("gemm:16,16,16");
  return TuneTask{w.spec, w.func, 1, w.flops};
}

TEST_F(TuneTest, StoresEveryTrialAndTheBestReplaysToACorrectKernel) {
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "t.db").string());
  TuneResult r = Tune({SmallGemm()}, *db, SmallOptions(16));
  ASSERT_EQ(r.tasks.size(), 1u);
  const TaskResult& t = r.tasks[0];
  EXPECT_EQ(t.trials, 16);
  EXPECT_EQ(db->Size(), 16u);
  ASSERT_TRUE(t.best_seconds.has_value());
  EXPECT_GT(t.status_counts.at("ok"), 0);
  int counted = 0;
  for (const auto& [status, n] : t.status_counts) counted += n;
  EXPECT_EQ(counted, 16);
  std::vector<TuningRecord> top = db->TopK(t.workload, CanonicalTarget(Target::Host().str()), 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_DOUBLE_EQ(*top[0].median_secs, *t.best_seconds);

  std::optional<Schedule> best = ReplayRecord(SmallGemm().func, top[0].trace);
  ASSERT_TRUE(best.has_value());
  std::vector<NDArray> expected = InterpretWithRandomInputs(SmallGemm().func, 4);
  std::vector<NDArray> actual = InterpretWithRandomInputs(best->func(), 4);
  EXPECT_TRUE(CompareAll({"A", "B", "C"}, expected, actual).ok);
}

TEST_F(TuneTest, ResumeCountsStoredTrialsAndNeverRemeasures) {
  std::string path = (dir_ / "t.db").string();
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    Tune({SmallGemm()}, *db, SmallOptions(16));
  }
  std::unique_ptr<Database> db = OpenDatabase(path);
  TuneOptions o = SmallOptions(24);
  o.resume = true;
  TuneResult r = Tune({SmallGemm()}, *db, o);
  EXPECT_EQ(r.tasks[0].trials_before, 16u);
  EXPECT_EQ(r.tasks[0].trials, 8);
  // Committing a known (workload, target, trace) is a no-op: 24 records means 8 new traces.
  EXPECT_EQ(db->Size(), 24u);
  std::set<std::string> traces;
  for (const TuningRecord& rec : db->RecordsOf(r.tasks[0].workload)) {
    traces.insert(rec.trace.dump());
  }
  EXPECT_EQ(traces.size(), 24u);
}

// A task resumed with records enters the gradient scheduler with its stored best: the first batch
// of a top-up goes to the task that has none (before, every resumed run started over at task 0).
TEST_F(TuneTest, AResumedTaskStartsFromItsStoredBestAndTheFirstBatchGoesToANewTask) {
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "t.db").string());
  Tune({SmallGemm()}, *db, SmallOptions(8));
  Workload other = MakeWorkload("gemm:8,16,16");
  TuneOptions o = SmallOptions(16);  // 8 stored, 8 more
  o.resume = true;
  std::string lines;
  o.log = [&](const std::string& l) { lines += l + "\n"; };
  TuneResult r = Tune({SmallGemm(), TuneTask{other.spec, other.func, 1, other.flops}}, *db, o);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_EQ(r.tasks[0].trials_before, 8u);
  EXPECT_EQ(r.tasks[0].trials, 0);
  EXPECT_EQ(r.tasks[1].trials, 8);
  EXPECT_NE(lines.find("1 of 2 tasks start from their stored best; the scheduler's first pass "
                       "is for the other 1"),
            std::string::npos)
      << lines;
}

TEST_F(TuneTest, AResumedRunWithItsBudgetSpentReportsTheBestAndPreparesNoSearch) {
  std::string path = (dir_ / "t.db").string();
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    Tune({SmallGemm()}, *db, SmallOptions(16));
  }
  std::unique_ptr<Database> db = OpenDatabase(path);
  TuneOptions o = SmallOptions(16);
  o.resume = true;
  std::string lines;
  o.log = [&](const std::string& l) { lines += l + "\n"; };
  TuneResult r = Tune({SmallGemm()}, *db, o);
  ASSERT_EQ(r.tasks.size(), 1u);
  EXPECT_EQ(r.tasks[0].trials_before, 16u);
  EXPECT_EQ(r.tasks[0].trials, 0);
  EXPECT_EQ(r.tasks[0].stopped, "budget");
  const std::string target = db->RecordsOf(r.tasks[0].workload).at(0).target;
  std::vector<TuningRecord> top = db->TopK(r.tasks[0].workload, target, 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(r.tasks[0].best_seconds, top[0].median_secs);
  EXPECT_EQ(r.tasks[0].best_trace, top[0].trace);
  EXPECT_NE(lines.find("16 record(s) stored"), std::string::npos) << lines;
  EXPECT_NE(lines.find("budget spent"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("design space"), std::string::npos) << lines;
  EXPECT_EQ(db->Size(), 16u);
}

TEST_F(TuneTest, AStopRequestEndsTheRunAfterTheBatchWithItCommitted) {
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "t.db").string());
  std::atomic<bool> stop{false};
  TuneOptions o = SmallOptions(64);
  o.stop = &stop;
  o.on_progress = [&](const TuneProgress&) { stop.store(true); };
  TuneResult r = Tune({SmallGemm()}, *db, o);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.tasks[0].stopped, "interrupted");
  EXPECT_EQ(r.tasks[0].trials, 8);
  EXPECT_EQ(db->Size(), 8u);
}

// Ctrl-C before the first batch (while references are computed, design spaces made or the model
// pre-trained): the run ends without preparing the tasks left and without measuring anything.
TEST_F(TuneTest, AStopRequestDuringPreparationEndsTheRunBeforeAnyBatch) {
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "t.db").string());
  std::atomic<bool> stop{true};
  TuneOptions o = SmallOptions(64);
  o.stop = &stop;
  std::string lines;
  o.log = [&](const std::string& l) { lines += l + "\n"; };
  TuneResult r = Tune({SmallGemm(), SmallGemm()}, *db, o);
  EXPECT_TRUE(r.interrupted);
  ASSERT_EQ(r.tasks.size(), 2u);
  for (const TaskResult& t : r.tasks) {
    EXPECT_EQ(t.stopped, "interrupted");
    EXPECT_EQ(t.trials, 0);
  }
  EXPECT_EQ(lines.find("design space"), std::string::npos) << lines;
  EXPECT_EQ(db->Size(), 0u);
}

// The cost model's log lines of a run of `task` with `o`, one text.
std::string CostModelLines(const TuneTask& task, Database& db, TuneOptions o) {
  std::string lines;
  o.log = [&](const std::string& l) {
    if (l.rfind("cost model", 0) == 0) lines += l + "\n";
  };
  Tune({task}, db, o);
  return lines;
}

TEST_F(TuneTest, OtherWorkloadsRecordsMakeThePriorOnlyWithAll) {
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "t.db").string());
  Tune({SmallGemm()}, *db, SmallOptions(16));
  Workload w = MakeWorkload("gemm:16,16,32");
  TuneTask other{w.spec, w.func, 1, w.flops};
  auto has = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };

  TuneOptions o = SmallOptions(8);
  o.pretrain = "tasks";  // nothing stored for this workload yet
  EXPECT_EQ(CostModelLines(other, *db, o), "");
  o.pretrain = "none";  // now 8 of its own are stored
  EXPECT_EQ(CostModelLines(other, *db, o), "");
  o.pretrain = "tasks";
  std::string lines = CostModelLines(other, *db, o);
  EXPECT_TRUE(has(lines, "trained on the tasks' ")) << lines;
  EXPECT_FALSE(has(lines, "pre-trained")) << lines;
  // The first workload's 16, at most 5 of each other workload, or 3 of all of them together.
  o.pretrain = "all";
  o.pretrain_per_workload = 5;
  lines = CostModelLines(other, *db, o);
  EXPECT_TRUE(has(lines, "pre-trained on 5 record(s) of 1 other workload(s)")) << lines;
  EXPECT_TRUE(has(lines, "trained on the tasks' ")) << lines;
  o.pretrain_max_others = 3;
  lines = CostModelLines(other, *db, o);
  EXPECT_TRUE(has(lines, "pre-trained on 3 record(s) of 1 other workload(s)")) << lines;
  // A resumed run with its budget spent learns nothing: it stops at once.
  o.resume = true;
  EXPECT_EQ(CostModelLines(other, *db, o), "");
}

TEST_F(TuneTest, BadOptionsAreUserErrors) {
  std::unique_ptr<Database> db = MakeMemoryDatabase();
  TuneOptions o = SmallOptions(0);
  EXPECT_THROW(Tune({SmallGemm()}, *db, o), UserError);
  o = SmallOptions(8);
  o.strategy = "annealing";
  EXPECT_THROW(Tune({SmallGemm()}, *db, o), UserError);
  EXPECT_THROW(Tune({}, *db, SmallOptions(8)), UserError);
  o = SmallOptions(8);
  o.trials_per_round = -1;
  EXPECT_THROW(Tune({SmallGemm()}, *db, o), UserError);
  o = SmallOptions(8);
  o.pretrain = "everything";
  EXPECT_THROW(Tune({SmallGemm()}, *db, o), UserError);
}

// Transfer of stored schedules to other shapes (TransferRecord, TuneOptions::transfer).
TEST(FitPerfectTile, KeepsTheInnerPartsThatDivideAndGivesTheRestToTheOutermost) {
  EXPECT_EQ(FitPerfectTile({16, 1, 4, 8, 2}, 4096), (std::vector<int64_t>{64, 1, 4, 8, 2}));
  EXPECT_EQ(FitPerfectTile({16, 1, 4, 8, 2}, 1000), (std::vector<int64_t>{125, 1, 1, 4, 2}));
  EXPECT_EQ(FitPerfectTile({4, 8}, 7), (std::vector<int64_t>{7, 1}));
  EXPECT_EQ(FitPerfectTile({64, 16}, 16), (std::vector<int64_t>{1, 16}));
  EXPECT_EQ(FitPerfectTile({5}, 12), (std::vector<int64_t>{12}));
}

TEST_F(TuneTest, AStoredRecordReplaysOnAnotherGemmIntoACorrectKernel) {
  auto [db_, source_] = TunedSource();
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

TEST_F(TuneTest, ANewTasksFirstBatchStartsFromTheTransferredSchedules) {
  auto [db_, source_] = TunedSource();
  Workload w = MakeWorkload("gemm:32,16,64");
  TuneTask task{w.spec, w.func, 1, w.flops};
  std::string lines;
  TuneOptions o = SmallOptions(8);
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

TEST_F(TuneTest, TransferZeroTransfersNothing) {
  auto [db_, source_] = TunedSource();
  Workload w = MakeWorkload("gemm:32,16,64");
  std::string lines;
  TuneOptions o = SmallOptions(8);
  o.transfer = 0;
  o.log = [&](const std::string& l) {
    if (l.find("transferred") != std::string::npos) lines += l + "\n";
  };
  Tune({TuneTask{w.spec, w.func, 1, w.flops}}, *db_, o);
  EXPECT_EQ(lines, "");
}

TEST(DefaultTrialsPerRound, OneTaskGets64AndSeveralAboutHalfTheirShareInMultiplesOf8) {
  EXPECT_EQ(DefaultTrialsPerRound(1000, 1), 64);
  EXPECT_EQ(DefaultTrialsPerRound(20, 1), 64);     // the budget still caps the batch
  EXPECT_EQ(DefaultTrialsPerRound(2000, 29), 32);  // ResNet-50: 2000 / 58 = 34
  EXPECT_EQ(DefaultTrialsPerRound(300, 9), 16);
  EXPECT_EQ(DefaultTrialsPerRound(10000, 2), 64);
  EXPECT_EQ(DefaultTrialsPerRound(100, 20), 8);
  EXPECT_EQ(DefaultTrialsPerRound(0, 5), 8);
}

}  // namespace
}  // namespace tirtune
