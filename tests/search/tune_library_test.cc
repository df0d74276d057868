// The tuning loop with a library that can run the task (oneDNN): its kernel measured once per
// algorithm as a record of its own, with warm or cold weights, and its constants' values; the
// finalists measured again in turns once the budget is spent (RetimeFinalists), until the leader
// is one measured again; and the record that runs (KeptRecord: the library's unless the best tuned
// one is more than 3% faster at both median and lower quartile).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/pattern.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/offload/library.h"
#include "tirtune/search/tune.h"
#include "tune_fixture.h"

namespace tirtune {
namespace {

class TuneTest : public testing::TuneFixture {
 protected:
  // A record of workload `w` on `target` as a test stores it: `trace`, one sample, `device`.
  static TuningRecord Stored(WorkloadId w, const std::string& target, const nlohmann::json& trace,
                             double seconds, const std::string& device) {
    TuningRecord r;
    r.workload = w;
    r.target = target;
    r.trace = trace;
    r.run_secs = {seconds};
    r.device = device;
    return r;
  }

  // `task` tuned for 10 trials into `db`, measured on `runner`; the run and its log.
  static std::pair<TuneResult, std::string> TuneOn(const TuneTask& task, Database& db,
                                                   Runner& runner) {
    TuneOptions o = SmallOptions(10);
    std::string lines;
    o.log = [&](const std::string& l) { lines += l + "\n"; };
    TuneResult r = Tune({task}, db, o, runner);
    return {std::move(r), std::move(lines)};
  }

