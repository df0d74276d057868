// DisallowDynamicLoop: rejects a schedule with a loop whose extent is not a constant; the CPU
// postprocessors and the cost model reason about constant trip counts only.
#include "tirtune/ir/functor.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class DisallowDynamicLoop : public Postproc {
 public:
  std::string name() const override { return "DisallowDynamicLoop"; }

  bool Apply(Schedule& sch) override {
    bool dynamic = false;
    PreOrderVisit(sch.func()->body, [&](const Object* node) {
      if (node->kind() == NodeKind::kFor) {
        const auto* loop = static_cast<const ForNode*>(node);
        dynamic =
            dynamic || AsConstInt(loop->extent) == nullptr || AsConstInt(loop->min) == nullptr;
      }
      return !dynamic && node->kind() >= NodeKind::kFor;  // statements only
    });
    return !dynamic;
  }
};

}  // namespace

std::shared_ptr<Postproc> MakeDisallowDynamicLoop() {
  return std::make_shared<DisallowDynamicLoop>();
}

}  // namespace tirtune
