// Rendering of schedule errors.
#include "tirtune/schedule/error.h"

#include <fmt/format.h>

#include "tirtune/ir/printer.h"

namespace tirtune {

std::string ScheduleError::DetailedMessage(const PrimFunc& func) const {
  PrintOptions options;
  options.marked = Locations();
  options.mark_message = Kind();
  return fmt::format("{}: {}\n{}", Kind(), Explanation(), Print(func, options));
}

const char* ScheduleError::what() const noexcept {
  if (what_.empty()) {
    try {
      what_ = std::string(Kind()) + ": " + ShortMessage();
    } catch (...) {
      return "ScheduleError";
    }
  }
  return what_.c_str();
}

}  // namespace tirtune
