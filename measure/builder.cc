// The parallel builder: a TBB arena of num_jobs threads, one candidate per task. A CPU candidate
// becomes a relocatable object; a cuda candidate a GpuProgram (kernels lowered, compiled by
// NVRTC and nvJitLink, and passed through the resource gates).
#include "tirtune/measure/builder.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <exception>
#include <thread>

#include "tirtune/codegen/cuda.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/measure/gpu_program.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// What an exception says, whatever its type.
std::string Describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

BuildResult Failure(BuildStatus status, const char* phase, const std::exception_ptr& error) {
  BuildResult result;
  result.status = status;
  result.message = std::string(phase) + ": " + Describe(error);
  return result;
}

}  // namespace

const char* BuildStatusName(BuildStatus status) {
  switch (status) {
    case BuildStatus::kOk:
      return "ok";
    case BuildStatus::kLoweringError:
      return "lowering_error";
    case BuildStatus::kCodegenError:
      return "codegen_error";
  }
  return "unknown";
}

Builder::Builder(BuilderConfig config) : config_(std::move(config)) {
  if (config_.num_jobs < 0) throw UserError("BuilderConfig.num_jobs must not be negative");
  num_jobs_ = config_.num_jobs > 0
                  ? config_.num_jobs
                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

BuildResult Builder::BuildOne(const PrimFunc& scheduled, const Target& target) const {
  auto start = std::chrono::steady_clock::now();
  BuildResult result;
  if (target.is_cuda()) {
    result = BuildCuda(scheduled, target);
  } else {
    result = BuildCpu(scheduled, target);
  }
  if (result.ok()) {
    for (const auto& [index, layout] : PackedParams(scheduled)) {
      result.packed_layouts[index] = layout.ToJson();
    }
  }
  result.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

BuildResult Builder::BuildCpu(const PrimFunc& scheduled, const Target& target) const {
  BuildResult result;
  PrimFunc lowered;
  try {
    lowered = Lower(scheduled, config_.lower);
  } catch (...) {
    result = Failure(BuildStatus::kLoweringError, "lowering", std::current_exception());
  }
  if (lowered.defined()) {
    try {
      result.object = EmitObject(lowered, target, config_.codegen);
      result.func_name = lowered->name;
    } catch (...) {
      result = Failure(BuildStatus::kCodegenError, "code generation", std::current_exception());
    }
  }
  return result;
}

BuildResult Builder::BuildCuda(const PrimFunc& scheduled, const Target& target) const {
  GpuModule module;
  try {
    module = LowerGpu(scheduled, target.gpu, config_.lower);
  } catch (...) {
    return Failure(BuildStatus::kLoweringError, "lowering", std::current_exception());
  }
  BuildResult result;
  try {
    result.object = GpuProgram::Of(module, CompileCudaGated(module, target)).Serialize();
    result.func_name = module.name;
  } catch (...) {
    return Failure(BuildStatus::kCodegenError, "CUDA compilation", std::current_exception());
  }
  return result;
}

std::vector<BuildResult> Builder::Build(const std::vector<PrimFunc>& scheduled,
                                        const Target& target) const {
  std::vector<BuildResult> results(scheduled.size());
  auto build_guarded = [&](size_t i) {
    // BuildOne catches everything a candidate can raise; this guard keeps even an allocation
    // failure while recording the result inside the candidate's slot.
    try {
      results[i] = BuildOne(scheduled[i], target);
    } catch (...) {
      results[i] = Failure(BuildStatus::kCodegenError, "build", std::current_exception());
    }
  };
  if (scheduled.size() <= 1 || num_jobs_ == 1) {
    for (size_t i = 0; i < scheduled.size(); ++i) build_guarded(i);
    return results;
  }
  tbb::task_arena arena(num_jobs_);
  arena.execute([&] { tbb::parallel_for(size_t{0}, scheduled.size(), build_guarded); });
  return results;
}

}  // namespace tirtune
