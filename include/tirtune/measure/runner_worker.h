// What a `tirtune-runner` worker does with one request: load the object, build seeded random
// arguments, run once, verify against the expected outputs, then time. Kept apart from the
// process plumbing so that it can be tested in-process.
#pragma once

#include "tirtune/measure/runner_protocol.h"

namespace tirtune {

/// Handles `request` in this process. An exception, a load failure, a non-zero kernel status or
/// a mismatch becomes the reply's kind; a crash or a hang inside the kernel takes this process
/// with it, which is why it runs in a worker.
RunReply HandleRunRequest(const RunRequest& request);

/// A request for a `cuda` target (RunRequest::object a GpuProgram), measured on this worker's
/// CUDA device (gpu_worker.cc); "no GPU to measure on" where there is none.
RunReply HandleGpuRunRequest(const RunRequest& request);
/// The CUDA device this worker measures on (default 0; `tirtune-runner --cuda-device N`).
void SetWorkerCudaDevice(int ordinal);
/// True once a driver error after a launch has left this worker's CUDA context unusable: the
/// worker exits after its reply.
bool WorkerGpuPoisoned();

/// The worker's main loop: reads requests from `in_fd` and writes replies to `out_fd` until end
/// of file. Returns the process exit code (0 at end of file, 2 for a malformed request).
int ServeRunRequests(int in_fd, int out_fd);

}  // namespace tirtune
