// Transfer: the best schedules of other workloads replayed on a new one, their tilings fitted to
// its loops (tune.h: TransferRecord, FitPerfectTile; stored_records.h: TransferredSchedules).
// A GEMM 4096^3 starts from what 1024^3 found instead of from random samples, which on a GPU
// take seconds each to measure.
#include <algorithm>
#include <numeric>
#include <set>

#include "stored_records.h"
#include "tirtune/ir/flop_count.h"
#include "tirtune/ir/functor.h"

namespace tirtune {
namespace {

nlohmann::json FitTiling(Schedule& sch, const Instruction& inst,
                         const std::vector<InstInput>& inputs, const nlohmann::json& decision) {
  if (inst.kind->name != "SamplePerfectTile" || inputs.empty() ||
      !std::holds_alternative<RVRef>(inputs[0]) || !decision.is_array()) {
    return decision;
  }
  std::vector<int64_t> parts;
  for (const nlohmann::json& p : decision) {
    if (!p.is_number_integer() || p.get<int64_t>() < 1) return decision;  // replay says why
    parts.push_back(p.get<int64_t>());
  }
  const int64_t* extent = AsConstInt(sch.Get(LoopRV{std::get<RVRef>(inputs[0]).id})->extent);
  if (extent == nullptr || *extent < 1 || parts.empty()) return decision;
  return FitPerfectTile(parts, *extent);
}

std::set<std::string> BlockNames(const PrimFunc& func) {
  std::set<std::string> names;
  PostOrderVisit(func->body, [&](const Object* node) {
    if (const auto* block = node->as<BlockNode>()) names.insert(block->name);
  });
  return names;
}

}  // namespace

std::vector<int64_t> FitPerfectTile(std::vector<int64_t> parts, int64_t extent) {
  int64_t left = extent;
  for (size_t k = parts.size(); k-- > 1;) {
    parts[k] = std::gcd(parts[k], left);
    left /= parts[k];
  }
  parts[0] = left;
  return parts;
}

std::optional<Schedule> TransferRecord(const SpaceGenerator& space, const PrimFunc& func,
                                       const nlohmann::json& trace_json, uint64_t seed) {
  try {
    Trace trace = Trace::FromJson(trace_json);
    if (trace.empty()) return std::nullopt;  // the unscheduled function: nothing to transfer
    Schedule fitted(func);
    trace.ApplyTo(fitted, {}, /*remove_postproc=*/true, FitTiling);
    return space.ReplayAndPostprocess(func, fitted.trace(), seed);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

namespace tune_detail {

std::vector<Schedule> TransferredSchedules(const std::vector<WorkloadEntry>& others, Database& db,
                                           const PrimFunc& func, const std::string& target,
                                           const SpaceGenerator& space, size_t count, uint64_t seed,
                                           size_t* sources) {
  struct Found {
    Schedule sch;
    double throughput;  // the source's FLOP/s: what it achieved on its own shape
    size_t source;
  };
  std::vector<Found> found;
  std::unordered_set<std::string> keys;
  std::set<std::string> names = BlockNames(func);
  constexpr size_t kPerWorkload = 2;
  for (size_t w = 0; w < others.size() && count > 0; ++w) {
    if (BlockNames(others[w].func) != names) continue;
    double flops = EstimateFlops(others[w].func);
    size_t taken = 0;  // of the best few: an untuned record (an empty trace) transfers nothing
    for (const TuningRecord& r : db.TopK(others[w].id, target, 2 * kPerWorkload)) {
      if (taken == kPerWorkload) break;
      if (Offloads(r) || !r.median_secs || *r.median_secs <= 0) continue;
      std::optional<Schedule> sch = TransferRecord(space, func, r.trace, seed);
      if (!sch || !keys.insert(CandidateKey(*sch)).second) continue;
      found.push_back(Found{std::move(*sch), flops / *r.median_secs, w});
      ++taken;
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const Found& a, const Found& b) { return a.throughput > b.throughput; });
  if (found.size() > count)
    found.erase(found.begin() + static_cast<std::ptrdiff_t>(count), found.end());
  std::set<size_t> from;
  std::vector<Schedule> out;
  for (Found& f : found) {
    from.insert(f.source);
    out.push_back(std::move(f.sch));
  }
  if (sources != nullptr) *sources = from.size();
  return out;
}

}  // namespace tune_detail
}  // namespace tirtune
