// The tuning loop end to end on a small GEMM: real design space, compilation, runner and SQLite
// database. Checked: every trial is stored with its status, the best record replays to a correct
// kernel, a resumed run counts what is stored and proposes nothing already measured, a stop
// request ends the run after the current batch with that batch committed, pre-training takes other
// workloads' records with "all" only (capped) and not when nothing is left to do, bad options are
// errors; the default batch size of one and of several tasks; and transfer: tilings fitted to a
// new extent, a record of GEMM 16^3 replayed on other GEMMs into correct kernels, refused on a
// function of another structure, and a new task's first batch starting from them.
#include "tirtune/search/tune.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/pattern.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/measure/verify.h"
#include "tirtune/offload/library.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

TuneTask SmallGemm();

class TuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tirtune_tune_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static TuneOptions SmallOptions(int trials) {
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

  // A database holding 16 tuned records of GEMM 16^3, and that workload: the source of the
  // transfer tests.
  std::pair<std::unique_ptr<Database>, WorkloadId> TunedSource() {
    std::unique_ptr<Database> db = OpenDatabase((dir_ / "t.db").string());
    TuneResult r = Tune({SmallGemm()}, *db, SmallOptions(16));
    return {std::move(db), r.tasks[0].workload};
  }

  std::filesystem::path dir_;
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

// conv2d + bias_add + relu fused as a oneDNN composite: the task's function and its library.
TuneTask ConvComposite() {
  graph::Graph g;
  graph::ValueId x = g.AddInput("x", graph::F32({1, 14, 14, 16}));
  NDArray w = NDArray::Empty({3, 3, 16, 16}, DataType::Float(32));
  w.FillRandom(1);
  NDArray b = NDArray::Empty({16}, DataType::Float(32));
  b.FillRandom(2);
  graph::ValueId v =
      graph::AddOpCall(&g, "conv", "conv2d", {x, g.AddConstant("w", w)}, {{"pad", 1}});
  v = graph::AddOpCall(&g, "bias", "bias_add", {v, g.AddConstant("b", b)});
  g.AddOutput(graph::AddOpCall(&g, "relu", "relu", {v}));
  graph::Graph fused = graph::FuseTIR(graph::FuseOps(graph::AnnotateOpPattern(
      graph::LegalizeOps(graph::FuseOpsByPattern(g, offload::DnnlBackend()->Patterns()).graph))));
  const graph::Call& call = fused.call(0);
  std::string library = offload::CompositeToJson(offload::StandaloneComposite(fused, call));
  return TuneTask{"conv_bias_relu", call.func, 1, 0, library};
}

// dense + bias + GELU as exporters write it, x * (erf(x / sqrt(2)) + 1) * 0.5, fused as a oneDNN
// composite whose scalar constants the library's kernel depends on.
TuneTask DenseGeluComposite() {
  graph::Graph g;
  graph::ValueId x = g.AddInput("x", graph::F32({4, 16}));
  auto constant = [&](const char* name, std::vector<int64_t> shape, double value, int seed) {
    NDArray a = NDArray::Empty(shape, DataType::Float(32));
    a.FillRandom(seed);
    if (shape.empty()) a.SetDouble(0, value);
    return g.AddConstant(name, a);
  };
  graph::ValueId v = graph::AddOpCall(&g, "dense", "dense", {x, constant("w", {12, 16}, 0, 1)});
  v = graph::AddOpCall(&g, "bias", "add", {v, constant("b", {12}, 0, 2)});
  graph::ValueId d =
      graph::AddOpCall(&g, "div", "divide", {v, constant("sqrt2", {}, std::sqrt(2.0), 0)});
  graph::ValueId e = graph::AddOpCall(&g, "erf", "erf", {d});
  graph::ValueId p = graph::AddOpCall(&g, "plus1", "add", {e, constant("one", {}, 1.0, 0)});
  graph::ValueId m = graph::AddOpCall(&g, "times_x", "multiply", {v, p});
  g.AddOutput(graph::AddOpCall(&g, "half", "multiply", {m, constant("one_half", {}, 0.5, 0)}));
  graph::Graph fused = graph::FuseTIR(graph::FuseOps(graph::AnnotateOpPattern(
      graph::LegalizeOps(graph::FuseOpsByPattern(g, offload::DnnlBackend()->Patterns()).graph))));
  const graph::Call& call = fused.call(0);
  std::string library = offload::CompositeToJson(offload::StandaloneComposite(fused, call));
  return TuneTask{"dense_gelu", call.func, 1, 0, library};
}

// The library's kernel is measured once, in the first batch, verified like any candidate, and
// stored as a record whose trace offloads — for this 3x3 stride-1 convolution once per algorithm
// the backend offers (direct, Winograd F(4x4) and F(2x2)); a resumed run does not measure them
// again.
TEST_F(TuneTest, TheLibrarysKernelIsMeasuredOnceAsARecordOfItsOwn) {
  std::string path = (dir_ / "t.db").string();
  TuneTask task = ConvComposite();
  auto library_records = [&](Database& db, WorkloadId w) {
    std::vector<TuningRecord> found;
    for (TuningRecord& r : db.RecordsOf(w)) {
      std::optional<Schedule> sch = ReplayRecord(task.func, r.trace);
      if (sch && OffloadedComposite(sch->func()) == "dnnl.conv2d") found.push_back(r);
    }
    return found;
  };
  const std::vector<std::string> algorithms = {"", "winograd4", "winograd2"};
  WorkloadId workload;
  {
    std::unique_ptr<Database> db = OpenDatabase(path);
    TuneResult r = Tune({task}, *db, SmallOptions(8));
    workload = r.tasks[0].workload;
    std::vector<TuningRecord> lib = library_records(*db, workload);
    ASSERT_EQ(lib.size(), algorithms.size());
    for (size_t i = 0; i < lib.size(); ++i) {
      EXPECT_EQ(lib[i].status, RecordStatus::kOk) << lib[i].error;
      EXPECT_EQ(lib[i].trace["insts"][0]["attrs"].value("algorithm", ""), algorithms[i]);
      EXPECT_LE(*r.tasks[0].best_seconds, *lib[i].median_secs);
    }
    EXPECT_EQ(r.tasks[0].trials, 8);
  }
  std::unique_ptr<Database> db = OpenDatabase(path);
  TuneOptions o = SmallOptions(16);
  o.resume = true;
  Tune({task}, *db, o);
  EXPECT_EQ(library_records(*db, workload).size(), algorithms.size());
  EXPECT_EQ(db->Size(), 16u);
}

// With cold weights the library's kernel (whose reordered weights it names) and the tuned
// candidates (the composite's constants marked layout-free, as a model's are) are verified and
// timed with their constants evicted before every call.
TEST_F(TuneTest, WithColdWeightsTheLibrarysAndTheTunedKernelsAreMeasured) {
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "cold.db").string());
  TuneTask task = ConvComposite();
  task.func = WithLayoutFreeParams(task.func, {1, 2});
  TuneOptions o = SmallOptions(8);
  o.runner.timer.cold_constants = true;
  TuneResult r = Tune({task}, *db, o);
  ASSERT_TRUE(r.tasks[0].best_seconds.has_value());
  size_t ok = 0, library = 0;
  for (const TuningRecord& rec : db->RecordsOf(r.tasks[0].workload)) {
    ok += rec.status == RecordStatus::kOk ? 1 : 0;
    std::optional<Schedule> sch = ReplayRecord(task.func, rec.trace);
    library += sch && !OffloadedComposite(sch->func()).empty() ? 1 : 0;
  }
  EXPECT_EQ(ok, db->RecordsOf(r.tasks[0].workload).size());
  EXPECT_EQ(library, 3u);  // direct, Winograd F(4x4) and F(2x2)
}

