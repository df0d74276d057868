// `tirtune schedule FILE.tir --trace TRACE.json`: replays a trace on the function in a text IR
// file and prints the scheduled function (or, with --json, the function, its hash and the trace).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "file_text.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune::cli {
namespace {

struct ScheduleOptions {
  std::string ir_file;
  std::string trace_file;
  std::string func_name;
};

void RunSchedule(const ScheduleOptions& opts, const GlobalOptions& global) {
  std::vector<PrimFunc> funcs = ParsePrimFuncs(ReadTextFile(opts.ir_file), opts.ir_file);
  PrimFunc func;
  if (opts.func_name.empty()) {
    if (funcs.size() != 1) {
      TT_USER_ERROR("{} holds {} functions; name one with --func", opts.ir_file, funcs.size());
    }
    func = funcs[0];
  } else {
    for (const PrimFunc& f : funcs) {
      if (f->name == opts.func_name) func = f;
    }
    if (!func.defined()) TT_USER_ERROR("{} has no function '{}'", opts.ir_file, opts.func_name);
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(ReadTextFile(opts.trace_file));
  } catch (const nlohmann::json::parse_error& e) {
    TT_USER_ERROR("{} is not valid JSON: {}", opts.trace_file, e.what());
  }
  Trace trace = Trace::FromJson(doc);
  Schedule sch(func);
  try {
    trace.ApplyTo(sch);
  } catch (const ScheduleError& e) {
    TT_USER_ERROR("{}: the trace does not apply to {}:\n{}", opts.trace_file, func->name,
                  e.DetailedMessage(sch.func()));
  }
  if (global.json) {
    nlohmann::json out = {{"name", sch.func()->name},
                          {"hash", StructuralHashHex(sch.func())},
                          {"text", Print(sch.func())},
                          {"trace", sch.trace().ToJson()}};
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("{}", Print(sch.func()));
}

}  // namespace

void AddScheduleCommand(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<ScheduleOptions>();
  CLI::App* cmd =
      app.add_subcommand("schedule", "apply a schedule trace to a .tir function and print it");
  cmd->add_option("file", opts->ir_file, "the .tir file")->required();
  cmd->add_option("--trace", opts->trace_file, "the trace JSON")->required();
  cmd->add_option("--func", opts->func_name, "which function, when the file holds several");
  cmd->callback([opts, &global] { RunSchedule(*opts, global); });
}

}  // namespace tirtune::cli
