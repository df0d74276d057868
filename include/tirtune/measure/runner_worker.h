// What a `tirtune-runner` worker does with one request: load the object, build seeded random
// arguments, run once, verify against the expected outputs, then time. Kept apart from the
// process plumbing so that it can be tested in-process.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/measure/runner_protocol.h"
#include "tirtune/offload/library.h"

namespace tirtune {

/// Handles `request` in this process. An exception, a load failure, a non-zero kernel status or
/// a mismatch becomes the reply's kind; a crash or a hang inside the kernel takes this process
/// with it, which is why it runs in a worker.
RunReply HandleRunRequest(const RunRequest& request);

/// A reply of `kind` saying `message`.
RunReply FailureReply(ReplyKind kind, std::string message);

/// What follows a candidate's verification run (its parameters `args` after the run, which took
/// `first_run` seconds), shared by the CPU and GPU workers: the reply itself when no timing
/// follows (return_outputs; a mismatch, or expected outputs that do not fit; a run slower than
/// the slow-candidate cutoff, its only sample), else nullopt with the verified run's largest
/// errors in `*verified`, the reply to complete with timings.
std::optional<RunReply> ReplyBeforeTiming(const RunRequest& request, std::vector<NDArray>& args,
                                          double first_run, RunReply* verified);

/// The request's parameters filled by FillRandom(seed + i) over RandomRangeFor(dtype), exactly as
/// InterpretWithRandomInputs draws them, then the values the specs state (FillStatedValues); fresh
/// copies of the last request's when its seed and parameters are the same (a task's candidates
/// all are: a GEMM 4096^3's 48 M values are drawn once, not once per candidate).
std::vector<NDArray> SeededArgs(const RunRequest& request);

/// The memory a timer with cold constants (TimerConfig::cold_constants) evicts before each call
/// of a candidate run on `args`: the arguments the request's specs mark constant.
std::vector<ByteRange> ConstantArgs(const RunRequest& request, const std::vector<NDArray>& args);

/// The library's kernel of a library candidate (RunRequest::library) on `args`, its seeded
/// parameters (the composite's arguments, any of which may be a constant, then its result),
/// built with `options`; the backend must run on a GPU exactly when `on_gpu`. Throws what the
/// library says (the caller replies "cannot build the library's kernel: ...").
std::unique_ptr<offload::LibraryKernel> BuildRequestedLibraryKernel(
    const RunRequest& request, const std::vector<NDArray>& args, bool on_gpu,
    const offload::LibraryOptions& options);

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