// The library's record and a tuned one that comes close (here: stored with equal times, 100 ns,
// faster than any new candidate), or one that beats it measured once (here: 1,000 times faster,
// a lucky run), are measured again, in turns, once the budget is spent; their samples join their
// records, and the task's best is the best record after them.
TEST_F(TuneTest, CloseOrFasterTunedRecordsAreMeasuredAgainWithTheLibrarysAndTheirSamplesJoinThem) {
  TuneTask task = ConvComposite();
  auto offloads = [&](const TuningRecord& r) {
    std::optional<Schedule> sch = ReplayRecord(task.func, r.trace);
    return sch && !OffloadedComposite(sch->func()).empty();
  };
  nlohmann::json library_trace, tuned_trace;
  std::string target;
  {
    std::unique_ptr<Database> first = OpenDatabase((dir_ / "first.db").string());
    TuneOptions o = SmallOptions(8);
    o.library_retimes = 0;
    TuneResult r = Tune({task}, *first, o);
    target = first->RecordsOf(r.tasks[0].workload).at(0).target;
    for (const TuningRecord& rec : first->TopK(r.tasks[0].workload, target, 100)) {
      nlohmann::json& trace = offloads(rec) ? library_trace : tuned_trace;
      if (trace.is_null()) trace = rec.trace;  // the best tuned one
    }
  }
  ASSERT_FALSE(library_trace.is_null());
  ASSERT_FALSE(tuned_trace.is_null());
  // A database at `name` where the library's record was measured at 100 ns and the tuned one at
  // `tuned_secs`, both on `device`; the workload's id.
  auto store = [&](const std::string& name, double tuned_secs, const std::string& device) {
    std::unique_ptr<Database> db = OpenDatabase((dir_ / name).string());
    WorkloadId w = db->CommitWorkload(task.func).id;
    std::vector<TuningRecord> stored(2);
    for (int i = 0; i < 2; ++i) {
      stored[i].workload = w;
      stored[i].target = target;
      stored[i].trace = i == 0 ? library_trace : tuned_trace;
      stored[i].run_secs = {i == 0 ? 1e-7 : tuned_secs};
      stored[i].device = device;
    }
    db->CommitRecords(stored);
    return std::make_pair(std::move(db), w);
  };
  for (double tuned_secs : {1e-7, 1e-10}) {
    SCOPED_TRACE(fmt::format("the tuned record stored at {} s", tuned_secs));
    // (timed as this run times)
    auto [db, w] = store(fmt::format("t{}.db", tuned_secs == 1e-7), tuned_secs,
                         TimedDevice("stored", RecordTiming::kWarm));
    TuneOptions o = SmallOptions(10);
    o.resume = true;
    o.library_retimes = 2;
    std::string lines;
    o.log = [&](const std::string& l) { lines += l + "\n"; };
    TuneResult r = Tune({task}, *db, o);
    // The library's other algorithms (measured once, in this run's first batch) with them.
    EXPECT_NE(lines.find("dnnl.conv2d (winograd4)"), std::string::npos) << lines;
    EXPECT_NE(lines.find("dnnl.conv2d (winograd2)"), std::string::npos) << lines;
    EXPECT_NE(lines.find(", and 1 tuned kernel(s) faster than the fastest of them or within 25%: "
                         "each measured 2 more"),
              std::string::npos)
        << lines;
    EXPECT_NE(lines.find("each turn in a new runner process"), std::string::npos) << lines;
    EXPECT_NE(lines.find("medians over every measurement"), std::string::npos) << lines;
    EXPECT_NE(lines.find("best: "), std::string::npos) << lines;
    int found = 0;
    for (const TuningRecord& rec : db->RecordsOf(w)) {
      if (rec.trace != library_trace && rec.trace != tuned_trace) continue;
      ++found;
      SCOPED_TRACE(offloads(rec) ? "library" : "tuned");
      EXPECT_EQ(rec.status, RecordStatus::kOk);
      // The stored 1 ms and 2 rounds of 2 samples each (the library's again when a tuned record
      // measured once led afterwards): the median is a measured one.
      ASSERT_GE(rec.run_secs.size(), 5u);
      if (!offloads(rec)) {
        EXPECT_EQ(rec.run_secs.size(), 5u);
      }
      const double stored_secs = offloads(rec) ? 1e-7 : tuned_secs;
      EXPECT_EQ(rec.run_secs[0], stored_secs);
      // The median is a measured one: no kernel of this convolution runs in 100 ns.
      EXPECT_GT(*rec.median_secs, stored_secs);
    }
    EXPECT_EQ(found, 2);
    // The task's best: the best record, or the library's when the best tuned one is less than 3%
    // faster.
    std::vector<TuningRecord> best = db->TopK(w, target, 1);
    ASSERT_EQ(best.size(), 1u);
    std::optional<TuningRecord> kept = KeptRecord(*db, w, target);
    ASSERT_TRUE(kept);
    if (kept->trace != best[0].trace) {
      EXPECT_TRUE(offloads(*kept));
      EXPECT_LE(*kept->median_secs, *best[0].median_secs * 1.03);
    }
    EXPECT_EQ(r.tasks[0].best_seconds, kept->median_secs);
    EXPECT_EQ(r.tasks[0].best_trace, kept->trace);
  }
  // Records timed otherwise (with cold weights; or untagged, stored before records said) get no
  // samples from a warm run: they would not compare.
  for (const std::string& device :
       {TimedDevice("stored", RecordTiming::kColdWeights), std::string("stored")}) {
    SCOPED_TRACE(device);
    auto [db, w] = store(fmt::format("{}.db", device), 1e-7, device);
    TuneOptions o = SmallOptions(10);
    o.resume = true;
    o.library_retimes = 2;
    Tune({task}, *db, o);
    int found = 0;
    for (const TuningRecord& rec : db->RecordsOf(w)) {
      if (rec.device != device) continue;
      ++found;
      EXPECT_EQ(rec.run_secs, std::vector<double>{1e-7});
    }
    EXPECT_EQ(found, 2);
  }
}

