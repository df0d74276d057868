// VerifyLowers: rejects a schedule that is not well formed or that the lowering recipe does not
// accept, so that every candidate the search hands to the builder compiles. A lowering bug
// (InternalError) on one candidate rejects that candidate instead of ending the tuning run.
#include "tirtune/ir/verify.h"
#include "tirtune/lower/lower.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

class VerifyLowers : public Postproc {
 public:
  std::string name() const override { return "VerifyLowers"; }

  bool Apply(Schedule& sch) override {
    if (!VerifyWellFormed(sch.func()).empty()) return false;
    try {
      Lower(sch.func());
    } catch (const UserError&) {
      return false;
    } catch (const InternalError&) {
      return false;
    }
    return true;
  }
};

}  // namespace

std::shared_ptr<Postproc> MakeVerifyLowers() { return std::make_shared<VerifyLowers>(); }

}  // namespace tirtune
