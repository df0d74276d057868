// The benchmark results file ("tirtune-bench/1", docs/BENCH_FORMAT.md): what a benchmark suite
// measured for tirtune and its baselines, read and checked for `tirtune report --bench`.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tirtune::report {

/// The value of the document's "schema" field.
inline constexpr const char* kBenchSchema = "tirtune-bench/1";

/// One implementation's result on one workload.
struct BenchTiming {
  /// Seconds per run of the final kernel (> 0).
  double latency_s = 0;
  /// Tuning trials and wall time, for implementations that tune.
  std::optional<int64_t> trials;
  std::optional<double> tuning_s;
  /// Whether the output was checked against a reference.
  std::optional<bool> verified;
  /// Trials and seconds of tuning until 90% and 95% of the final best throughput was reached.
  std::optional<int64_t> trials_to_90;
  std::optional<double> seconds_to_90;
  std::optional<int64_t> trials_to_95;
  std::optional<double> seconds_to_95;
  /// For a baseline: the ratio the run measured (baseline / tirtune latency, e.g. the median of
  /// per-pair ratios); absent, the report divides the latencies.
  std::optional<double> ratio;
};

struct BenchWorkload {
  std::string name;   // "gemm:1024,1024,1024"
  std::string group;  // "GEMM"
  std::string kind;   // "operator", "subgraph" or "network"
  double flops = 0;   // per run, a multiply-add counting 2
  BenchTiming tirtune;
  /// By baseline name ("onednn", "metaschedule"), in name order; may be empty.
  std::vector<std::pair<std::string, BenchTiming>> baselines;
};

struct BenchResults {
  std::string created_at;  // as written, e.g. "2026-11-22T10:00:00Z"
  std::string command;
  std::string budget_name;
  int64_t budget_trials = 0;
  /// "machine" and "versions" as (key, value as text) pairs, in key order.
  std::vector<std::pair<std::string, std::string>> machine;
  std::vector<std::pair<std::string, std::string>> versions;
  std::vector<BenchWorkload> workloads;
};

/// Checks a parsed document and reads it. UserError naming `source` (the file) and the JSON path
/// of the first bad field, e.g. "results.json: workloads[3].baselines.onednn.latency_s: expected
/// a positive number". Unknown fields are ignored.
BenchResults ParseBenchResults(const nlohmann::json& doc, std::string_view source);

/// Reads, parses and checks the file at `path` (UserError when it cannot be read, is not JSON,
/// or fails the checks of ParseBenchResults).
BenchResults ReadBenchResults(const std::string& path);

}  // namespace tirtune::report
