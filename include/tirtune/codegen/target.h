// The compilation target of the CPU code generator, written as a string such as
// "llvm -mcpu=znver5 -mattr=+avx2,-avx512f -num-cores=2". Without -mcpu it is the host.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tirtune {

struct Target {
  /// Always "llvm" for now (the CPU backend).
  std::string kind = "llvm";
  /// An LLVM CPU name ("znver5", "skylake-avx512", "x86-64-v3", ...). Default: the host's.
  std::string mcpu;
  /// Feature changes as LLVM writes them ("+avx2,-avx512f"); empty means the CPU's own features
  /// (the host's detected features when `mcpu` is the host CPU).
  std::string mattr;
  /// Threads that run parallel loops (the runtime pool's size and the chunk count of a
  /// parallel loop). Default: the CPUs this process may run on.
  int num_cores = 1;

  /// Parses the text form. Throws UserError naming the offending token for an unknown kind,
  /// an unknown option, a repeated option, an unknown CPU or feature, or a bad core count.
  static Target Parse(std::string_view text);
  /// The host: its CPU, its features and its usable CPU count.
  static Target Host();
  /// The canonical text form: "llvm -mcpu=CPU[ -mattr=FEATURES] -num-cores=N"; Parse(str())
  /// gives the same target.
  std::string str() const;

  friend bool operator==(const Target& a, const Target& b) = default;
};

/// The host CPU as LLVM names it (e.g. "znver5").
std::string HostCpuName();
/// CPUs this process may run on (its affinity mask).
int HostCoreCount();
/// The instruction-set features code compiled for `target` may use that this machine lacks
/// (LLVM's names, sorted, e.g. "avx512f"); empty when such code runs here.
std::vector<std::string> TargetFeaturesMissingOnHost(const Target& target);

}  // namespace tirtune
