// The schedule a model function gets when the database holds no record for it: inline what can
// be inlined, then run each remaining block's outer spatial loops in parallel and vectorize its
// innermost spatial loop where that is legal. Safe rather than fast; tuning does better.
#pragma once

#include "tirtune/codegen/target.h"
#include "tirtune/ir/function.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune::model {

/// The default schedule of `func` for `target`. Every step that does not apply (a ScheduleError)
/// is skipped, so the result is at worst the unscheduled function.
Schedule DefaultSchedule(const PrimFunc& func, const Target& target);

}  // namespace tirtune::model
