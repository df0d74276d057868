// What the GPU backends' kernels (cuBLAS, cuDNN) share: their description, the arity of the call
// checked on each run, and the arguments' device addresses. Private to src/offload/.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tirtune/offload/library.h"
#include "tirtune/support/error.h"

namespace tirtune::offload {

class GpuLibraryKernel : public LibraryKernel {
 public:
  std::string Describe() const final { return describe_; }

 protected:
  GpuLibraryKernel(std::string describe, size_t arity, const LibraryOptions& options)
      : describe_(std::move(describe)), arity_(arity), options_(options) {}

  /// The library's call is prepared at Build when a GPU's scratch memory is given (built to run:
  /// the first run is the one verified and may be timed), else on the first run.
  bool BuiltToRun() const { return options_.gpu_workspace != 0; }
  const LibraryOptions& options() const { return options_; }

  /// UserError unless `args` has the call's arity.
  void CheckArity(const std::vector<const void*>& args) const {
    if (args.size() != arity_) {
      TT_USER_ERROR("{}: {} arguments, expected {}", describe_, args.size(), arity_);
    }
  }
  /// The device address of argument `arg`; 0 for -1 (none).
  static uint64_t Address(const std::vector<const void*>& args, int arg) {
    return arg < 0 ? uint64_t{0} : reinterpret_cast<uint64_t>(args[static_cast<size_t>(arg)]);
  }

 private:
  std::string describe_;
  size_t arity_;
  LibraryOptions options_;
};

}  // namespace tirtune::offload