  // A first run of `task` (`trials`, no re-timing) into a database of its own.
  struct FirstRun {
    std::string target;
    nlohmann::json library_trace;              // the library's best record's
    std::vector<nlohmann::json> tuned_traces;  // the tuned records', best first
  };
  FirstRun TuneFirst(const TuneTask& task, int trials) {
    std::unique_ptr<Database> db = OpenDatabase((dir_ / "first.db").string());
    TuneOptions o = SmallOptions(trials);
    o.library_retimes = 0;
    TuneResult r = Tune({task}, *db, o);
    FirstRun first;
    first.target = db->RecordsOf(r.tasks[0].workload).at(0).target;
    for (const TuningRecord& rec : db->TopK(r.tasks[0].workload, first.target, 100)) {
      if (!Offloads(rec)) {
        first.tuned_traces.push_back(rec.trace);
      } else if (first.library_trace.is_null()) {
        first.library_trace = rec.trace;
      }
    }
    return first;
  }
};

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
  FirstRun first = TuneFirst(task, 8);
  const std::string target = first.target;
  const nlohmann::json library_trace = first.library_trace;
  ASSERT_FALSE(first.tuned_traces.empty());
  const nlohmann::json tuned_trace = first.tuned_traces[0];  // the best tuned one
  ASSERT_FALSE(library_trace.is_null());
  // A database at `name` where the library's record was measured at 100 ns and the tuned one at
  // `tuned_secs`, both on `device`; the workload's id.
  auto store = [&](const std::string& name, double tuned_secs, const std::string& device) {
    std::unique_ptr<Database> db = OpenDatabase((dir_ / name).string());
    WorkloadId w = db->CommitWorkload(task.func).id;
    db->CommitRecords({Stored(w, target, library_trace, 1e-7, device),
                       Stored(w, target, tuned_trace, tuned_secs, device)});
    return std::make_pair(std::move(db), w);
  };
  for (double tuned_secs : {1e-7, 1e-10}) {
    SCOPED_TRACE(fmt::format("the tuned record stored at {} s", tuned_secs));
    // (timed as this run times)
    auto [db, w] = store(fmt::format("t{}.db", tuned_secs == 1e-7), tuned_secs,
                         TimedDevice("stored", RecordTiming::kWarm));
    TuneOptions o = SmallOptions(10);
    o.resume = true;
    std::string lines;
    o.log = [&](const std::string& l) { lines += l + "\n"; };
    TuneResult r = Tune({task}, *db, o);
    // The library's other algorithms (measured once, in this run's first batch) with them.
    EXPECT_NE(lines.find("dnnl.conv2d (winograd4)"), std::string::npos) << lines;
    EXPECT_NE(lines.find("dnnl.conv2d (winograd2)"), std::string::npos) << lines;
    EXPECT_NE(lines.find(", and 1 tuned kernel(s) faster than the fastest of them or within 25%: "
                         "each measured 3 more"),
              std::string::npos)
        << lines;
    EXPECT_NE(lines.find("each turn in a new runner process"), std::string::npos) << lines;
    EXPECT_NE(lines.find("medians over every measurement"), std::string::npos) << lines;
    EXPECT_NE(lines.find("best: "), std::string::npos) << lines;
    int found = 0;
    for (const TuningRecord& rec : db->RecordsOf(w)) {
      if (rec.trace != library_trace && rec.trace != tuned_trace) continue;
      ++found;
      SCOPED_TRACE(Offloads(rec) ? "library" : "tuned");
      EXPECT_EQ(rec.status, RecordStatus::kOk);
      // The stored sample and 3 turns (1 x 3: a kernel under 0.5 ms is measured in three times
      // as many processes; one turn when a loaded machine timed the library's over 0.5 ms) of 2
      // samples each (the library's again when a tuned record measured once led afterwards).
      ASSERT_GE(rec.run_secs.size(), 3u);
      if (!Offloads(rec)) {
        EXPECT_TRUE(rec.run_secs.size() == 7u || rec.run_secs.size() == 3u) << rec.run_secs.size();
      }
      const double stored_secs = Offloads(rec) ? 1e-7 : tuned_secs;
      EXPECT_EQ(rec.run_secs[0], stored_secs);
      // The median is a measured one: no kernel of this convolution runs in 100 ns.
      EXPECT_GT(*rec.median_secs, stored_secs);
    }
    EXPECT_EQ(found, 2);
    // The task's best: the best record, or the library's when the best tuned one is not 3%
    // faster at both median and lower quartile (under load the library's median may be far
    // behind while its stored 100 ns sample keeps its lower quartile low).
    std::vector<TuningRecord> best = db->TopK(w, target, 1);
    ASSERT_EQ(best.size(), 1u);
    std::optional<TuningRecord> kept = KeptRecord(*db, w, target);
    ASSERT_TRUE(kept);
    if (kept->trace != best[0].trace) {
      EXPECT_TRUE(Offloads(*kept));
      const bool close_median = *kept->median_secs <= *best[0].median_secs * 1.03;
      const bool close_quartile =
          *kept->median_secs <= *best[0].median_secs * 1.10 &&
          *LowerQuartileOf(kept->run_secs) <= *LowerQuartileOf(best[0].run_secs) * 1.03;
      EXPECT_TRUE(close_median || close_quartile) << LibraryKeptWhy(*kept, best[0]);
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
// before them are measured again: they are measured again too, six at a time (a cheap kernel's
// first round too), until the leader is one measured again (two a round, five rounds, once left
// the eleventh leading).
TEST_F(TuneTest, ManyLuckyRecordsAreMeasuredAgainUntilTheLeaderIsOneMeasuredAgain) {
  TuneTask task = ConvComposite();
  FirstRun first = TuneFirst(task, 24);
  const std::string target = first.target;
  const nlohmann::json library_trace = first.library_trace;
  std::vector<nlohmann::json> tuned_traces = first.tuned_traces;
  if (tuned_traces.size() > 13) tuned_traces.resize(13);
  ASSERT_FALSE(library_trace.is_null());
  ASSERT_GE(tuned_traces.size(), 11u);  // more than five rounds of two would measure
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "lucky.db").string());
  WorkloadId w = db->CommitWorkload(task.func).id;
  std::vector<TuningRecord> stored(1 + tuned_traces.size());
  const std::string device = TimedDevice("stored", RecordTiming::kWarm);
  for (size_t i = 0; i < stored.size(); ++i) {
    stored[i] = i == 0 ? Stored(w, target, library_trace, 1e-7, device)
                       : Stored(w, target, tuned_traces[i - 1], 1e-10, device);
  }
  db->CommitRecords(stored);
  TuneOptions o = SmallOptions(static_cast<int>(stored.size()) + 8);
  o.resume = true;
  std::string lines;
  o.log = [&](const std::string& l) { lines += l + "\n"; };
  TuneResult r = Tune({task}, *db, o);
  EXPECT_EQ(lines.find("still one measured once"), std::string::npos) << lines;
  size_t lucky = 0;
  for (const TuningRecord& rec : db->RecordsOf(w)) {
    if (rec.run_secs.empty() || rec.run_secs[0] != 1e-10) continue;
    ++lucky;
    // Each lucky record: its stored sample and three measurements more (one turn, three times as
    // many for a kernel under 0.5 ms; one when a loaded machine timed the library's over 0.5 ms),
    // each in a new process, of 2 repeats.
    EXPECT_TRUE(rec.run_secs.size() == 7u || rec.run_secs.size() == 3u)
        << rec.run_secs.size() << " samples: " << rec.trace.dump();
  }
  EXPECT_EQ(lucky, tuned_traces.size());
  std::vector<TuningRecord> best = db->TopK(w, target, 1);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_GT(*best[0].median_secs, 1e-10);
  std::optional<TuningRecord> kept = KeptRecord(*db, w, target);
  ASSERT_TRUE(kept);
  EXPECT_EQ(r.tasks[0].best_trace, kept->trace);
}

// Answers every candidate ok (tuned kernels 1 ms, the library's 2 ms) until StartAfresh, which the
// re-timing calls before every turn; then `status` for every tuned kernel: a wrong result, as a
// kernel with a race would give one run in many, or a lost runner, which is not the kernel's fault.
class WrongWhenMeasuredAgainRunner : public Runner {
 public:
  explicit WrongWhenMeasuredAgainRunner(MeasureStatus status) : status_(status) {}
  std::vector<MeasureResult> Measure(const std::vector<MeasureCandidate>& candidates,
                                     const SlowCutoff&, const MeasureCallback& on_result) override {
    std::vector<MeasureResult> out;
    for (size_t i = 0; i < candidates.size(); ++i) {
      MeasureResult r;
      const bool library = !candidates[i].library.empty();
      if (again_ && !library) {
        r.status = status_;
        r.message = "outputs differ from the reference";
        r.max_abs_error = 3.5;
        r.max_rel_error = 0.5;
      } else {
        const double t = library ? 2e-3 : 1e-3;
        r.seconds = {t, t};
        r.median = t;
        r.number = 1;
      }
      if (on_result) on_result(i, r);
      out.push_back(std::move(r));
    }
    return out;
  }
  void StartAfresh() override { again_ = true; }
  std::string Describe() const override { return "wrong-when-measured-again test double"; }

