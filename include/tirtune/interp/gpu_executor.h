// The GPU-semantics executor: runs a lowered GPU module (ir/gpu_module.h) on the CPU the way a
// GPU would, so that GPU schedules are checked without a GPU. Kernels run in order; a kernel's
// blocks run one after another; within a block every thread runs (on the interpreter, as a fiber
// of its own) up to its next sync_threads(), then the next thread, and only when all threads of
// the block stand at the same barrier does the next phase begin. Shared memory is one array per
// block (filled with NaN at the start of each block, so a read of what nobody wrote shows), local
// memory one per thread. Every access to shared memory is checked against the other threads'
// accesses of the same phase: a read of an element another thread wrote, or a write of one
// another thread read or wrote, is a race, which a GPU would not report.
#pragma once

#include <string>
#include <vector>

#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/gpu_module.h"

namespace tirtune {

/// A kernel that is wrong in a way the GPU would not say: a race on shared memory, or threads of
/// one block that do not meet at the same barrier. The message names the kernel, the block, the
/// threads, the buffer and the element.
class GpuRaceError : public InterpError {
 public:
  explicit GpuRaceError(const std::string& what) : InterpError(what) {}
};

struct GpuExecutorConfig {
  /// Check every shared-memory access for a race within its phase. Default true.
  bool detect_races = true;
};

/// Runs `module` with `args` bound to its parameters in order (as Interpret does: one NDArray per
/// parameter, outputs written into the caller's arrays). Throws GpuRaceError for a race or a
/// barrier the threads of a block do not all reach, and InterpError for what the interpreter
/// rejects (an out-of-bounds access, ...), with the kernel, block and thread in the message.
void ExecuteGpuModule(const GpuModule& module, const std::vector<NDArray>& args,
                      const GpuExecutorConfig& config = {});

}  // namespace tirtune
