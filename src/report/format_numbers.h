// How numbers read in the report's text and tables: latencies and durations with a unit,
// throughputs, ratios and dates. Internal to the report library.
#pragma once

#include <string>

namespace tirtune::report {

/// A kernel latency with a unit: "1.234 ms", "12.35 us", "1.500 s".
std::string FormatLatency(double seconds);
/// A tuning time: "5 ms", "48.2 s", "7.3 min", "2.1 h".
std::string FormatDuration(double seconds);
/// A throughput or another positive quantity, about four significant digits: "207.8", "12.35".
std::string FormatQuantity(double value);
/// A speed ratio: "0.977".
std::string FormatRatio(double ratio);
/// Unix seconds as "2026-11-22 10:00:00 UTC"; "an unknown time" for 0 or an absurd value.
std::string FormatUtc(double unix_seconds);

}  // namespace tirtune::report
