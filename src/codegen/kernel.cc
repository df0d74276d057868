// Kernel: a compiled entry point plus the parameter checks that make calling it safe from C++.
#include <utility>

#include "tirtune/codegen/build.h"
#include "tirtune/support/error.h"

namespace tirtune {

Kernel::Kernel(std::string name, TirtuneKernelFunc entry, std::vector<KernelParam> params,
               std::shared_ptr<void> owner, CompileStats stats)
    : name_(std::move(name)),
      entry_(entry),
      params_(std::move(params)),
      owner_(std::move(owner)),
      stats_(stats) {}

int32_t Kernel::Run(const std::vector<NDArray>& args) const {
  if (args.size() != params_.size()) {
    TT_USER_ERROR("kernel {} takes {} arguments, got {}", name_, params_.size(), args.size());
  }
  std::vector<void*> raw(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const NDArray& a = args[i];
    const KernelParam& p = params_[i];
    if (!a.defined()) TT_USER_ERROR("argument {} of kernel {} is an empty array", i, name_);
    if (a.dtype() != p.dtype) {
      TT_USER_ERROR("argument {} of kernel {} has type {}, expected {}", i, name_, a.dtype().str(),
                    p.dtype.str());
    }
    if (p.num_elements >= 0 && a.size() != p.num_elements) {
      TT_USER_ERROR("argument {} of kernel {} has {} elements, expected {}", i, name_, a.size(),
                    p.num_elements);
    }
    raw[i] = const_cast<void*>(a.raw());
  }
  return entry_(raw.data());
}

}  // namespace tirtune
