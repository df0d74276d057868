// The schedule a model function gets when the database holds no record for it: inline what can
// be inlined, then run each remaining block's outer spatial loops in parallel and vectorize its
// innermost spatial loop where that is legal. Safe rather than fast; tuning does better. For a
// GPU, every block must run on threads: DefaultGpuSchedule.
#pragma once

#include <vector>

#include "tirtune/codegen/target.h"
#include "tirtune/ir/function.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {

/// The default schedule of `func` for `target`. Every step that does not apply (a ScheduleError)
/// is skipped, so the result is at worst the unscheduled function.
Schedule DefaultSchedule(const PrimFunc& func, const Target& target);

/// The default GPU schedule of `func` for the cuda `target`: AutoInline's GPU rule, then every
/// block's leading spatial loops on blockIdx.x x 256 threads (RewriteUnboundBlock), accepted by
/// VerifyGpuCode; without the inlining when that is refused. UserError naming the function and
/// the reason when no schedule puts every statement on the GPU's threads: never an unbound
/// kernel.
Schedule DefaultGpuSchedule(const PrimFunc& func, const Target& target);

/// What `func` runs as without tuning, which a task measures in its first batch so that its best
/// record is never slower: on a CPU the unscheduled function and DefaultSchedule (what `compile`
/// gives a function without records); on a GPU DefaultGpuSchedule (none when no default schedule
/// binds the function: unscheduled, it cannot run).
std::vector<Schedule> BaselineSchedules(const PrimFunc& func, const Target& target);

}  // namespace tirtune
