// The time of the evolutionary search's own work, without compiling or measuring anything: for a
// workload, a cost model trained on the workload's stored records (from DB, when given; a random
// model otherwise) and the task's best records as the warm start, it times
// GenerateMeasureCandidates (one batch: fresh samples, `genetic_num_iters` generations of the
// population scored by the model and bred by the mutators, the epsilon-greedy pick) and reports
// milliseconds per batch and per generation. Prints one JSON line.
//
// usage: bench_search_generation WORKLOAD [DB] [batches=3] [target]
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "tirtune/database/database.h"
#include "tirtune/search/cost_model.h"
#include "tirtune/search/strategy.h"
#include "tirtune/search/tune.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int Main(int argc, char** argv) {
  if (argc < 2) throw UserError("usage: bench_search_generation WORKLOAD [DB] [batches] [target]");
  Workload w = MakeWorkload(argv[1]);
  std::string db_path = argc > 2 ? argv[2] : "";
  int batches = argc > 3 ? std::atoi(argv[3]) : 3;
  Target target = Target::Parse(argc > 4 ? argv[4] : "llvm -num-cores=2");

  SpaceGenerator space = SpaceGenerator::DefaultCpu(CpuSpaceConfig::For(target));
  FeatureFn features = LoweredFeatures();
  EvolutionaryConfig config;
  std::unique_ptr<CostModel> model = db_path.empty() ? MakeRandomModel() : MakeXGBoostModel();

  // Step 1. The stored records: the model's training data, the warm start, the measured set.
  std::vector<std::pair<Schedule, double>> warm;
  std::unordered_set<std::string> measured;
  size_t trained_on = 0;
  double train_seconds = 0;
  if (!db_path.empty()) {
    OpenOptions open;
    open.create_if_missing = false;
    std::unique_ptr<Database> db = OpenDatabase(db_path, open);
    std::optional<WorkloadEntry> entry = db->FindWorkload(w.func);
    if (!entry) throw UserError(fmt::format("{}: no records of {}", db_path, w.spec));
    std::vector<Schedule> replayed;
    std::vector<double> seconds;
    for (const TuningRecord& r : db->RecordsOf(entry->id)) {
      std::optional<Schedule> sch = ReplayRecord(w.func, r.trace);
      if (!sch) continue;
      measured.insert(CandidateKey(*sch));
      if (r.status == RecordStatus::kOk && r.median_secs) warm.emplace_back(*sch, *r.median_secs);
      replayed.push_back(std::move(*sch));
      seconds.push_back(r.status == RecordStatus::kOk && r.median_secs
                            ? *r.median_secs
                            : std::numeric_limits<double>::infinity());
    }
    std::vector<FeatureMatrix> f = features(replayed);
    std::vector<CostSample> samples;
    for (size_t i = 0; i < replayed.size(); ++i) {
      samples.push_back(CostSample{w.spec, std::move(f[i]), seconds[i]});
    }
    auto train_start = std::chrono::steady_clock::now();
    model->Update(samples);
    train_seconds = SecondsSince(train_start);
    trained_on = samples.size();
    std::sort(warm.begin(), warm.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    size_t keep = static_cast<size_t>(config.population_size * config.init_measured_ratio);
    if (warm.size() > keep)
      warm.erase(warm.begin() + static_cast<std::ptrdiff_t>(keep), warm.end());
  }

  // Step 2. Batches of 64, timed.
  std::unique_ptr<SearchStrategy> search =
      MakeEvolutionarySearch(&space, model.get(), features, config, /*seed=*/1);
  search->PreTuning(w.func, space.GenerateDesignSpaces(w.func, 1), warm, measured);
  std::vector<double> batch_seconds;
  size_t proposed = 0;
  for (int b = 0; b < batches; ++b) {
    auto start = std::chrono::steady_clock::now();
    proposed += search->GenerateMeasureCandidates(64).size();
    batch_seconds.push_back(SecondsSince(start));
  }
  double total = 0;
  for (double s : batch_seconds) total += s;
  double per_batch = total / static_cast<double>(batches);
  fmt::print("{}\n",
             nlohmann::json{{"workload", w.spec},
                            {"cost_model", model->name()},
                            {"trained_on", trained_on},
                            {"train_seconds", train_seconds},
                            {"population", config.population_size},
                            {"generations_per_batch", config.genetic_num_iters},
                            {"proposed", proposed},
                            {"batch_seconds", batch_seconds},
                            {"ms_per_batch", per_batch * 1e3},
                            {"ms_per_generation", per_batch * 1e3 / config.genetic_num_iters}}
                 .dump());
  return 0;
}

}  // namespace
}  // namespace tirtune

int main(int argc, char** argv) {
  try {
    return tirtune::Main(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_search_generation: {}\n", e.what());
    return 1;
  }
}
