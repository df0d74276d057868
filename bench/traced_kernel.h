// What the one-kernel benchmarks (timing_paths.cc, retime_mix.cc) share: a workload's function
// scheduled by a trace file, the runner's candidate of it once built, and the median of samples.
#pragma once

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tirtune/measure/builder.h"
#include "tirtune/measure/runner.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/schedule/trace.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The contents of the file `path` (empty when it cannot be read).
inline std::string ReadText(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// `func` with the trace in the JSON file `path` applied.
inline Schedule ScheduledByTraceFile(const PrimFunc& func, const char* path) {
  Schedule sch(func);
  Trace::FromJson(nlohmann::json::parse(ReadText(path))).ApplyTo(sch);
  return sch;
}

/// `w`'s function with the trace in the JSON file `path` applied.
inline Schedule ScheduledByTraceFile(const Workload& w, const char* path) {
  return ScheduledByTraceFile(w.func, path);
}

/// The runner's candidate of `built` (`w`'s function built for `target`), on seed 1.
inline MeasureCandidate CandidateOf(const Workload& w, const BuildResult& built,
                                    const Target& target) {
  MeasureCandidate c;
  c.object = built.object;
  c.func_name = built.func_name;
  c.target = target.str();
  c.args = ArgSpecsOf(w.func);
  c.seed = 1;
  return c;
}

}  // namespace tirtune
