// The compilation target, written as a string. A CPU target: "llvm -mcpu=znver5
// -mattr=+avx2,-avx512f -num-cores=2" (without -mcpu it is the host). A GPU target:
// "cuda -arch=sm_90 -max-threads-per-block=512 -host=\"llvm -mcpu=znver5\"": the arch gives the
// limits of lower/gpu_limits.h, options lower them, and -host names the CPU that runs the
// launcher (default: this host).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tirtune/lower/gpu_limits.h"

namespace tirtune {

struct Target {
  /// "llvm" (the CPU backend) or "cuda".
  std::string kind = "llvm";
  /// An LLVM CPU name ("znver5", "skylake-avx512", "x86-64-v3", ...). Default: the host's. For a
  /// cuda target: the CPU of the host code (the launcher).
  std::string mcpu;
  /// Feature changes as LLVM writes them ("+avx2,-avx512f"); empty means the CPU's own features
  /// (the host's detected features when `mcpu` is the host CPU).
  std::string mattr;
  /// Threads that run parallel loops (the runtime pool's size and the chunk count of a
  /// parallel loop). Default: the CPUs this process may run on.
  int num_cores = 1;

  /// cuda only: the GPU architecture, "sm_80", "sm_89" or "sm_90". Default "sm_90".
  std::string arch;
  /// cuda only: the arch's limits, lowered where an option asked.
  GpuLimits gpu;
  /// cuda only: whether -host was given. Only then does str() print it, so that the database key
  /// of a GPU target does not depend on the CPU of the machine that tuned it.
  bool explicit_host = false;

  /// Parses the text form. Throws UserError naming the offending token for an unknown kind,
  /// an unknown option, a repeated option, an unknown CPU, feature or arch, a bad core count, or
  /// a GPU limit that is not a positive integer within what the arch allows.
  static Target Parse(std::string_view text);
  /// The host: its CPU, its features and its usable CPU count.
  static Target Host();
  /// The canonical text form: "llvm -mcpu=CPU[ -mattr=FEATURES] -num-cores=N", or
  /// "cuda -arch=SM[ -OPTION=N for every limit below the arch's][ -host=\"CPU TARGET\"]";
  /// Parse(str()) gives the same target.
  std::string str() const;

  bool is_cuda() const { return kind == "cuda"; }
  /// The CPU side: the target itself for llvm, the launcher's CPU target for cuda.
  Target HostTarget() const;
  /// The limits an arch allows ("sm_90" → 227 KiB of dynamic shared memory, ...); UserError for
  /// an arch tirtune does not know.
  static GpuLimits LimitsOfArch(std::string_view arch);

  friend bool operator==(const Target& a, const Target& b) = default;
};

/// Throws UserError when `target` is not a CPU target: "`what` needs a CPU target (llvm ...);
/// TARGET is a cuda target". For code that compiles or runs CPU kernels.
void RequireCpuTarget(const Target& target, std::string_view what);

/// The host CPU as LLVM names it (e.g. "znver5").
std::string HostCpuName();
/// CPUs this process may run on (its affinity mask).
int HostCoreCount();
/// The instruction-set features code compiled for `target` may use that this machine lacks
/// (LLVM's names, sorted, e.g. "avx512f"); empty when such code runs here. For a cuda target:
/// those of its host code.
std::vector<std::string> TargetFeaturesMissingOnHost(const Target& target);

}  // namespace tirtune
