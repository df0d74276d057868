// The transformation of compute_inline without its trace record, shared with compute_at at the
// inline location (which records a compute_at of the sampled location instead).
#pragma once

#include "tirtune/schedule/schedule.h"

namespace tirtune {

/// Checks the preconditions of compute_inline (see compute_inline.cc) and, unless the schedule is
/// in check-only mode, inlines `block`. Records nothing.
void InlineBlock(Schedule* sch, BlockRV block);

}  // namespace tirtune