 private:
  MeasureStatus status_;
  bool again_ = false;
};

// A finalist that computes a wrong result when measured again is never run, however fast it
// measured before: its record becomes the failure, and the library's kernel is kept.
TEST_F(TuneTest, AFinalistWrongWhenMeasuredAgainBecomesAFailedRecordAndNeverRuns) {
  TuneTask task = ConvComposite();
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "wrong.db").string());
  WrongWhenMeasuredAgainRunner runner(MeasureStatus::kWrongResult);
  auto [r, lines] = TuneOn(task, *db, runner);
  EXPECT_NE(lines.find("failed when measured again (outputs differ from the reference (max abs "
                       "error 3.5, max rel error 0.5)): its record is marked wrong_result and "
                       "never runs"),
            std::string::npos)
      << lines;
  size_t failed = 0;
  std::optional<TuningRecord> library;
  for (const TuningRecord& rec : db->RecordsOf(r.tasks[0].workload)) {
    if (Offloads(rec)) {
      if (rec.trace["insts"][0]["attrs"].value("algorithm", "").empty()) library = rec;
      continue;
    }
    if (rec.status == RecordStatus::kOk) continue;  // never a finalist: measured once, 1 ms
    ++failed;
    EXPECT_EQ(rec.status, RecordStatus::kWrongResult);
    EXPECT_NE(rec.error.find("measured again after 1.0000 ms over 2 sample(s): outputs differ"),
              std::string::npos)
        << rec.error;
    EXPECT_TRUE(rec.run_secs.empty());
  }
  // The best two the first round, then six more a round while a record measured once leads.
  EXPECT_GE(failed, 2u);
  ASSERT_TRUE(library);
  EXPECT_EQ(library->status, RecordStatus::kOk);
  EXPECT_GT(library->run_secs.size(), 2u);  // measured again
  std::optional<TuningRecord> kept = KeptRecord(*db, r.tasks[0].workload, library->target);
  ASSERT_TRUE(kept);
  EXPECT_TRUE(Offloads(*kept));
  EXPECT_EQ(r.tasks[0].best_trace, kept->trace);
  for (const TuningRecord& top : db->TopK(r.tasks[0].workload, library->target, 100)) {
    EXPECT_TRUE(Offloads(top) || top.run_secs.size() == 2u) << "a record measured again is ok";
  }
}

