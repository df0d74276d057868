// Out-of-line construction of internal errors, so that the check macros stay small.
#include "tirtune/support/error.h"

namespace tirtune {

void ThrowInternalError(const char* file, int line, const char* condition,
                        const std::string& message) {
  std::string what =
      fmt::format("internal error at {}:{}: check `{}` failed", file, line, condition);
  if (!message.empty()) what += ": " + message;
  throw InternalError(what);
}

}  // namespace tirtune
