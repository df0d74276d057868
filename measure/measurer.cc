// Build, then run: the measurement pipeline of one batch.
#include "tirtune/measure/measurer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tirtune/offload/library.h"
#include "tirtune/runtime/cuda_driver.h"
#include "tirtune/schedule/json_text.h"

namespace tirtune {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Gives the parameters the values `library` (a composite's description) states for its
// arguments, argument i being parameter i: a library's kernel may depend on them. A statement
// that is not a list of as many numbers as the parameter has elements is passed over (the
// parameter stays random; at worst the library's candidate fails, not the task).
void UseStatedValues(const std::string& library, std::vector<ArgSpec>* args) {
  if (library.empty()) return;
  nlohmann::json doc = ParseJsonText(library, "a task's library composite");
  const nlohmann::json* list = doc.is_object() && doc.contains("args") ? &doc["args"] : nullptr;
  if (list == nullptr || !list->is_array()) return;
  for (size_t i = 0; i < list->size() && i < args->size(); ++i) {
    const nlohmann::json& arg = (*list)[i];
    if (!arg.is_object() || !arg.contains("value") || !arg["value"].is_array()) continue;
    int64_t elements = 1;
    for (int64_t d : (*args)[i].shape) elements *= d;
    const nlohmann::json& value = arg["value"];
    if (static_cast<int64_t>(value.size()) != elements ||
        !std::all_of(value.begin(), value.end(), [](const auto& v) { return v.is_number(); })) {
      continue;
    }
    (*args)[i].values = value.get<std::vector<double>>();
  }
}

}  // namespace

std::string HostDeviceDescription() {
  std::string model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
    break;
  }
  return model + " (" + std::to_string(HostCoreCount()) + " cores)";
}

std::string DeviceDescription(const Target& target, int cuda_device) {
  if (!target.is_cuda()) return HostDeviceDescription();
  try {
    cuda::DeviceInfo device = cuda::QueryDevice(cuda_device);
    return device.name + " (" + std::to_string(device.sm_count) + " SMs)";
  } catch (const std::exception&) {
    return HostDeviceDescription();
  }
}

namespace {
constexpr std::string_view kWarmSuffix = ", warm";
constexpr std::string_view kColdWeightsSuffix = ", cold weights";
constexpr std::string_view kFlushedCachesSuffix = ", flushed caches";
}  // namespace

RecordTiming TimingOf(const TimerConfig& timer) {
  if (timer.flush_cache) return RecordTiming::kFlushedCaches;
  return timer.cold_constants ? RecordTiming::kColdWeights : RecordTiming::kWarm;
}

std::string TimedDevice(const std::string& device, RecordTiming timing) {
  switch (timing) {
    case RecordTiming::kWarm:
      return device + std::string(kWarmSuffix);
    case RecordTiming::kColdWeights:
      return device + std::string(kColdWeightsSuffix);
    case RecordTiming::kFlushedCaches:
      return device + std::string(kFlushedCachesSuffix);
  }
  return device;
}

std::optional<RecordTiming> RecordTimingOf(std::string_view device) {
  auto ends_with = [&](std::string_view suffix) {
    return device.size() >= suffix.size() && device.substr(device.size() - suffix.size()) == suffix;
  };
  if (ends_with(kColdWeightsSuffix)) return RecordTiming::kColdWeights;
  if (ends_with(kFlushedCachesSuffix)) return RecordTiming::kFlushedCaches;
  if (ends_with(kWarmSuffix)) return RecordTiming::kWarm;
  return std::nullopt;
}

TimerConfig TuningTimerConfig() {
  TimerConfig config;
  config.warmup = 1;
  config.repeat = 3;
  config.min_repeat_ms = 10;
  config.flush_cache = false;
  return config;
}

MeasureTask MakeMeasureTask(const PrimFunc& original, const Target& target, uint64_t seed,
                            const ReferenceConfig& reference, const std::string& library) {
  MeasureTask task;
  task.original = original;
  task.target = target;
  task.seed = seed;
  task.args = ArgSpecsOf(original);
  task.library = library;
  UseStatedValues(library, &task.args);
  task.reduction_length = LongestReduction(original);
  // A GPU candidate is checked against numbers computed on this host's CPU.
  Reference ref = ComputeReference(original, seed, target.HostTarget(), reference, task.args);
  task.expected = std::move(ref.expected);
  task.reference_source = std::move(ref.source);
  return task;
}

