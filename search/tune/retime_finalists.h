// Step 7 of the tuning loop (tune.cc): where a library's kernel and tuned ones came close, the
// finalists are measured again, in turns, before the record that runs is kept (KeptRecord).
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "tirtune/database/database.h"
#include "tirtune/measure/measurer.h"

namespace tirtune::tune_detail {

/// What RetimeFinalists needs of a task that a library can run.
struct RetimeTask {
  std::string name;  // for the log
  PrimFunc func;
  const MeasureTask& measure;
  WorkloadId workload = -1;
  std::string composite;  // the library's composite, e.g. "dnnl.conv2d"
  RecordTiming timing = RecordTiming::kWarm;  // how `measurer` times (TimingOf its timer)
  const std::atomic<bool>* stop = nullptr;    // when set to true: stop before the next turn
};

/// One measurement each does not decide between a library's kernel and tuned ones that come
/// close: a memory-bound kernel's time moves by 5-10% from one run to the next. The finalists,
/// among the records timed as `measurer` times (`task.timing`: a sample timed with cold weights
/// would not join a warm record's), the library's best record of `task` on `target` (the first
/// time with the best record of each of its other algorithms, however slow: one unlucky
/// measurement would rule an algorithm out for good) and up to two tuned records (the first round;
/// six for a kernel under 0.5 ms), the best of those faster than it or within 25% above it (one far
/// faster, measured once, may have been lucky), are measured `rounds` times each (three times as
/// many under 0.5 ms: cheap, and such a kernel's time moves most between processes) on `measurer`,
/// in turns (round k starts with finalist k), each turn in runner processes started for it
/// (Runner::StartAfresh: a kernel can be 10% faster in one process than in the next, and the
/// process the search measured it in may have been a lucky one), and every sample joins its record
/// (Database::AddRunSecs), whose median then decides what `compile` runs (KeptRecord). The
/// library's record is measured again even with no tuned one close (it may have lost by far more
/// than 25% to one unlucky run). Measured once, the best of many candidates is also the luckiest,
/// so when a record measured once leads afterwards, it and the next close ones, up to six at a
/// time, are measured the same way (with the library's again), in up to six rounds in all (the log
/// says when a record measured once still leads after them). A finalist whose kernel fails now (a
/// wrong result, a crash: the kernel's own fault) is logged and its record becomes that failure
/// (Database::MarkFailed): it never runs, however fast it measured before; one that fails
/// otherwise (a timeout, a lost runner, a build error of this version) is logged and gets no
/// samples; one that no longer replays is left out. `task.stop` ends the re-timing before the
/// next turn, the round's samples unwritten. A database write refused (another tuner changed
/// the record first) is logged. Returns the record that runs afterwards among those timed alike
/// (KeptRecord: the library's where the best tuned one is not 3% faster), or nullopt when nothing
/// was measured (no library record, none close, rounds 0).
std::optional<TuningRecord> RetimeFinalists(const RetimeTask& task, int rounds,
                                            const std::string& target, Database& db,
                                            Measurer& measurer,
                                            const std::function<void(const std::string&)>& log);

}  // namespace tirtune::tune_detail
