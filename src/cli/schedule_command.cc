// `tirtune schedule FILE.tir --trace TRACE.json`: replays a trace on the function in a text IR
// file (or a workload) and prints the scheduled function (or, with --json, the function, its hash
// and the trace).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "function_input.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"

namespace tirtune::cli {
namespace {

void RunSchedule(const FunctionInput& input, const GlobalOptions& global) {
  LoadedFunction f = LoadFunction(input);
  if (global.json) {
    nlohmann::json out = {{"name", f.scheduled->name},
                          {"hash", StructuralHashHex(f.scheduled)},
                          {"text", Print(f.scheduled)},
                          {"trace", f.trace.ToJson()}};
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("{}", Print(f.scheduled));
}

}  // namespace

void AddScheduleCommand(CLI::App& app, const GlobalOptions& global) {
  auto input = std::make_shared<FunctionInput>();
  CLI::App* cmd =
      app.add_subcommand("schedule", "apply a schedule trace to a .tir function and print it");
  input->AddOptions(cmd, /*trace_required=*/true);
  cmd->callback([input, &global] { RunSchedule(*input, global); });
}

}  // namespace tirtune::cli
