// LoadFunction: file or workload, then the trace.
#include "function_input.h"

#include <nlohmann/json.hpp>

#include "file_text.h"
#include "tirtune/ir/flop_count.h"
#include "tirtune/ir/parser.h"
#include "tirtune/schedule/json_text.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::cli {

void FunctionInput::AddOptions(CLI::App* cmd, bool trace_required) {
  cmd->add_option("file", ir_file, "a .tir file");
  cmd->add_option("--workload", workload, "a workload of the library, NAME:ARGS");
  cmd->add_option("--func", func_name, "which function, when the file holds several");
  CLI::Option* trace = cmd->add_option("--trace", trace_file, "a schedule trace (JSON) to apply");
  if (trace_required) trace->required();
}

LoadedFunction LoadFunction(const FunctionInput& input) {
  LoadedFunction out;
  if (input.ir_file.empty() == input.workload.empty()) {
    TT_USER_ERROR("give either a .tir file or --workload NAME:ARGS");
  }
  if (!input.workload.empty()) {
    Workload w = MakeWorkload(input.workload);
    out.label = w.spec;
    out.original = w.func;
    out.flops = w.flops;
  } else {
    std::vector<PrimFunc> funcs = ParsePrimFuncs(ReadTextFile(input.ir_file), input.ir_file);
    if (input.func_name.empty()) {
      if (funcs.size() != 1) {
        TT_USER_ERROR("{} holds {} functions; name one with --func", input.ir_file, funcs.size());
      }
      out.original = funcs[0];
    } else {
      for (const PrimFunc& f : funcs) {
        if (f->name == input.func_name) out.original = f;
      }
      if (!out.original.defined()) {
        TT_USER_ERROR("{} has no function '{}'", input.ir_file, input.func_name);
      }
    }
    out.label = input.ir_file;
    out.flops = EstimateFlops(out.original);
  }
  out.scheduled = out.original;
  if (input.trace_file.empty()) return out;
  nlohmann::json doc = ParseJsonText(ReadTextFile(input.trace_file), input.trace_file);
  Trace trace = Trace::FromJson(doc);
  Schedule sch(out.original);
  try {
    trace.ApplyTo(sch);
  } catch (const ScheduleError& e) {
    TT_USER_ERROR("{}: the trace does not apply to {}:\n{}", input.trace_file, out.original->name,
                  e.DetailedMessage(sch.func()));
  }
  out.scheduled = sch.func();
  out.trace = sch.trace();
  return out;
}

}  // namespace tirtune::cli
