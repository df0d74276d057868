// The records the tuning loop stores and reads (stored_records.h), and ReplayRecord.
#include "stored_records.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace tirtune {
namespace tune_detail {

RecordStatus ToRecordStatus(MeasureStatus status) {
  switch (status) {
    case MeasureStatus::kOk:
      return RecordStatus::kOk;
    case MeasureStatus::kBuildError:
      return RecordStatus::kBuildError;
    case MeasureStatus::kRuntimeError:
      return RecordStatus::kRuntimeError;
    case MeasureStatus::kTimeout:
      return RecordStatus::kTimeout;
    case MeasureStatus::kWrongResult:
      return RecordStatus::kWrongResult;
    case MeasureStatus::kRunnerLost:
      return RecordStatus::kRunnerLost;
    case MeasureStatus::kDeviceLost:
      return RecordStatus::kDeviceLost;
  }
  return RecordStatus::kRunnerLost;
}

std::string ErrorText(const MeasureResult& r) {
  std::string text = r.message;
  if (r.status == MeasureStatus::kWrongResult) {
    text += fmt::format(" (max abs error {:.3g}, max rel error {:.3g})", r.max_abs_error,
                        r.max_rel_error);
  }
  return text;
}

void ReplayedRecords::Add(Schedule sch, const TuningRecord& r, const std::string& group) {
  schedules.push_back(std::move(sch));
  seconds.push_back(r.status == RecordStatus::kOk && r.median_secs
                        ? *r.median_secs
                        : std::numeric_limits<double>::infinity());
  groups.push_back(group);
}

bool TrainsTheModel(RecordStatus status) {
  return status != RecordStatus::kBuildError && status != RecordStatus::kRunnerLost &&
         status != RecordStatus::kDeviceLost;
}

namespace {
// The trace's Offload instruction, or null.
const nlohmann::json* OffloadInstruction(const TuningRecord& r) {
  if (!r.trace.is_object() || !r.trace.contains("insts") || !r.trace["insts"].is_array()) {
    return nullptr;
  }
  for (const nlohmann::json& inst : r.trace["insts"]) {
    if (inst.is_object() && inst.contains("kind") && inst["kind"] == "Offload") return &inst;
  }
  return nullptr;
}
}  // namespace

std::string OffloadAlgorithm(const TuningRecord& r) {
  const nlohmann::json* inst = OffloadInstruction(r);
  if (inst == nullptr || !inst->contains("attrs") || !(*inst)["attrs"].is_object()) return "";
  const nlohmann::json& attrs = (*inst)["attrs"];
  return attrs.contains("algorithm") && attrs["algorithm"].is_string()
             ? attrs["algorithm"].get<std::string>()
             : "";
}

bool TrainsTheModel(const TuningRecord& r) { return TrainsTheModel(r.status) && !Offloads(r); }

size_t AddOtherWorkloads(Database& db, const std::unordered_set<WorkloadId>& tuned,
                         const std::string& target, const TuneOptions& options,
                         ReplayedRecords& set) {
  std::vector<WorkloadEntry> others;
  for (WorkloadEntry& w : db.Workloads()) {
    if (!tuned.count(w.id)) others.push_back(std::move(w));
  }
  if (others.empty()) return 0;
  size_t per = std::min(options.pretrain_per_workload, options.pretrain_max_others / others.size());
  size_t contributed = 0;
  for (const WorkloadEntry& w : others) {
    std::vector<TuningRecord> usable;
    for (TuningRecord& r : db.RecordsOf(w.id)) {
      if (r.target == target && TrainsTheModel(r)) usable.push_back(std::move(r));
    }
    size_t n = std::min(per, usable.size()), before = set.schedules.size();
    for (size_t i = 0; i < n; ++i) {
      const TuningRecord& r = usable[i * usable.size() / n];
      if (std::optional<Schedule> sch = ReplayRecord(w.func, r.trace)) {
        set.Add(std::move(*sch), r, w.shash);
      }
    }
    if (set.schedules.size() > before) ++contributed;
  }
  return contributed;
}

}  // namespace tune_detail

bool Offloads(const TuningRecord& r) { return tune_detail::OffloadInstruction(r) != nullptr; }

std::optional<double> LowerQuartileOf(std::vector<double> samples) {
  if (samples.empty()) return std::nullopt;
  // NaN breaks the ordering sort relies on.
  if (std::any_of(samples.begin(), samples.end(), [](double v) { return std::isnan(v); })) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  std::sort(samples.begin(), samples.end());
  const double rank = 0.25 * static_cast<double>(samples.size() - 1);
  const size_t below = static_cast<size_t>(rank);
  const size_t above = std::min(below + 1, samples.size() - 1);
  return samples[below] + (samples[above] - samples[below]) * (rank - static_cast<double>(below));
}

bool LibraryKept(const TuningRecord& library, const TuningRecord& tuned) {
  if (!library.median_secs || !tuned.median_secs) return false;
  if (*library.median_secs <= *tuned.median_secs * (1 + kLibraryMargin)) return true;
  if (*library.median_secs > *tuned.median_secs * (1 + kLibraryQuartileReach)) return false;
  const std::optional<double> library_quartile = LowerQuartileOf(library.run_secs);
  const std::optional<double> tuned_quartile = LowerQuartileOf(tuned.run_secs);
  return library_quartile && tuned_quartile &&
         *library_quartile <= *tuned_quartile * (1 + kLibraryMargin);
}

std::string LibraryKeptWhy(const TuningRecord& library, const TuningRecord& tuned) {
  auto ms = [](std::optional<double> secs) {
    return secs ? fmt::format("{:.4g}", *secs * 1e3) : "-";
  };
  return fmt::format(
      "the best tuned kernel is not {:.0f}% faster at both median and lower quartile (tuned vs "
      "library: median {} vs {} ms, lower quartile {} vs {} ms)",
      kLibraryMargin * 100, ms(tuned.median_secs), ms(library.median_secs),
      ms(LowerQuartileOf(tuned.run_secs)), ms(LowerQuartileOf(library.run_secs)));
}

std::optional<TuningRecord> KeptRecord(
    Database& db, WorkloadId workload, const std::string& target,
    const std::function<bool(const TuningRecord&)>& timed_alike) {
  auto admits = [&](const TuningRecord& r) { return !timed_alike || timed_alike(r); };
  const std::string canonical = CanonicalTarget(target);
  std::optional<TuningRecord> best;
  for (TuningRecord& r : db.TopK(workload, canonical, 64)) {
    if (admits(r)) {
      best = std::move(r);
      break;
    }
  }
  if (!best || Offloads(*best)) return best;
  // The library's best record, however far down it ranks (many tuned ones may lie within 3%).
  std::optional<TuningRecord> library;
  for (TuningRecord& r : db.RecordsOf(workload)) {
    if (r.target != canonical || r.status != RecordStatus::kOk || !r.median_secs || !Offloads(r) ||
        !admits(r)) {
      continue;
    }
    if (!library || *r.median_secs < *library->median_secs) library = std::move(r);
  }
  if (library && LibraryKept(*library, *best)) return library;
  return best;
}

std::optional<Schedule> ReplayRecord(const PrimFunc& func, const nlohmann::json& trace_json) {
  try {
    Schedule sch(func);
    Trace::FromJson(trace_json).ApplyTo(sch);
    return sch;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace tirtune