// A runner lost when the finalists are measured again (a stop, a crashed machine: not the kernel's
// fault) leaves every record ok, with the samples it had: the log says it.
TEST_F(TuneTest, AFinalistWhoseRunnerIsLostWhenMeasuredAgainStaysOk) {
  TuneTask task = ConvComposite();
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "lost.db").string());
  WrongWhenMeasuredAgainRunner runner(MeasureStatus::kRunnerLost);
  auto [r, lines] = TuneOn(task, *db, runner);
  EXPECT_NE(lines.find("failed when measured again and gets no samples from it: runner_lost"),
            std::string::npos)
      << lines;
  EXPECT_EQ(lines.find("never runs"), std::string::npos) << lines;
  for (const TuningRecord& rec : db->RecordsOf(r.tasks[0].workload)) {
    EXPECT_EQ(rec.status, RecordStatus::kOk) << rec.error;
    if (!Offloads(rec)) {
      EXPECT_EQ(rec.run_secs.size(), 2u);
    }
  }
  ASSERT_TRUE(r.tasks[0].best_seconds);
  EXPECT_EQ(*r.tasks[0].best_seconds, 1e-3);  // a tuned kernel, as measured in tuning
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

// KeptRecord: the best record, or the library's best however far down it ranks where the best
// tuned one is not 3% faster; with a filter, only the records it admits.
TEST_F(TuneTest, TheRecordKeptIsTheLibrarysWithinThreePercentOfTheBestTunedOne) {
  TuneTask task = ConvComposite();
  std::unique_ptr<Database> db = OpenDatabase((dir_ / "kept.db").string());
  const WorkloadId w = db->CommitWorkload(task.func).id;
  const std::string target = "llvm -num-cores=2";
  Schedule library(task.func);
  library.Offload("dnnl.conv2d");
  // 70 distinct tuned records from 1.00 to 1.0069 ms (more than TopK's 64 ahead of the library's)
  // and the library's at 1.025 ms.
  std::vector<TuningRecord> stored;
  for (int i = 0; i < 70; ++i) {
    Schedule tuned(task.func);
    tuned.Annotate(tuned.GetBlock("root"), "tag", i);
    stored.push_back(Stored(w, target, tuned.trace().ToJson(), 1e-3 + i * 1e-7, "warm"));
  }
  stored.push_back(Stored(w, target, library.trace().ToJson(), 1.025e-3, "cold"));
  db->CommitRecords(stored);
  std::optional<TuningRecord> kept = KeptRecord(*db, w, target);
  ASSERT_TRUE(kept);
  EXPECT_TRUE(Offloads(*kept));
  EXPECT_TRUE(LibraryKept(*kept, db->TopK(w, target, 1).at(0)));
  // The same target written otherwise.
  kept = KeptRecord(*db, w, "llvm  -num-cores=2 ");
  ASSERT_TRUE(kept);
  EXPECT_TRUE(Offloads(*kept));
  // Only the warm records: the best tuned one.
  kept = KeptRecord(*db, w, target, [](const TuningRecord& r) { return r.device == "warm"; });
  ASSERT_TRUE(kept);
  EXPECT_FALSE(Offloads(*kept));
  EXPECT_DOUBLE_EQ(*kept->median_secs, 1e-3);
  // The library's at 1.05 ms: more than 3% slower, the best tuned one.
  std::unique_ptr<Database> db2 = OpenDatabase((dir_ / "kept2.db").string());
  const WorkloadId w2 = db2->CommitWorkload(task.func).id;
  stored.back().run_secs = {1.05e-3};
  for (TuningRecord& r : stored) r.workload = w2;
  db2->CommitRecords(stored);
  kept = KeptRecord(*db2, w2, target);
  ASSERT_TRUE(kept);
  EXPECT_FALSE(Offloads(*kept));
  EXPECT_FALSE(KeptRecord(*db2, w2 + 1, target));
}

