// RetimeFinalists (retime_finalists.h).
#include "retime_finalists.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "stored_records.h"
#include "tirtune/search/tune.h"

namespace tirtune::tune_detail {
namespace {

constexpr double kFinalistRange = 1.25;
constexpr size_t kTunedFinalists = 2;
// Records measured once that lead after a round: more of them at a time. Many can lead: a GEMM
// whose ten best records, measured 2.86-3.04 ms once, measured 3.2-4.7 ms each again, had more
// behind them at 3.04 ms, and with two a round (five rounds) the eleventh was kept, never
// measured again.
constexpr size_t kLaterTunedFinalists = 6;
constexpr int kMaxRetimes = 6;
// A kernel faster than this (the library's, as measured so far) is cheap to measure again, and its
// time moves most from one process to the next: a 25 us softmax ran 0.024 ms in two processes and
// 0.042 in a third, and a 0.15 ms product 0.16 ms in one and 0.23 in the next three. Its finalists
// are measured in kCheapTurnsFactor times as many processes, the first time with as many tuned
// ones as later (a tuned record first measured in a later round would not share the slow processes
// of the first).
constexpr double kCheapKernelSecs = 0.5e-3;
constexpr int kCheapTurnsFactor = 3;

// Whether a measurement that ended with `status` is the kernel's own fault (a wrong result, a
// crash), not the run's (a timeout on a busy host, a runner stopped or lost, a build error of
// this version of the program).
bool KernelsFault(MeasureStatus status) {
  return status == MeasureStatus::kWrongResult || status == MeasureStatus::kRuntimeError;
}

// A library record as the log names it: "dnnl.conv2d", "dnnl.conv2d (winograd4)".
std::string LibraryName(const RetimeTask& task, const TuningRecord& r) {
  const std::string algorithm = OffloadAlgorithm(r);
  return algorithm.empty() ? task.composite : fmt::format("{} ({})", task.composite, algorithm);
}

// Only records timed as this run times (an untagged one, stored before records said, is not): a
// sample timed otherwise would not compare with theirs.
bool TimedAlike(const RetimeTask& task, const TuningRecord& r) {
  return RecordTimingOf(r.device) == task.timing;
}

// The task's best ok record on `target` timed as this run times, or nullopt.
std::optional<TuningRecord> BestTimedAlike(const RetimeTask& task, const std::string& target,
                                           Database& db) {
  for (TuningRecord& r : db.TopK(task.workload, target, 64)) {
    if (TimedAlike(task, r)) return std::move(r);
  }
  return std::nullopt;
}

// One round of RetimeFinalists: the library's record and up to kTunedFinalists tuned records (the
// first round of an expensive kernel) or kLaterTunedFinalists, the best faster than it or within
// kFinalistRange above it, that `retimed` does not hold yet (the first time, the library's alone
// when none is), measured `rounds` times each (kCheapTurnsFactor times that for a cheap kernel), in
// turns; their samples joined to their records, their traces added to `retimed`. False when there
// was nothing to measure.
bool RetimeOnce(const RetimeTask& task, int rounds, bool first, const std::string& target,
                Database& db, Measurer& measurer,
                const std::function<void(const std::string&)>& say,
                std::set<std::string>& retimed) {
  // The library's best ok record, however far down it ranks; the best tuned ones faster than it
  // or close above it. A tuned record far faster, measured once, may be the luckiest of many
  // candidates: a 5 us depthwise convolution measured 0.0041 ms once in tuning and 0.0075-0.0101
  // in the processes after it, slower than oneDNN's 0.0064. The first time, the library's other
  // algorithms too, however slow: each was measured once, and one unlucky measurement would rule
  // it out for good (a Winograd convolution measured 33 ms once in a first batch, 0.5 ms after).
  std::map<std::string, TuningRecord> by_algorithm;  // each algorithm's best ok record
  for (TuningRecord& r : db.RecordsOf(task.workload)) {
    if (r.target != target || r.status != RecordStatus::kOk || !Offloads(r) ||
        !TimedAlike(task, r)) {
      continue;
    }
    auto [it, added] = by_algorithm.try_emplace(OffloadAlgorithm(r), r);
    if (!added && *r.median_secs < *it->second.median_secs) it->second = std::move(r);
  }
  if (by_algorithm.empty()) return false;
  std::vector<const TuningRecord*> libraries;
  for (const auto& [algorithm, r] : by_algorithm) libraries.push_back(&r);
  std::sort(libraries.begin(), libraries.end(), [](const TuningRecord* a, const TuningRecord* b) {
    return *a->median_secs < *b->median_secs;
  });
  const TuningRecord& library = *libraries[0];
  const double library_secs = *library.median_secs;
  const bool cheap = library_secs < kCheapKernelSecs;
  if (cheap) rounds *= kCheapTurnsFactor;
  const size_t tuned_finalists = first && !cheap ? kTunedFinalists : kLaterTunedFinalists;
  std::vector<const TuningRecord*> finalists = {&library};
  for (size_t i = 1; i < libraries.size(); ++i) {
    if (!retimed.count(libraries[i]->trace.dump())) finalists.push_back(libraries[i]);
  }
  const size_t libraries_picked = finalists.size();
  std::vector<TuningRecord> top = db.TopK(task.workload, target, 64);
  for (const TuningRecord& r : top) {
    if (Offloads(r) || finalists.size() - libraries_picked >= tuned_finalists ||
        retimed.count(r.trace.dump()) || !TimedAlike(task, r)) {
      continue;
    }
    if (*r.median_secs <= library_secs * kFinalistRange) finalists.push_back(&r);
  }
  // The library's record alone, measured once: it may have been unlucky by far more than 25%
  // (a first batch's run at 4x its time was seen), so it is measured again even then.
  if (finalists.size() < 2 && retimed.count(library.trace.dump())) return false;
  // A record stored by another version that no longer replays is left out (and not tried again).
  std::vector<const TuningRecord*> replayed;
  std::vector<PrimFunc> schedules;
  std::vector<std::string> names;
  size_t library_finalists = 0;
  for (const TuningRecord* r : finalists) {
    std::optional<Schedule> sch = ReplayRecord(task.func, r->trace);
    if (!sch) {
      retimed.insert(r->trace.dump());
      continue;
    }
    replayed.push_back(r);
    schedules.push_back(sch->func());
    names.push_back(Offloads(*r) ? LibraryName(task, *r)
                                 : fmt::format("tuned {:.4f} ms", *r->median_secs * 1e3));
    if (Offloads(*r)) ++library_finalists;
  }
  finalists = std::move(replayed);
  if (library_finalists == 0 || (finalists.size() < 2 && retimed.count(library.trace.dump()))) {
    return false;
  }
  const size_t n = finalists.size();
  std::string library_names = names[0];
  for (size_t j = 1; j < library_finalists; ++j) {
    library_names += (j + 1 == library_finalists ? " and " : ", ") + names[j];
  }
  const size_t tuned = n - library_finalists;
  const std::string tuned_part =
      tuned == 0 ? std::string()
                 : fmt::format("{} and {} tuned kernel(s) faster than {} or within {:.0f}%",
                               library_finalists > 1 ? "," : "", tuned,
                               library_finalists > 1 ? "the fastest of them" : "it",
                               (kFinalistRange - 1) * 100);
  say(n == 1 ? fmt::format("task '{}': {} measured {} more time(s), each in a new runner process",
                           task.name, names[0], rounds)
             : fmt::format("task '{}': {}{}: each measured {} more time(s), in turns, each turn in "
                           "a new runner process",
                           task.name, library_names, tuned_part, rounds));
  std::vector<std::vector<double>> samples(n);
  std::vector<std::optional<MeasureResult>> failures(n);  // each finalist's first failure
  const BuiltBatch built = measurer.Build(task.measure, schedules);  // once for every turn
  for (int round = 0; round < rounds; ++round) {
    if (task.stop != nullptr && task.stop->load()) return false;  // nothing of this round written
    // A turn in a process of its own: a kernel's speed can depend on where its buffers landed in
    // physical memory, which a process keeps (Runner::StartAfresh).
    measurer.runner().StartAfresh();
    std::vector<size_t> finalist_of;
    for (size_t j = 0; j < n; ++j) finalist_of.push_back((round + j) % n);
    std::vector<MeasureResult> results = measurer.MeasureBuilt(built, finalist_of);
    for (size_t i = 0; i < results.size(); ++i) {
      const MeasureResult& result = results[i];
      if (result.ok()) {
        std::vector<double>& to = samples[finalist_of[i]];
        to.insert(to.end(), result.seconds.begin(), result.seconds.end());
      } else if (!failures[finalist_of[i]]) {
        failures[finalist_of[i]] = result;
      }
    }
  }
  std::vector<TuningRecord> more;
  std::vector<TuningRecord> failed;
  std::string changes;
  for (size_t j = 0; j < n; ++j) {
    retimed.insert(finalists[j]->trace.dump());
    if (failures[j] && !KernelsFault(failures[j]->status)) {
      say(fmt::format(
          "task '{}': {} failed when measured again and gets no samples from it: {}: "
          "{}",
          task.name, names[j], MeasureStatusName(failures[j]->status), ErrorText(*failures[j])));
      continue;
    }
    if (failures[j]) {
      // A kernel that computed a wrong result or crashed once is not run, however fast it
      // measured before: its record becomes the failure.
      TuningRecord f = *finalists[j];
      f.status = ToRecordStatus(failures[j]->status);
      f.error = fmt::format("measured again after {:.4f} ms over {} sample(s): {}",
                            *finalists[j]->median_secs * 1e3, finalists[j]->run_secs.size(),
                            ErrorText(*failures[j]));
      say(
          fmt::format("task '{}': {} failed when measured again ({}): its record is marked {} and "
                      "never runs",
                      task.name, names[j], ErrorText(*failures[j]), RecordStatusName(f.status)));
      failed.push_back(std::move(f));
      continue;
    }
    more.push_back(*finalists[j]);
    more.back().run_secs = samples[j];
    std::vector<double> all = finalists[j]->run_secs;
    all.insert(all.end(), samples[j].begin(), samples[j].end());
    changes += fmt::format("{}{} -> {:.4f} ms", changes.empty() ? "" : ", ", names[j],
                           MedianOf(all).value_or(0) * 1e3);
  }
  try {
    db.AddRunSecs(more);
    db.MarkFailed(failed);
  } catch (const UserError& e) {  // another tuner sharing the database changed a record first
    say(fmt::format("task '{}': the re-timing's samples were not stored: {}", task.name, e.what()));
  }
  if (!changes.empty()) {
    say(fmt::format("task '{}': medians over every measurement: {}", task.name, changes));
  }
  return true;
}

}  // namespace

std::optional<TuningRecord> RetimeFinalists(const RetimeTask& task, int rounds,
                                            const std::string& target, Database& db,
                                            Measurer& measurer,
                                            const std::function<void(const std::string&)>& log) {
  auto say = [&](const std::string& line) {
    if (log) log(line);
  };
  if (rounds == 0) return std::nullopt;
  // Measured once, the best of many candidates is the luckiest of them: once the finalists have
  // more samples, another record measured once may lead. It is measured again too, until the
  // leader is one measured again (or kMaxRetimes rounds).
  std::set<std::string> retimed;
  int done = 0;
  for (int i = 0; i < kMaxRetimes; ++i) {
    if (!RetimeOnce(task, rounds, i == 0, target, db, measurer, say, retimed)) break;
    ++done;
    std::optional<TuningRecord> best = BestTimedAlike(task, target, db);
    if (best && retimed.count(best->trace.dump())) break;
  }
  if (retimed.empty()) return std::nullopt;
  std::optional<TuningRecord> fastest = BestTimedAlike(task, target, db);
  std::optional<TuningRecord> kept = KeptRecord(
      db, task.workload, target, [&](const TuningRecord& r) { return TimedAlike(task, r); });
  if (!fastest || !kept) return std::nullopt;
  if (!retimed.count(fastest->trace.dump())) {
    say(fmt::format("task '{}': after {} round(s) the best record is still one measured once",
                    task.name, done));
  }
  std::string why;
  if (kept->trace != fastest->trace) {
    why = fmt::format("; kept: {}", LibraryKeptWhy(*kept, *fastest));
  }
  say(fmt::format("task '{}': best: {} ({:.4f} ms{})", task.name,
                  Offloads(*kept) ? LibraryName(task, *kept) : "a tuned kernel",
                  *kept->median_secs * 1e3, why));
  return kept;
}

}  // namespace tirtune::tune_detail
