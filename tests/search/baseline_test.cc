// Never worse than untuned: every task without records of its own measures, in its first batch,
// the unscheduled function and its default schedule (what `compile` gives a function without
// records), so the tuned best is never slower than either. Checked over the whole operator
// library at its small shapes, with a few trials each, in one run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tirtune/search/default_schedule.h"
#include "tirtune/search/tune.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

TEST(Baseline, NoOperatorsTunedBestIsSlowerThanItsUnscheduledFunctionOrDefaultSchedule) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("tirtune_baseline_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<TuneTask> tasks;
  for (const WorkloadDef& def : AllWorkloads()) {
    std::string spec = def.name + ":";
    for (size_t i = 0; i < def.small_shape.size(); ++i) {
      spec += (i ? "," : "") + std::to_string(def.small_shape[i]);
    }
    Workload w = MakeWorkload(spec);
    tasks.push_back(TuneTask{w.spec, w.func, 1, w.flops});
  }
  TuneOptions o;
  o.max_trials = static_cast<int>(4 * tasks.size());
  o.trials_per_round = 4;
  o.task_scheduler = "round-robin";
  o.evolutionary.population_size = 16;
  o.evolutionary.init_min_unmeasured = 4;
  o.runner.timer.repeat = 2;
  o.runner.timer.min_repeat_ms = 0.2;
  o.runner.timeout_s = 20;
  std::unique_ptr<Database> db = OpenDatabase((dir / "t.db").string());
  TuneResult r = Tune(tasks, *db, o);
  ASSERT_EQ(r.tasks.size(), tasks.size());
  for (size_t t = 0; t < tasks.size(); ++t) {
    const TaskResult& task = r.tasks[t];
    SCOPED_TRACE(task.name);
    nlohmann::json unscheduled = Schedule(tasks[t].func).trace().ToJson();
    nlohmann::json by_default = DefaultSchedule(tasks[t].func, o.target).trace().ToJson();
    ASSERT_TRUE(task.best_seconds.has_value());
    // Both baselines were measured and verified, and the best the tuner reports (what `compile`
    // will pick) is no slower than either (up to the last bits: the tuner's median and the
    // database's, computed from the stored samples, may round differently).
    bool unscheduled_measured = false, default_measured = false;
    for (const TuningRecord& rec : db->RecordsOf(task.workload)) {
      // The default schedule may be the unscheduled function itself (then measured once).
      if (rec.trace != unscheduled && rec.trace != by_default) continue;
      unscheduled_measured |= rec.trace == unscheduled;
      default_measured |= rec.trace == by_default;
      ASSERT_EQ(rec.status, RecordStatus::kOk) << rec.error;
      EXPECT_LE(*task.best_seconds, *rec.median_secs * (1 + 1e-9));
    }
    EXPECT_TRUE(unscheduled_measured);
    EXPECT_TRUE(default_measured);
  }
  db.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tirtune
