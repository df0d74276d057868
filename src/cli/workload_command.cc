// `tirtune workload list | print | eval`: the operator library as text IR, and a run of the
// reference interpreter on one workload with seeded random inputs.
#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::cli {
namespace {

std::string JoinShape(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

void RunList(const GlobalOptions& global) {
  if (global.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const WorkloadDef& w : AllWorkloads()) {
      out.push_back({{"name", w.name},
                     {"params", w.params},
                     {"summary", w.summary},
                     {"benchmark_shapes", w.benchmark_shapes}});
    }
    fmt::print("{}\n", out.dump(2));
    return;
  }
  for (const WorkloadDef& w : AllWorkloads()) {
    fmt::print("{:<20} {:<40} {}\n", w.name, w.params, w.summary);
  }
  fmt::print("\nUse NAME:ARGS, e.g. `tirtune workload print gemm:256,256,256`.\n");
}

struct PrintOptionsCli {
  std::string spec;
  bool canonical = false;
};

void RunPrint(const PrintOptionsCli& opts, const GlobalOptions& global) {
  Workload w = MakeWorkload(opts.spec);
  PrintOptions po;
  po.canonical_names = opts.canonical;
  std::string text = Print(w.func, po);
  if (global.json) {
    nlohmann::json out = {
        {"spec", w.spec}, {"hash", StructuralHashHex(w.func)}, {"flops", w.flops}, {"text", text}};
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("# {}  flops={:.0f}  hash={}\n{}", w.spec, w.flops, StructuralHashHex(w.func), text);
}

struct EvalOptions {
  std::string spec;
  uint64_t seed = 1;
};

void RunEval(const EvalOptions& opts, const GlobalOptions& global) {
  Workload w = MakeWorkload(opts.spec);
  auto start = std::chrono::steady_clock::now();
  std::vector<NDArray> args = InterpretWithRandomInputs(w.func, opts.seed);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json params = nlohmann::json::array();
  for (size_t i = 0; i < args.size(); ++i) {
    const NDArray& a = args[i];
    double sum = 0, sum_abs = 0;
    for (int64_t k = 0; k < a.size(); ++k) {
      double v = a.GetDouble(k);
      sum += v;
      sum_abs += std::fabs(v);
    }
    params.push_back({{"name", w.func->params[i]->name},
                      {"shape", a.shape()},
                      {"dtype", a.dtype().str()},
                      {"sum", sum},
                      {"mean_abs", a.size() ? sum_abs / a.size() : 0.0}});
  }
  if (global.json) {
    nlohmann::json out = {{"spec", w.spec},
                          {"seed", opts.seed},
                          {"flops", w.flops},
                          {"seconds", seconds},
                          {"params", params}};
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("{}: interpreted in {:.3f} s ({:.1f} MFLOP/s in the reference interpreter)\n", w.spec,
             seconds, w.flops / seconds / 1e6);
  for (const auto& p : params) {
    fmt::print("  {:<12} {:<8} shape=[{}] sum={:.6g} mean|x|={:.6g}\n",
               p["name"].get<std::string>(), p["dtype"].get<std::string>(),
               JoinShape(p["shape"].get<std::vector<int64_t>>()), p["sum"].get<double>(),
               p["mean_abs"].get<double>());
  }
}

}  // namespace

void AddWorkloadCommand(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand("workload", "the operator library");
  cmd->require_subcommand(1);

  CLI::App* list = cmd->add_subcommand("list", "list the operators and their parameters");
  list->callback([&global] { RunList(global); });

  auto print_opts = std::make_shared<PrintOptionsCli>();
  CLI::App* print = cmd->add_subcommand("print", "print a workload as text IR");
  print->add_option("spec", print_opts->spec, "NAME:ARGS, e.g. gemm:256,256,256")->required();
  print->add_flag("--canonical", print_opts->canonical,
                  "print the canonical form (the input of the workload hash)");
  print->callback([print_opts, &global] { RunPrint(*print_opts, global); });

  auto eval_opts = std::make_shared<EvalOptions>();
  CLI::App* eval = cmd->add_subcommand(
      "eval", "run a workload in the reference interpreter on seeded random inputs");
  eval->add_option("spec", eval_opts->spec, "NAME:ARGS, e.g. gemm:64,64,64")->required();
  eval->add_option("--seed", eval_opts->seed, "seed of the random inputs")->capture_default_str();
  eval->callback([eval_opts, &global] { RunEval(*eval_opts, global); });
}

}  // namespace tirtune::cli
