// MakeWorkloadEntry and ParseWorkloadText.
#include "workload_text.h"

#include "record_check.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune::database_internal {

WorkloadEntry MakeWorkloadEntry(const PrimFunc& func) {
  TT_ICHECK(func.get() != nullptr, "committing a null workload");
  WorkloadEntry e;
  e.shash = StructuralHashHex(func);
  e.name = func->name;
  e.text = Print(func);
  e.func = func;
  e.created_at = NowUnixSeconds();
  return e;
}

std::optional<PrimFunc> ParseWorkloadText(std::string_view text, std::string* problem) {
  try {
    return ParsePrimFunc(text, "<stored workload>");
  } catch (const UserError& e) {
    *problem = std::string("workload text does not parse: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace tirtune::database_internal
