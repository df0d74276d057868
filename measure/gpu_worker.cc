// The GPU half of a `tirtune-runner` worker: a request whose target is `cuda ...` carries a
// GpuProgram (gpu_program.h). The worker keeps one CUDA context for its device, loads the cubin,
// fills the parameters exactly as the CPU path does (FillRandom(seed + i)), runs the launches once
// and verifies every parameter against the expected outputs with the CPU's tolerances; only a
// verified kernel is timed: each sample is one run of all launches between CUDA events after an
// L2 flush, at least `repeat` samples and more until `min_repeat_ms` of them (at most 100). A
// request with a library composite instead runs that GPU library's kernel (offload/library.h) on
// the same parameters, verified and timed the same way.
// Kernels run with the device's lock held (device_lock.h), so that tuners side by side on one
// host never time a kernel while another's runs. A driver error poisons the context for good:
// the reply says so (RunReply::restart) and the worker exits after sending it, so that
// RunnerPool starts a fresh one.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>

#include "tirtune/interp/interpreter.h"
#include "tirtune/measure/device_lock.h"
#include "tirtune/measure/gpu_program.h"
#include "tirtune/measure/runner_worker.h"
#include "tirtune/offload/library.h"
#include "tirtune/runtime/cuda_driver.h"

namespace tirtune {
namespace {

constexpr int kMaxSamples = 100;

struct GpuWorkerState {
  int device = 0;
  std::unique_ptr<cuda::Context> context;
  cuda::DeviceBuffer flush;
  cuda::DeviceBuffer workspace;  // a GPU library's scratch memory
  int flushes = 0;
  std::string lock_path;
  bool poisoned = false;
};

GpuWorkerState& State() {
  static GpuWorkerState state;
  return state;
}

}  // namespace

void SetWorkerCudaDevice(int ordinal) { State().device = ordinal; }

bool WorkerGpuPoisoned() { return State().poisoned; }

namespace {

// The parameters as the CPU path draws them, uploaded; `extra` more buffers of the given bytes
// after them, filled with 0xff bytes (NaN in every float, so that a read before a write shows).
std::vector<cuda::DeviceBuffer> Upload(cuda::Context& ctx, const std::vector<NDArray>& args,
                                       const std::vector<int64_t>& extra) {
  std::vector<cuda::DeviceBuffer> buffers;
  for (const NDArray& a : args) {
    buffers.push_back(ctx.Allocate(static_cast<size_t>(std::max<int64_t>(a.nbytes(), 1))));
    ctx.CopyToDevice(buffers.back(), a.raw(), static_cast<size_t>(a.nbytes()));
  }
  for (int64_t bytes : extra) {
    buffers.push_back(ctx.Allocate(static_cast<size_t>(std::max<int64_t>(bytes, 1))));
    ctx.Fill(buffers.back(), 0xff);
  }
  return buffers;
}

// Runs `run_all` once, reads every parameter back and verifies it (a wrong kernel is never
// timed), then times it: each sample one run after an L2 flush.
RunReply VerifyAndTime(GpuWorkerState& s, const RunRequest& request, std::vector<NDArray>& args,
                       const std::vector<cuda::DeviceBuffer>& buffers,
                       const std::function<void()>& run_all) {
  cuda::Context& ctx = *s.context;
  auto flush = [&] { ctx.Fill(s.flush, static_cast<uint8_t>(++s.flushes)); };
  double first = 0;
  {
    DeviceLock lock(s.lock_path);
    first = ctx.TimeMs(flush, run_all) / 1e3;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    ctx.CopyToHost(args[i].raw(), buffers[i], static_cast<size_t>(args[i].nbytes()));
  }
  RunReply reply;
  if (std::optional<RunReply> early = ReplyBeforeTiming(request, args, first, &reply)) {
    return *early;
  }
  DeviceLock lock(s.lock_path);
  for (int w = 1; w < request.timer.warmup; ++w) ctx.TimeMs(flush, run_all);
  std::vector<double> samples;
  double total = 0;
  while (samples.size() < static_cast<size_t>(std::max(1, request.timer.repeat)) ||
         (total * 1e3 < request.timer.min_repeat_ms && samples.size() < kMaxSamples)) {
    samples.push_back(ctx.TimeMs(flush, run_all) / 1e3);
    total += samples.back();
  }
  reply.timing = SummarizeSamples(std::move(samples), 1);
  return reply;
}

// A compiled kernel: the GpuProgram's cubin and launches.
RunReply RunProgram(GpuWorkerState& s, const RunRequest& request, const GpuProgram& program,
                    bool* launched) {
  cuda::Context& ctx = *s.context;
  cuda::Module module;
  try {
    module = ctx.Load(program.cubin);
  } catch (const cuda::CudaError& e) {
    return FailureReply(ReplyKind::kRuntimeError,
                        std::string("cannot load the cubin: ") + e.what());
  }
  std::vector<cuda::Kernel> kernels;
  for (const GpuProgram::Launch& l : program.launches) kernels.push_back(module.Function(l.kernel));
  std::vector<NDArray> args = SeededArgs(request);
  std::vector<int64_t> intermediates;
  for (const GpuProgram::Intermediate& i : program.intermediates) {
    intermediates.push_back(i.elements * i.dtype.bytes());
  }
  std::vector<cuda::DeviceBuffer> buffers = Upload(ctx, args, intermediates);
  std::vector<std::vector<uint64_t>> addresses;
  for (const GpuProgram::Launch& l : program.launches) {
    std::vector<uint64_t> a;
    for (int b : l.args) {
      if (b < 0 || static_cast<size_t>(b) >= buffers.size()) {
        return FailureReply(ReplyKind::kRuntimeError, fmt::format("kernel {} takes buffer {} of {}",
                                                                  l.kernel, b, buffers.size()));
      }
      a.push_back(buffers[static_cast<size_t>(b)].address());
    }
    addresses.push_back(std::move(a));
  }
  auto run_all = [&] {
    for (size_t k = 0; k < kernels.size(); ++k) {
      std::vector<void*> values;
      for (uint64_t& a : addresses[k]) values.push_back(&a);
      const GpuProgram::Launch& l = program.launches[k];
      ctx.Launch(kernels[k], l.grid, l.block, l.dynamic_shared_bytes, values);
    }
  };
  *launched = true;
  return VerifyAndTime(s, request, args, buffers, run_all);
}

// A library candidate: the GPU library's kernel of the composite, on the seeded parameters
// uploaded (the composite's arguments, then its result), with the worker's scratch memory.
RunReply RunLibrary(GpuWorkerState& s, const RunRequest& request, bool* launched) {
  cuda::Context& ctx = *s.context;
  std::vector<NDArray> args = SeededArgs(request);
  if (args.empty()) return FailureReply(ReplyKind::kRuntimeError, "a library call without result");
  if (s.workspace.bytes() == 0) s.workspace = ctx.Allocate(offload::kGpuLibraryWorkspaceBytes);
  std::unique_ptr<offload::LibraryKernel> kernel;
  try {
    kernel = BuildRequestedLibraryKernel(
        request, args, true,
        {.gpu_workspace = s.workspace.address(), .gpu_workspace_bytes = s.workspace.bytes()});
  } catch (const std::exception& e) {
    return FailureReply(ReplyKind::kRuntimeError,
                        std::string("cannot build the library's kernel: ") + e.what());
  }
  std::vector<cuda::DeviceBuffer> buffers = Upload(ctx, args, {});
  std::vector<const void*> inputs;
  for (size_t i = 0; i + 1 < buffers.size(); ++i) {
    inputs.push_back(reinterpret_cast<const void*>(buffers[i].address()));
  }
  void* out = reinterpret_cast<void*>(buffers.back().address());
  *launched = true;
  // Once untimed: the library loads the kernels it chose on their first call, which the
  // verified run would count (and the slow cutoff may judge it by). The result is overwritten.
  kernel->Run(inputs, out);
  ctx.Synchronize();
  return VerifyAndTime(s, request, args, buffers, [&] { kernel->Run(inputs, out); });
}

}  // namespace

RunReply HandleGpuRunRequest(const RunRequest& request) {
  GpuWorkerState& s = State();
  GpuProgram program;  // a damaged one is reported with or without a GPU
  if (request.library.empty()) {
    try {
      program = GpuProgram::Deserialize(request.object);
    } catch (const std::exception& e) {
      return FailureReply(ReplyKind::kRuntimeError, e.what());
    }
  }
  try {
    if (!s.context) {
      s.context = std::make_unique<cuda::Context>(s.device);
      s.lock_path = DeviceLockPath(s.context->info().PciLocation());
    }
    if (s.flush.bytes() == 0) {  // twice the L2, to flush it before every sample
      s.flush = s.context->Allocate(static_cast<size_t>(
          std::max<int64_t>(2 * s.context->info().l2_bytes, int64_t{64} << 20)));
    }
  } catch (const std::exception& e) {
    return FailureReply(ReplyKind::kRuntimeError, std::string("no GPU to measure on: ") + e.what());
  }
  bool launched = false;
  try {
    return request.library.empty() ? RunProgram(s, request, program, &launched)
                                   : RunLibrary(s, request, &launched);
  } catch (const cuda::CudaError& e) {
    // After a launch, an error may be the kernel's fault and leaves the context unusable.
    RunReply reply = FailureReply(ReplyKind::kRuntimeError, e.what());
    if (launched) {
      s.poisoned = true;
      reply.restart = true;
    }
    return reply;
  } catch (const std::exception& e) {
    return FailureReply(ReplyKind::kRuntimeError, e.what());
  }
}

}  // namespace tirtune
