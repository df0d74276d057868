// The function a command works on: a workload of the operator library or a function of a .tir
// file, optionally with a schedule trace applied.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tirtune/ir/function.h"
#include "tirtune/schedule/trace.h"

namespace tirtune::cli {

struct FunctionInput {
  std::string ir_file;     // a .tir file (positional)
  std::string workload;    // or NAME:ARGS
  std::string func_name;   // which function of the file, when it holds several
  std::string trace_file;  // a trace JSON to apply
  /// Registers `file`, `--workload`, `--func` and `--trace` on `cmd`.
  void AddOptions(CLI::App* cmd, bool trace_required = false);
};

struct LoadedFunction {
  std::string label;   // the workload spec or the file name
  PrimFunc original;   // as written
  PrimFunc scheduled;  // with the trace applied (the original without one)
  double flops = 0;    // exact for workloads, estimated otherwise
  Trace trace;         // the trace as replayed (empty without one)
};

/// Loads the function and applies the trace; UserError for a missing or ambiguous input, a bad
/// file, or a trace that does not apply (with the detailed schedule error).
LoadedFunction LoadFunction(const FunctionInput& input);

}  // namespace tirtune::cli