MeasureCandidate CandidateFor(const MeasureTask& task, BuildResult built) {
  MeasureCandidate c;
  c.object = std::move(built.object);
  c.func_name = std::move(built.func_name);
  c.target = task.target.str();
  c.args = task.args;
  for (const auto& [index, layout] : built.packed_layouts) {
    if (index < static_cast<int>(c.args.size())) c.args[index].layout = layout;
  }
  c.seed = task.seed;
  c.expected = task.expected;
  c.reduction_length = task.reduction_length;
  return c;
}

Measurer::Measurer(BuilderConfig builder, RunnerConfig runner)
    : builder_(std::move(builder)),
      own_runner_(std::make_unique<RunnerPool>(std::move(runner))),
      runner_(own_runner_.get()) {}

Measurer::Measurer(BuilderConfig builder, Runner& runner)
    : builder_(std::move(builder)), runner_(&runner) {}

std::vector<MeasureResult> Measurer::Measure(const MeasureTask& task,
                                             const std::vector<PrimFunc>& scheduled,
                                             const SlowCutoff& cutoff,
                                             const MeasureCallback& on_result) {
  BuiltBatch batch = Build(task, scheduled);
  const double build = last_.build;
  std::vector<size_t> order(scheduled.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<MeasureResult> results = MeasureBuilt(batch, order, cutoff, on_result);
  last_.build = build;  // (counted in total_ by Build)
  return results;
}

BuiltBatch Measurer::Build(const MeasureTask& task, const std::vector<PrimFunc>& scheduled) {
  auto start = std::chrono::steady_clock::now();
  // Library candidates are not compiled: the runner builds the library's kernel.
  std::vector<PrimFunc> compiled;
  std::vector<size_t> compiled_index;
  for (size_t i = 0; i < scheduled.size(); ++i) {
    if (OffloadedComposite(scheduled[i]).empty()) {
      compiled.push_back(scheduled[i]);
      compiled_index.push_back(i);
    }
  }
  std::vector<BuildResult> built(scheduled.size());
  std::vector<BuildResult> compiled_built = builder_.Build(compiled, task.target);
  for (size_t j = 0; j < compiled.size(); ++j) {
    built[compiled_index[j]] = std::move(compiled_built[j]);
  }
  for (size_t i = 0; i < scheduled.size(); ++i) {
    std::string composite = OffloadedComposite(scheduled[i]);
    if (composite.empty()) continue;
    built[i].func_name = scheduled[i]->name;
    if (task.library.empty()) {
      built[i].status = BuildStatus::kCodegenError;
      built[i].message =
          fmt::format("offloaded to {}, but no library can run this function", composite);
    }
  }
  BuiltBatch batch;
  batch.build_results.resize(scheduled.size());
  batch.candidates.resize(scheduled.size());
  for (size_t i = 0; i < built.size(); ++i) {
    if (!built[i].ok()) {
      batch.build_results[i].status = MeasureStatus::kBuildError;
      batch.build_results[i].message = built[i].message;
      continue;
    }
    batch.candidates[i] = CandidateFor(task, std::move(built[i]));
    if (!OffloadedComposite(scheduled[i]).empty()) {
      // The composite as the candidate asks the library to run it.
      batch.candidates[i]->library =
          offload::CompositeWithAlgorithm(task.library, OffloadedAlgorithm(scheduled[i]));
    }
  }
  last_.build = SecondsSince(start);
  last_.run = 0;
  total_.build += last_.build;
  return batch;
}

std::vector<MeasureResult> Measurer::MeasureBuilt(const BuiltBatch& batch,
                                                  const std::vector<size_t>& order,
                                                  const SlowCutoff& cutoff,
                                                  const MeasureCallback& on_result) {
  auto start = std::chrono::steady_clock::now();
  std::vector<MeasureResult> results(order.size());
  std::vector<MeasureCandidate> candidates;
  std::vector<size_t> slots;  // candidate -> position in `order`
  for (size_t k = 0; k < order.size(); ++k) {
    const std::optional<MeasureCandidate>& candidate = batch.candidates.at(order[k]);
    if (!candidate) {
      results[k] = batch.build_results.at(order[k]);
      if (on_result) on_result(k, results[k]);
      continue;
    }
    candidates.push_back(*candidate);
    slots.push_back(k);
  }
  MeasureCallback forward;
  if (on_result) {
    forward = [&](size_t j, const MeasureResult& r) { on_result(slots[j], r); };
  }
  std::vector<MeasureResult> measured = runner_->Measure(candidates, cutoff, forward);
  for (size_t j = 0; j < slots.size(); ++j) results[slots[j]] = std::move(measured[j]);
  last_.build = 0;
  last_.run = SecondsSince(start);
  total_.run += last_.run;
  return results;
}

}  // namespace tirtune
