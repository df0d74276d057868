// Number and date formatting for the report.
#include "format_numbers.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cmath>
#include <ctime>

namespace tirtune::report {

std::string FormatLatency(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  if (seconds >= 1) return fmt::format("{:.3f} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.3f} ms", seconds * 1e3);
  return fmt::format("{:.2f} us", seconds * 1e6);
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1e3);
  if (seconds < 120) return fmt::format("{:.1f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

std::string FormatQuantity(double value) {
  double a = std::fabs(value);
  if (!std::isfinite(value)) return "n/a";
  if (a >= 1e6 || (a > 0 && a < 1e-3)) return fmt::format("{:.3g}", value);
  if (a >= 100) return fmt::format("{:.1f}", value);
  if (a >= 10) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3f}", value);
}

std::string FormatRatio(double ratio) {
  if (!std::isfinite(ratio)) return "n/a";
  return fmt::format("{:.3f}", ratio);
}

std::string FormatUtc(double unix_seconds) {
  if (!(unix_seconds > 0 && unix_seconds < 1e11)) return "an unknown time";
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(t));
}

}  // namespace tirtune::report
