// What every Runner shares: status names and the argument specs of a function.
#include "tirtune/measure/runner.h"

#include <algorithm>

#include "tirtune/ir/expr.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/support/error.h"

namespace tirtune {

const char* MeasureStatusName(MeasureStatus status) {
  switch (status) {
    case MeasureStatus::kOk:
      return "ok";
    case MeasureStatus::kBuildError:
      return "build_error";
    case MeasureStatus::kRuntimeError:
      return "runtime_error";
    case MeasureStatus::kTimeout:
      return "timeout";
    case MeasureStatus::kWrongResult:
      return "wrong_result";
    case MeasureStatus::kRunnerLost:
      return "runner_lost";
    case MeasureStatus::kDeviceLost:
      return "device_lost";
  }
  return "unknown";
}

std::vector<ArgSpec> ArgSpecsOf(const PrimFunc& func) {
  std::vector<ArgSpec> specs;
  const std::vector<int> constants = LayoutFreeParams(func);
  for (const Buffer& b : func->params) {
    ArgSpec spec;
    spec.name = b->name;
    spec.dtype = b->dtype;
    for (const Expr& extent : b->shape) {
      const auto* imm = extent.as<IntImmNode>();
      if (imm == nullptr) throw UserError("parameter " + b->name + " has a non-constant shape");
      spec.shape.push_back(imm->value);
    }
    spec.constant = std::find(constants.begin(), constants.end(), static_cast<int>(specs.size())) !=
                    constants.end();
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace tirtune
