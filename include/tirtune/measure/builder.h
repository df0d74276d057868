// Compiling a batch of scheduled candidates in parallel, on a TBB task arena capped at
// BuilderConfig::num_jobs: for a CPU target lowering then LLVM code generation (relocatable
// objects), for a cuda target GPU lowering, NVRTC and the resource gates (GpuPrograms). Each
// candidate gets a BuildResult; nothing one candidate does (an exception, a rejected construct)
// escapes or affects the others.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tirtune/codegen/build.h"
#include "tirtune/codegen/target.h"
#include "tirtune/ir/function.h"
#include "tirtune/lower/lower.h"

namespace tirtune {

struct BuilderConfig {
  /// Candidates compiled at once. Default 0: one per hardware thread of this machine.
  int num_jobs = 0;
  /// Passed to Lower. Default LowerOptions{}.
  LowerOptions lower;
  /// Passed to EmitObject (CPU targets). Default CodegenOptions{} (O3 for the target CPU).
  CodegenOptions codegen;
};

enum class BuildStatus {
  kOk,
  kLoweringError,  // Lower (LowerGpu) rejected the scheduled function
  kCodegenError,   // the backend rejected the lowered function, or a kernel failed the gates
};
/// "ok", "lowering_error", "codegen_error".
const char* BuildStatusName(BuildStatus status);

struct BuildResult {
  BuildStatus status = BuildStatus::kOk;
  /// Empty when ok; otherwise the error, prefixed by the phase that raised it.
  std::string message;
  /// When ok: the relocatable object (EmitObject) for a CPU target; for a cuda target the
  /// serialized GpuProgram (a cubin that passed CheckResourceGates and its launches).
  std::string object;
  /// The symbol the object defines: the function's name.
  std::string func_name;
  /// The parameters the kernel reads packed (Schedule::TransformLayout): index -> the layout's
  /// JSON, which the candidate's ArgSpec carries to the runner.
  std::map<int, std::string> packed_layouts;
  /// Wall time of this candidate's lowering and code generation.
  double build_ms = 0;
  bool ok() const { return status == BuildStatus::kOk; }
};

class Builder {
 public:
  /// UserError when num_jobs is negative.
  explicit Builder(BuilderConfig config = {});

  /// Compiles every scheduled function for `target`; one result per function, in order. Never
  /// throws for a candidate's failure.
  std::vector<BuildResult> Build(const std::vector<PrimFunc>& scheduled,
                                 const Target& target) const;
  BuildResult BuildOne(const PrimFunc& scheduled, const Target& target) const;

  /// The number of candidates compiled at once.
  int num_jobs() const { return num_jobs_; }

 private:
  BuildResult BuildCpu(const PrimFunc& scheduled, const Target& target) const;
  BuildResult BuildCuda(const PrimFunc& scheduled, const Target& target) const;

  BuilderConfig config_;
  int num_jobs_;
};

}  // namespace tirtune
