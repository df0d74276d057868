// Questions about LLVM's knowledge of CPUs and features, answered by the LLVM backend
// (llvm_backend.cc) for the target parser, which itself stays free of LLVM headers.
#pragma once

#include <string>

namespace tirtune::codegen {

/// True when the host architecture's LLVM backend knows `cpu`.
bool IsKnownCpu(const std::string& cpu);
/// True when the host architecture's LLVM backend knows the feature `name` (without +/-).
bool IsKnownFeature(const std::string& name);

}  // namespace tirtune::codegen
