// `tirtune lower`, `tirtune build` and `tirtune time`: the lowered IR (after every pass with
// --steps), a relocatable object for a target, and a verified timing with GFLOP/s.
#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "function_input.h"
#include "tirtune/codegen/build.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/printer.h"
#include "tirtune/lower/lower.h"
#include "tirtune/measure/reference.h"
#include "tirtune/measure/timer.h"
#include "tirtune/measure/verify.h"

namespace tirtune::cli {
namespace {

Target ParseTargetOrHost(const std::string& text) {
  return text.empty() ? Target::Host() : Target::Parse(text);
}

struct LowerCli {
  FunctionInput input;
  bool steps = false;
};

void RunLower(const LowerCli& opts, const GlobalOptions& global) {
  LoadedFunction f = LoadFunction(opts.input);
  std::vector<std::pair<std::string, PrimFunc>> steps = LowerWithSteps(f.scheduled);
  if (!opts.steps) steps.erase(steps.begin(), steps.end() - 1);
  if (global.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [pass, func] : steps) out.push_back({{"pass", pass}, {"text", Print(func)}});
    fmt::print("{}\n", out.dump(2));
    return;
  }
  for (const auto& [pass, func] : steps) {
    if (opts.steps) fmt::print("# after {}\n", pass);
    fmt::print("{}", Print(func));
  }
}

struct BuildCli {
  FunctionInput input;
  std::string target;
  std::string output;
  std::string emit = "obj";
};

void RunBuild(const BuildCli& opts, const GlobalOptions& global) {
  LoadedFunction f = LoadFunction(opts.input);
  Target target = ParseTargetOrHost(opts.target);
  PrimFunc lowered = Lower(f.scheduled);
  std::string bytes;
  CompileStats stats;
  if (opts.emit == "obj") {
    bytes = EmitObject(lowered, target, {}, &stats);
  } else if (opts.emit == "llvm") {
    bytes = EmitLLVMIR(lowered, target, /*optimized=*/true);
  } else if (opts.emit == "asm") {
    bytes = EmitAssembly(lowered, target);
  } else {
    TT_USER_ERROR("--emit takes obj, llvm or asm, not '{}'", opts.emit);
  }
  if (opts.output.empty() || opts.output == "-") {
    if (opts.emit == "obj") TT_USER_ERROR("an object file needs -o FILE");
    fmt::print("{}", bytes);
    return;
  }
  std::ofstream out(opts.output, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) TT_USER_ERROR("cannot write '{}'", opts.output);
  if (global.json) {
    fmt::print("{}\n", nlohmann::json{{"output", opts.output},
                                      {"bytes", bytes.size()},
                                      {"function", lowered->name},
                                      {"target", target.str()},
                                      {"compile_ms", stats.total_ms()}}
                           .dump(2));
    return;
  }
  fmt::print("wrote {} ({} bytes): function '{}' for {}\n", opts.output, bytes.size(),
             lowered->name, target.str());
}

struct TimeCli {
  FunctionInput input;
  std::string target;
  TimerConfig timer;
  uint64_t seed = 1;
  /// Above this many FLOPs the reference is the unscheduled function compiled, not interpreted.
  double interpret_below_flops = 2e7;
};

void RunTime(const TimeCli& opts, const GlobalOptions& global) {
  LoadedFunction f = LoadFunction(opts.input);
  Target target = ParseTargetOrHost(opts.target);
  std::unique_ptr<Kernel> kernel = JitCompile(Lower(f.scheduled), target);

  // Verify first: the time of a wrong kernel means nothing.
  ReferenceConfig reference_config;
  reference_config.interpret_below_flops = opts.interpret_below_flops;
  Reference reference = ComputeReference(f.original, opts.seed, target, reference_config);
  std::vector<NDArray> actual = MakeRandomArgs(f.original, opts.seed);
  if (int32_t status = kernel->Run(actual); status != 0) {
    TT_USER_ERROR("{}: the kernel returned status {}", f.label, status);
  }
  std::vector<std::string> names;
  for (const Buffer& b : f.original->params) names.push_back(b->name);
  VerifyResult verified =
      CompareAll(names, reference.expected, actual, LongestReduction(f.original));
  if (!verified.ok) {
    TT_USER_ERROR("{}: the compiled kernel is wrong against the {}: {}", f.label, reference.source,
                  verified.message);
  }

  TimingResult t = TimeFunction([&] { kernel->Run(actual); }, opts.timer);
  double gflops = f.flops / t.median / 1e9;
  if (global.json) {
    fmt::print("{}\n", nlohmann::json{{"function", f.label},
                                      {"target", target.str()},
                                      {"verified_against", reference.source},
                                      {"max_abs_error", verified.max_abs_error},
                                      {"median_seconds", t.median},
                                      {"samples", t.seconds},
                                      {"number", t.number},
                                      {"cv", t.cv},
                                      {"flops", f.flops},
                                      {"gflops", gflops},
                                      {"compile_ms", kernel->stats().total_ms()}}
                           .dump(2));
    return;
  }
  fmt::print("{}: {:.4f} ms, {:.1f} GFLOP/s ({} repeats of {} runs, cv {:.1f}%)\n", f.label,
             t.median * 1e3, gflops, t.seconds.size(), t.number, t.cv * 100);
  fmt::print("  verified against the {} (max abs error {:.2g}); compiled in {:.0f} ms for {}\n",
             reference.source, verified.max_abs_error, kernel->stats().total_ms(), target.str());
}

}  // namespace

void AddCompileCommands(CLI::App& app, const GlobalOptions& global) {
  auto lower = std::make_shared<LowerCli>();
  CLI::App* lower_cmd = app.add_subcommand("lower", "print a function after lowering");
  lower->input.AddOptions(lower_cmd);
  lower_cmd->add_flag("--steps", lower->steps, "print the function after every pass");
  lower_cmd->callback([lower, &global] { RunLower(*lower, global); });

  auto build = std::make_shared<BuildCli>();
  CLI::App* build_cmd = app.add_subcommand("build", "compile a function for a target");
  build->input.AddOptions(build_cmd);
  build_cmd->add_option("--target", build->target, "e.g. \"llvm -mcpu=znver5 -num-cores=2\"");
  build_cmd->add_option("-o,--output", build->output, "the output file");
  build_cmd->add_option("--emit", build->emit, "obj (default), llvm or asm");
  build_cmd->callback([build, &global] { RunBuild(*build, global); });

  auto time = std::make_shared<TimeCli>();
  CLI::App* time_cmd =
      app.add_subcommand("time", "compile, verify against a reference, and time a function");
  time->input.AddOptions(time_cmd);
  time_cmd->add_option("--target", time->target, "e.g. \"llvm -num-cores=2\"; default: host");
  time_cmd->add_option("--repeat", time->timer.repeat, "timed repeats")->capture_default_str();
  time_cmd->add_option("--min-repeat-ms", time->timer.min_repeat_ms, "minimum length of a repeat")
      ->capture_default_str();
  time_cmd->add_flag("--flush-cache", time->timer.flush_cache, "flush caches between repeats");
  time_cmd->add_option("--seed", time->seed, "seed of the random inputs")->capture_default_str();
  time_cmd->callback([time, &global] { RunTime(*time, global); });
}

}  // namespace tirtune::cli