// Many records measured once, all lucky (stored at 0.1 ns), lead one after another as the ones
// before them are measured again: they are measured again too, more at a time after the first
// round, until the leader is one measured again (two a round, five rounds, left the eleventh
// leading).
TEST_F(TuneTest, ManyLuckyRecordsAreMeasuredAgainUntilTheLeaderIsOneMeasuredAgain) {
  TuneTask task = ConvComposite();
  nlohmann::json library_trace;
  std::vector<nlohmann::json> tuned_traces;
  std::string target;
  {
    std::unique_ptr<Database> first = OpenDatabase((dir_ / "first.db").string());
    TuneOptions o = SmallOptions(24);
    o.library_retimes = 0;
    TuneResult r = Tune({task}, *first, o);
    target = first->RecordsOf(r.tasks[0].workload).at(0).target;
    for (const TuningRecord& rec : first->TopK(r.tasks[0].workload, target, 100)) {
      std::optional<Schedule> sch = ReplayRecord(task.func, rec.trace);
      if (!sch) continue;
      if (!OffloadedComposite(sch->func()).empty()) {
        if (library_trace.is_null()) library_trace = rec.trace;
      } else if (tuned_traces.size() < 13) {
        tuned_traces.push_back(rec.trace);
      }
    }
  }
  ASSERT_FALSE(library_trace.is_null());
  ASSERT_EQ(tuned_traces.size(), 13u);
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "lucky.db").string());
  WorkloadId w = db->CommitWorkload(task.func).id;
  std::vector<TuningRecord> stored(1 + tuned_traces.size());
  for (size_t i = 0; i < stored.size(); ++i) {
    stored[i].workload = w;
    stored[i].target = target;
    stored[i].trace = i == 0 ? library_trace : tuned_traces[i - 1];
    stored[i].run_secs = {i == 0 ? 1e-7 : 1e-10};
    stored[i].device = TimedDevice("stored", RecordTiming::kWarm);
  }
  db->CommitRecords(stored);
  TuneOptions o = SmallOptions(static_cast<int>(stored.size()) + 8);
  o.resume = true;
  o.library_retimes = 1;
  std::string lines;
  o.log = [&](const std::string& l) { lines += l + "\n"; };
  TuneResult r = Tune({task}, *db, o);
  EXPECT_EQ(lines.find("still one measured once"), std::string::npos) << lines;
  for (const TuningRecord& rec : db->RecordsOf(w)) {
    if (rec.run_secs.empty() || rec.run_secs[0] != 1e-10) continue;
    // Each lucky record: its stored sample and one more, from a measurement in a new process.
    EXPECT_EQ(rec.run_secs.size(), 3u) << rec.trace.dump();  // (2 repeats)
  }
  std::vector<TuningRecord> best = db->TopK(w, target, 1);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_GT(*best[0].median_secs, 1e-10);
  EXPECT_EQ(r.tasks[0].best_trace, KeptRecord(*db, w, target)->trace);
}

// The GELU's constants are measured with their values (the composite states them): oneDNN's
// kernel, which computes the GELU itself, is verified ok against the reference.
TEST_F(TuneTest, ALibraryKernelThatDependsOnConstantsIsMeasuredWithTheirValues) {
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "t.db").string());
  TuneTask task = DenseGeluComposite();
  ASSERT_NE(task.library.find(R"("value":[0.5])"), std::string::npos) << task.library;
  TuneResult r = Tune({task}, *db, SmallOptions(8));
  int library = 0;
  for (const TuningRecord& rec : db->RecordsOf(r.tasks[0].workload)) {
    std::optional<Schedule> sch = ReplayRecord(task.func, rec.trace);
    if (!sch || OffloadedComposite(sch->func()).empty()) continue;
    ++library;
    EXPECT_EQ(rec.status, RecordStatus::kOk) << rec.error;
  }
  EXPECT_EQ(library, 1);
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
