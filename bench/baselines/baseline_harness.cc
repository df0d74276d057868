// BaselineMain: command line, the check against the reference, timing and the JSON line.
#include "baselines/baseline_harness.h"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string_view>

#include "tirtune/measure/timer.h"

namespace tirtune::bench {
namespace {

/// Outputs up to this size are checked element by element on every run; larger ones on this
/// many elements (the first, the last and the rest drawn at random), unless --check asks for all.
constexpr int64_t kCheckedElements = 4096;

/// Parses "1,56,56,64" into integers; returns false on anything else.
bool ParseInts(std::string_view text, std::vector<int64_t>& out) {
  out.clear();
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || ptr != item.data() + item.size()) return false;
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return false;  // a trailing comma
  }
  return !out.empty();
}

/// The indices the check compares: all of them, or a sample that always holds both ends.
std::vector<int64_t> IndicesToCheck(int64_t size, bool all) {
  std::vector<int64_t> indices;
  if (all || size <= kCheckedElements) {
    indices.resize(size);
    for (int64_t i = 0; i < size; ++i) indices[i] = i;
    return indices;
  }
  std::mt19937_64 rng(/*seed=*/7);
  std::uniform_int_distribution<int64_t> pick(1, size - 2);
  indices = {0, size - 1};
  while (static_cast<int64_t>(indices.size()) < kCheckedElements) indices.push_back(pick(rng));
  return indices;
}

struct CheckResult {
  int64_t elements = 0;
  double max_abs_error = 0;
  double max_abs_reference = 0;
  double rtol = 0;
  /// Empty when the output matches; otherwise what is wrong.
  std::string error;
};

/// Compares the output with the reference: |error| <= rtol * max |reference| on every element
/// checked. rtol is 1e-4, or more for long reductions (8 eps sqrt(K), the bound tirtune itself
/// verifies float32 candidates with), since a different summation order is not a wrong result.
CheckResult Check(const BaselineRun& b, bool all) {
  CheckResult r;
  r.rtol = std::max(1e-4, 8 * std::numeric_limits<float>::epsilon() *
                              std::sqrt(static_cast<double>(b.reduction_length)));
  const float* got = b.output();
  std::vector<int64_t> indices = IndicesToCheck(b.output_size, all);
  r.elements = static_cast<int64_t>(indices.size());
  int64_t worst = -1;
  double worst_ref = 0;
  for (int64_t i : indices) {
    double ref = b.reference(i);
    r.max_abs_reference = std::max(r.max_abs_reference, std::abs(ref));
    double err = std::abs(static_cast<double>(got[i]) - ref);
    if (std::isnan(err)) err = std::numeric_limits<double>::infinity();
    if (worst < 0 || err > r.max_abs_error) {
      r.max_abs_error = err;
      worst = i;
      worst_ref = ref;
    }
  }
  double bound = r.rtol * std::max(r.max_abs_reference, 1e-30);
  if (!(r.max_abs_error <= bound)) {
    r.error = fmt::format(
        "wrong result: output element {} is {} but the reference gives {} (|error| {:.3g} > "
        "{:.3g} = {:.3g} * max |reference| over {} elements checked)",
        worst, got[worst], worst_ref, r.max_abs_error, bound, r.rtol, r.elements);
  }
  return r;
}