// LibraryKept: a tuned record must be more than 3% faster at the median and at the lower quartile.
// Samples like a softmax 256x256's re-timing on a noisy host: the tuned kernel's median 5.4% ahead,
// its lower quartile 1.2% — slow processes fell more on the library's side.
TEST(LibraryKept, ATunedRecordAheadOnlyAtTheMedianDoesNotRunInTheLibrarysPlace) {
  auto record = [](std::vector<double> us) {
    TuningRecord r;
    for (double& v : us) v *= 1e-6;
    r.median_secs = MedianOf(us);
    r.run_secs = std::move(us);
    return r;
  };
  TuningRecord library = record({25.2, 25.4, 25.4, 25.5, 27.0, 27.2, 29.0, 30.0, 30.4, 34.1, 35.0});
  TuningRecord tuned = record({24.7, 25.0, 25.1, 25.2, 25.3, 25.8, 29.0, 29.4, 32.3, 34.0, 34.6});
  ASSERT_GT(*library.median_secs, *tuned.median_secs * 1.03);
  EXPECT_TRUE(LibraryKept(library, tuned));
  EXPECT_NE(LibraryKeptWhy(library, tuned)
                .find("not 3% faster at both median and lower quartile (tuned vs library: "
                      "median 0.0258 vs 0.0272 ms"),
            std::string::npos)
      << LibraryKeptWhy(library, tuned);
  // Ahead at both: the tuned record runs.
  TuningRecord faster = record({23.0, 23.4, 23.5, 24.0, 24.2, 25.8, 29.0, 29.4, 32.3, 34.0, 34.6});
  EXPECT_FALSE(LibraryKept(library, faster));
  // Ahead at the lower quartile only (its median within 3%): the library's.
  TuningRecord quick_start = record({22.0, 22.1, 22.2, 22.3, 27.0, 27.0, 29.0, 30.0, 30.4, 34.1});
  EXPECT_TRUE(LibraryKept(library, quick_start));
  // Ahead at the median by more than 10%, whatever the quartiles: a library slow in most
  // processes is slow where the model runs too.
  TuningRecord bimodal = record({25.2, 25.4, 25.4, 25.5, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0});
  ASSERT_LE(*LowerQuartileOf(bimodal.run_secs), *LowerQuartileOf(tuned.run_secs) * 1.03);
  EXPECT_FALSE(LibraryKept(bimodal, tuned));
  // Without samples (a record built by hand): never kept over the tuned one.
  EXPECT_FALSE(LibraryKept(TuningRecord{}, tuned));
}

TEST(LowerQuartileOf, LinearBetweenTheTwoNearestRanks) {
  EXPECT_FALSE(LowerQuartileOf({}).has_value());
  EXPECT_EQ(LowerQuartileOf({3.0}), 3.0);
  EXPECT_EQ(LowerQuartileOf({4.0, 1.0, 3.0, 2.0, 5.0}), 2.0);  // rank 1 of 0..4
  EXPECT_EQ(LowerQuartileOf({2.0, 1.0}), 1.25);                // a quarter of the way from 1 to 2
  EXPECT_TRUE(std::isnan(*LowerQuartileOf({1.0, std::nan(""), 2.0})));
  // Slow samples above it do not move it.
  EXPECT_EQ(LowerQuartileOf({1.0, 1.0, 1.0, 1.0, 90.0, 100.0, 100.0, 100.0, 100.0}), 1.0);
}

}  // namespace
}  // namespace tirtune
