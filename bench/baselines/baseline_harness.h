// The part the oneDNN baseline programs share: a tirtune workload spec (NAME:ARGS) in, one JSON
// line out. An operator only sets its baseline up (a run to time, its output, a reference value
// for every output element); the harness checks the output against the reference before anything
// is timed, so a baseline that computes something else is never compared, then times the run.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace tirtune::bench {

/// How a subgraph's elementwise tail is run.
enum class Tail {
  /// After the main primitive, as a separate pass over its output (what BENCHMARKS.md compares
  /// fused subgraphs with: "oneDNN + separate elementwise ops").
  kSeparate,
  /// Fused into the main primitive as oneDNN post-ops (or strided inputs instead of transposes).
  kFused,
};

/// A baseline set up for one workload: what is timed, and how its result is checked.
struct BaselineRun {
  /// One complete run (returns when the result is written). The only thing timed.
  std::function<void()> run;
  /// The result of the last run in the workload's own layout (row-major, as tirtune's output
  /// buffer), converting it first if the baseline keeps it in another layout; not timed.
  std::function<const float*()> output;
  /// Number of output elements.
  int64_t output_size = 0;
  /// The exact value of output element `i`, computed in double from the inputs.
  std::function<double(int64_t)> reference;
  /// Floating-point operations of one run, counted as tirtune counts them (a multiply-add is 2).
  double flops = 0;
  /// Terms of the longest sum behind one output element; the check's tolerance grows with it.
  int64_t reduction_length = 1;
  /// Extra fields of the JSON line (the implementation oneDNN picked, layouts).
  nlohmann::json info = nlohmann::json::object();
};

/// A workload's arguments are not valid for the operator (the message says why).
class BadArguments : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// An operator of tirtune's library that a baseline program implements.
struct BaselineOperator {
  /// The name in tirtune's operator library (`gemm`, `conv2d`, ...).
  std::string name;
  /// Its arguments, as `tirtune workload list` names them; [optional ones] in brackets.
  std::string params;
  /// Sets the baseline up for the arguments after the colon; throws BadArguments.
  std::function<BaselineRun(const std::vector<int64_t>& args, Tail tail)> make;
  /// Whether `Tail::kFused` means something different from kSeparate (subgraphs only).
  bool has_fused_tail = false;
};

/// The library a baseline program measures, for the JSON lines and --version.
struct BaselineLibrary {
  std::string name;
  std::string version;
};

/// Throws BadArguments unless there are `min` to `max` arguments, all positive except the one at
/// `may_be_zero` (a padding), which must not be negative.
void CheckArgs(const std::vector<int64_t>& args, size_t min, size_t max, const std::string& params,
               int may_be_zero = -1);

/// The whole program: parses the command line, sets the baseline up, checks it, times it and
/// prints one JSON line. Returns the exit status (0 ok, 1 failure or wrong result, 2 bad usage).
int BaselineMain(int argc, char** argv, const BaselineLibrary& library,
                 const std::vector<BaselineOperator>& operators);

}  // namespace tirtune::bench