const BaselineOperator* Find(const std::vector<BaselineOperator>& operators,
                             std::string_view name) {
  for (const BaselineOperator& op : operators) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

void CheckArgs(const std::vector<int64_t>& args, size_t min, size_t max, const std::string& params,
               int may_be_zero) {
  if (args.size() < min || args.size() > max) {
    throw BadArguments(min == max
                           ? fmt::format("expected {} arguments ({})", min, params)
                           : fmt::format("expected {} to {} arguments ({})", min, max, params));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (static_cast<int>(i) == may_be_zero ? args[i] < 0 : args[i] < 1) {
      throw BadArguments(
          fmt::format("argument {} ({}) must be {}", i + 1, args[i],
                      static_cast<int>(i) == may_be_zero ? "0 or more" : "positive"));
    }
  }
}

int BaselineMain(int argc, char** argv, const BaselineLibrary& library,
                 const std::vector<BaselineOperator>& operators) {
  CLI::App app{fmt::format(
      "Times the {} baseline of a tirtune workload (NAME:ARGS) in this process and prints one "
      "JSON line; the output is checked against a double-precision reference first. Threads: "
      "OMP_NUM_THREADS.",
      library.name)};
  std::string spec;
  bool check_all = false, fused = false, list = false, version = false;
  TimerConfig timer;
  app.add_option("workload", spec, "NAME:ARGS, as `tirtune workload list` names them");
  app.add_flag("--check", check_all,
               "compare every output element with the reference and stop (no timing)");
  app.add_flag("--fused", fused,
               "subgraphs: fuse the elementwise tail into the main primitive (post-ops)");
  app.add_option("--repeat", timer.repeat, "timed repeats (default 5, as `tirtune time`)")
      ->check(CLI::PositiveNumber);
  app.add_option("--min-repeat-ms", timer.min_repeat_ms, "minimum length of a repeat (50)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--flush-cache", timer.flush_cache, "flush caches between repeats");
  app.add_flag("--list", list, "list the workloads this program has a baseline for");
  app.add_flag("--version", version, "print the library's version as JSON");
  CLI11_PARSE(app, argc, argv);

  if (version) {
    fmt::print("{}\n", nlohmann::json{{library.name, library.version}}.dump());
    return 0;
  }
  if (list) {
    for (const BaselineOperator& op : operators) {
      fmt::print("{:<18} {}{}\n", op.name, op.params, op.has_fused_tail ? "  (--fused)" : "");
    }
    return 0;
  }
  const std::string program = argv[0];
  size_t colon = spec.find(':');
  std::vector<int64_t> args;
  if (colon == std::string::npos || !ParseInts(std::string_view(spec).substr(colon + 1), args)) {
    fmt::print(stderr, "{}: '{}' is not NAME:ARGS (e.g. gemm:256,256,256)\n", program, spec);
    return 2;
  }
  const BaselineOperator* op = Find(operators, spec.substr(0, colon));
  if (!op) {
    fmt::print(stderr, "{}: no {} baseline for '{}' (--list shows which exist)\n", program,
               library.name, spec.substr(0, colon));
    return 2;
  }
  if (fused && !op->has_fused_tail) {
    fmt::print(stderr, "{}: --fused is for subgraphs; {} has no elementwise tail\n", program,
               op->name);
    return 2;
  }

  try {
    BaselineRun b = op->make(args, fused ? Tail::kFused : Tail::kSeparate);
    // Step 1. One run, checked against the reference.
    b.run();
    CheckResult check = Check(b, check_all);
    if (!check.error.empty()) {
      fmt::print(stderr, "{}: {}: {}\n", program, spec, check.error);
      return 1;
    }
    nlohmann::json line = {{"impl", library.name},
                           {"workload", spec},
                           {"version", library.version},
                           {"check",
                            {{"elements", check.elements},
                             {"of", b.output_size},
                             {"max_abs_error", check.max_abs_error},
                             {"max_abs_reference", check.max_abs_reference},
                             {"rtol", check.rtol}}}};
    if (op->has_fused_tail) line["tail"] = fused ? "fused" : "separate";
    line.update(b.info);
    if (!check_all) {
      // Step 2. Time the run alone.
      TimingResult t = TimeFunction(b.run, timer);
      const char* threads = std::getenv("OMP_NUM_THREADS");
      line.update({{"threads", threads ? threads : "default"},
                   {"median_seconds", t.median},
                   {"samples", t.seconds},
                   {"number", t.number},
                   {"cv", t.cv},
                   {"flops", b.flops},
                   {"gflops", b.flops / t.median / 1e9}});
    }
    fmt::print("{}\n", line.dump());
    return 0;
  } catch (const BadArguments& e) {
    fmt::print(stderr, "{}: {}: {}\n", program, spec, e.what());
    return 2;
  } catch (const std::exception& e) {
    // oneDNN's C++ API names the failed call ("could not create a primitive descriptor for a
    // convolution forward propagation primitive").
    fmt::print(stderr, "{}: {}: {}\n", program, spec, e.what());
    return 1;
  }
}

}  // namespace tirtune::bench
