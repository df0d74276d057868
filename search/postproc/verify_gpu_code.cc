// VerifyGpuCode: a GPU schedule is kept only when it lowers to kernels the device can run:
// LowerGpu with the target's limits succeeds (every statement inside a kernel, thread and block
// extents, vthreads and shared memory within the limits, a cross-thread reduction it can lower)
// and the scheduled function is well formed. What only the compiled kernel shows (registers,
// spills) is gated by the builder (CheckResourceGates).
#include "tirtune/ir/verify.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/search/space.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

class VerifyGpuCode : public Postproc {
 public:
  explicit VerifyGpuCode(const GpuLimits& limits) : limits_(limits) {}

  std::string name() const override { return "VerifyGpuCode"; }

  bool Apply(Schedule& sch) override {
    if (!VerifyWellFormed(sch.func()).empty()) return false;
    try {
      LowerGpu(sch.func(), limits_);
    } catch (const UserError&) {
      return false;
    } catch (const InternalError&) {
      return false;
    }
    return true;
  }

 private:
  GpuLimits limits_;
};

}  // namespace

std::shared_ptr<Postproc> MakeVerifyGpuCode(const GpuSpaceConfig& config) {
  return std::make_shared<VerifyGpuCode>(config.limits);
}

}  // namespace tirtune
