// `tirtune lower`, `tirtune build` and `tirtune time`: the lowered IR (after every pass with
// --steps), a relocatable object for a target, and a verified timing with GFLOP/s.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "function_input.h"
#include "runner_options.h"
#include "tirtune/codegen/build.h"
#include "tirtune/database/database.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/printer.h"
#include "tirtune/lower/lower.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/measure/gpu_program.h"
#include "tirtune/measure/measurer.h"
#include "tirtune/measure/reference.h"
#include "tirtune/measure/runner_pool.h"
#include "tirtune/measure/timer.h"
#include "tirtune/measure/verify.h"
#include "tirtune/runtime/cuda_driver.h"
#include "tirtune/support/version.h"
#if TIRTUNE_WITH_MODELS
#include "tirtune/model/model.h"
#endif

namespace tirtune::cli {
namespace {

// `what` compiles CPU code: a cuda target is refused until the CUDA backend builds kernels.
Target ParseCpuTargetOrHost(const std::string& text, std::string_view what) {
  Target target = text.empty() ? Target::Host() : Target::Parse(text);
  RequireCpuTarget(target, what);
  return target;
}

// The target of `what`: the host when none is given.
Target ParseTargetOrHost(const std::string& text) {
  return text.empty() ? Target::Host() : Target::Parse(text);
}

// A cuda target's kernels: lowered, compiled to a cubin for its arch, and through the resource
// gates (a kernel that spills or exceeds a limit is an error with the reasons).
struct CudaBuild {
  GpuModule module;
  CudaBinary binary;
};

CudaBuild BuildCuda(const LoadedFunction& f, const Target& target) {
  CudaBuild b{LowerGpu(f.scheduled, target.gpu), {}};
  try {
    b.binary = CompileCudaGated(b.module, target);
  } catch (const UserError& e) {
    TT_USER_ERROR("{}: {}", f.label, e.what());
  }
  return b;
}

// One line per kernel: its launch and what ptxas reports.
nlohmann::json DescribeKernels(const CudaBuild& b) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const GpuKernel& k : b.module.kernels) {
    nlohmann::json j = {{"name", k.name}, {"grid", k.grid}, {"block", k.block},
                        {"shared_bytes", k.SharedBytes()}};
    for (const KernelResources& r : b.binary.resources) {
      if (r.kernel != k.name) continue;
      j["registers"] = r.registers;
      j["spill_bytes"] = r.spill_store_bytes + r.spill_load_bytes;
    }
    kernels.push_back(j);
  }
  return kernels;
}

struct LowerCli {
  FunctionInput input;
  std::string target;
  bool steps = false;
};

void RunLower(const LowerCli& opts, const GlobalOptions& global) {
  LoadedFunction f = LoadFunction(opts.input);
  if (Target target = ParseTargetOrHost(opts.target); target.is_cuda()) {
    if (opts.steps) TT_USER_ERROR("--steps is for CPU targets; a cuda target prints the kernels");
    std::string text = PrintGpuModule(LowerGpu(f.scheduled, target.gpu));
    if (global.json) {
      fmt::print("{}\n", nlohmann::json{{"target", target.str()}, {"text", text}}.dump(2));
    } else {
      fmt::print("{}", text);
    }
    return;
  }
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
  std::string emit;  // obj (CPU) or cubin (cuda) when empty
};

// `build --target cuda`: a cubin (default), the PTX or the CUDA C.
void RunBuildCuda(const BuildCli& opts, const LoadedFunction& f, const Target& target,
                  const GlobalOptions& global) {
  std::string emit = opts.emit.empty() ? "cubin" : opts.emit;
  if (emit != "cubin" && emit != "ptx" && emit != "cuda") {
    TT_USER_ERROR("--emit takes cubin, ptx or cuda for a cuda target, not '{}'", emit);
  }
  CudaBuild b = BuildCuda(f, target);
  const std::string& bytes =
      emit == "cubin" ? b.binary.cubin : emit == "ptx" ? b.binary.ptx : b.binary.source;
  if (opts.output.empty() || opts.output == "-") {
    if (emit == "cubin") TT_USER_ERROR("a cubin needs -o FILE");
    fmt::print("{}", bytes);
    return;
  }
  std::ofstream out(opts.output, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) TT_USER_ERROR("cannot write '{}'", opts.output);
  nlohmann::json kernels = DescribeKernels(b);
  if (global.json) {
    fmt::print("{}\n", nlohmann::json{{"output", opts.output},
                                      {"bytes", bytes.size()},
                                      {"function", b.module.name},
                                      {"target", target.str()},
                                      {"kernels", kernels},
                                      {"compile_ms", b.binary.nvrtc_ms + b.binary.link_ms}}
                           .dump(2));
    return;
  }
  fmt::print("wrote {} ({} bytes): function '{}' for {}, {} kernel(s)\n", opts.output,
             bytes.size(), b.module.name, target.str(), kernels.size());
  for (const nlohmann::json& k : kernels) {
    fmt::print("  {}: grid {}, block {}, {} registers, {} bytes of shared memory\n",
               k["name"].get<std::string>(), k["grid"].dump(), k["block"].dump(),
               k.value("registers", 0), k["shared_bytes"].get<int64_t>());
  }
}

void RunBuild(const BuildCli& opts, const GlobalOptions& global) {
  LoadedFunction f = LoadFunction(opts.input);
  if (Target cuda = ParseTargetOrHost(opts.target); cuda.is_cuda()) {
    RunBuildCuda(opts, f, cuda, global);
    return;
  }
  Target target = ParseCpuTargetOrHost(opts.target, "tirtune build");
  PrimFunc lowered = Lower(f.scheduled);
  std::string bytes;
  CompileStats stats;
  if (opts.emit == "obj" || opts.emit.empty()) {
    bytes = EmitObject(lowered, target, {}, &stats);
  } else if (opts.emit == "llvm") {
    bytes = EmitLLVMIR(lowered, target, /*optimized=*/true);
  } else if (opts.emit == "asm") {
    bytes = EmitAssembly(lowered, target);
  } else {
    TT_USER_ERROR("--emit takes obj, llvm or asm, not '{}'", opts.emit);
  }
  if (opts.output.empty() || opts.output == "-") {
    if (opts.emit == "obj" || opts.emit.empty()) TT_USER_ERROR("an object file needs -o FILE");
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
  double timeout_s = 120;
  RunnerCli runner;
  /// A database to store the measurement in as a tuning record (--record).
  std::string record;
};

// `time --record DB`: the verified measurement becomes a record of the function's workload, as
// if the tuner had measured it: `compile` can pick it, and `tune` starts from it (a task's own
// record) or transfers it to other shapes (TuneOptions::transfer).
void StoreTiming(const TimeCli& opts, const LoadedFunction& f, const Target& target,
                 const MeasureResult& r, RecordTiming timing) {
  if (opts.record.empty()) return;
  std::unique_ptr<Database> db = OpenDatabase(opts.record);
  TuningRecord rec;
  rec.workload = db->CommitWorkload(f.original).id;
  rec.target = CanonicalTarget(target.str());
  rec.trace = f.trace.ToJson();
  rec.status = RecordStatus::kOk;
  rec.run_secs = r.seconds;
  rec.device = TimedDevice(r.device.empty() ? DeviceDescription(target) : r.device, timing);
  rec.program_version = kProgramVersion;
  db->CommitRecords({rec});
  fmt::print(stderr, "stored the measurement as a record of workload {} in {}\n", rec.workload,
             opts.record);
}

// `time --target cuda`: the kernels built here and measured like any candidate, in a
// `tirtune-runner` worker (a process of its own: a kernel that faults poisons that worker's CUDA
// context, never this process) on the reference's inputs, the reference computed on this host's
// CPU; the worker verifies every parameter with the CPU's tolerances before timing (CUDA
// events, an L2 flush before every sample).
void RunTimeCuda(const TimeCli& opts, const LoadedFunction& f, const Target& target,
                 const GlobalOptions& global) {
  std::string why;
  if (!opts.runner.remote() && !cuda::CudaDriverAvailable(&why)) {
    TT_USER_ERROR("tirtune time --target cuda: {} (a device pool's GPU agents can measure it: "
                  "--runner redis://...)",
                  why);
  }
  CudaBuild b = BuildCuda(f, target);
  ReferenceConfig reference_config;
  reference_config.interpret_below_flops = opts.interpret_below_flops;
  MeasureTask task = MakeMeasureTask(f.original, Target::Host(), opts.seed, reference_config);
  MeasureCandidate candidate;
  candidate.object = GpuProgram::Of(b.module, b.binary).Serialize();
  candidate.func_name = b.module.name;
  candidate.target = target.str();
  candidate.args = task.args;
  candidate.seed = task.seed;
  candidate.expected = task.expected;
  candidate.reduction_length = task.reduction_length;
  RunnerConfig config;
  config.timer = opts.timer;
  config.timeout_s = opts.timeout_s;
  std::unique_ptr<Runner> runner = opts.runner.Make(target.str(), config, global);
  MeasureResult r = runner->MeasureOne(candidate);
  switch (r.status) {
    case MeasureStatus::kOk:
      break;
    case MeasureStatus::kWrongResult:
      TT_USER_ERROR("{}: the kernel is wrong against the {}: {}", f.label, task.reference_source,
                    r.message);
    default:
      TT_USER_ERROR("{}: the kernel could not run ({}): {}", f.label,
                    MeasureStatusName(r.status), r.message);
  }
  StoreTiming(opts, f, target, r, TimingOf(opts.timer));
  double min = *std::min_element(r.seconds.begin(), r.seconds.end());
  if (global.json) {
    fmt::print("{}\n", nlohmann::json{{"function", f.label},
                                      {"target", target.str()},
                                      {"verified_against", task.reference_source},
                                      {"max_abs_error", r.max_abs_error},
                                      {"median_seconds", r.median},
                                      {"min_seconds", min},
                                      {"samples", r.seconds},
                                      {"flops", f.flops},
                                      {"gflops", f.flops / r.median / 1e9},
                                      {"kernels", DescribeKernels(b)},
                                      {"device", r.device}}
                           .dump(2));
    return;
  }
  fmt::print("{}: {:.4f} ms, {:.1f} GFLOP/s ({} samples, L2 flushed before each)\n", f.label,
             r.median * 1e3, f.flops / r.median / 1e9, r.seconds.size());
  fmt::print("  verified against the {} (max abs error {:.2g}); {} kernel(s) for {}{}\n",
             task.reference_source, r.max_abs_error, b.module.kernels.size(), target.str(),
             r.device.empty() ? std::string() : "; measured on " + r.device);
}

// The kernel runs in a runner process (local, or a device pool's agent), never in this one: a
// crash or a hang of generated code is a message, not the end of `tirtune time`.
void RunTime(const TimeCli& opts, const GlobalOptions& global) {
  if (!std::isfinite(opts.timeout_s) || opts.timeout_s <= 0) {
    TT_USER_ERROR("--timeout must be a positive number of seconds, got {}", opts.timeout_s);
  }
  if (!opts.record.empty() && opts.input.trace_file.empty()) {
    TT_USER_ERROR("--record stores a schedule: give it with --trace");
  }
  LoadedFunction f = LoadFunction(opts.input);
  if (Target cuda = ParseTargetOrHost(opts.target); cuda.is_cuda()) {
    RunTimeCuda(opts, f, cuda, global);
    return;
  }
  Target target = ParseCpuTargetOrHost(opts.target, "tirtune time");
  RunnerConfig local;
  local.timer = opts.timer;
  local.timeout_s = opts.timeout_s;
  std::unique_ptr<Runner> runner = opts.runner.Make(target.str(), local, global);

  // Verify first: the time of a wrong kernel means nothing (the runner compares before timing).
  ReferenceConfig reference_config;
  reference_config.interpret_below_flops = opts.interpret_below_flops;
  std::string library;
  if (!OffloadedComposite(f.scheduled).empty() && !opts.input.workload.empty()) {
#if TIRTUNE_WITH_MODELS
    // A library record of the workload (tune --workload measured the library's kernel).
    library = model::WorkloadLibrary(f.label, model::Offload::kMeasured, target);
#endif
    // The trace names the library call it stands for: it must be this target's.
    const std::string offloaded = OffloadedComposite(f.scheduled);
    const std::string made =
        library.empty() ? "" : nlohmann::json::parse(library).at("composite").get<std::string>();
    if (made != offloaded) {
      TT_USER_ERROR(
          "{}: the trace offloads to {}, but on {} the library's composite of this "
          "workload is {}",
          f.label, offloaded, target.str(), made.empty() ? "none" : made);
    }
  }
  MeasureTask task = MakeMeasureTask(f.original, target, opts.seed, reference_config, library);
  const bool cold = opts.timer.cold_constants &&
                    (!library.empty() || std::any_of(task.args.begin(), task.args.end(),
                                                     [](const ArgSpec& a) { return a.constant; }));
  if (opts.timer.cold_constants && !cold) {
    fmt::print(stderr,
               "note: {} has no constant weights (no tirtune.layout_free parameters): "
               "--cold-weights times it warm\n",
               f.label);
  }
  Measurer measurer(BuilderConfig{}, *runner);
  MeasureResult r = measurer.Measure(task, {f.scheduled}).front();
  switch (r.status) {
    case MeasureStatus::kOk:
      break;
    case MeasureStatus::kWrongResult:
      TT_USER_ERROR("{}: the compiled kernel is wrong against the {}: {}", f.label,
                    task.reference_source, r.message);
    case MeasureStatus::kBuildError:
      TT_USER_ERROR("{}: cannot compile it: {}", f.label, r.message);
    default:
      TT_USER_ERROR("{}: the kernel could not be timed ({}): {}", f.label,
                    MeasureStatusName(r.status), r.message);
  }
  TimerConfig timed = opts.timer;  // a function without constants was timed warm
  timed.cold_constants = cold;
  StoreTiming(opts, f, target, r, TimingOf(timed));
  double mean = 0, var = 0;
  for (double x : r.seconds) mean += x / r.seconds.size();
  for (double x : r.seconds) var += (x - mean) * (x - mean) / r.seconds.size();
  double cv = mean > 0 ? std::sqrt(var) / mean : 0;
  double gflops = f.flops / r.median / 1e9;
  double compile_ms = measurer.last_times().build * 1e3;
  if (global.json) {
    nlohmann::json j = {{"function", f.label},
                        {"target", target.str()},
                        {"verified_against", task.reference_source},
                        {"max_abs_error", r.max_abs_error},
                        {"median_seconds", r.median},
                        {"samples", r.seconds},
                        {"number", r.number},
                        {"cv", cv},
                        {"flops", f.flops},
                        {"gflops", gflops},
                        {"compile_ms", compile_ms}};
    if (opts.runner.remote()) j["device"] = r.device;
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{}: {:.4f} ms, {:.1f} GFLOP/s ({} repeats of {} runs, cv {:.1f}%{})\n", f.label,
             r.median * 1e3, gflops, r.seconds.size(), r.number, cv * 100,
             cold ? "; weights evicted before each run" : "");
  fmt::print("  verified against the {} (max abs error {:.2g}); compiled in {:.0f} ms for {}{}\n",
             task.reference_source, r.max_abs_error, compile_ms, target.str(),
             opts.runner.remote() ? "; measured on " + r.device : std::string());
}

}  // namespace

void AddCompileCommands(CLI::App& app, const GlobalOptions& global) {
  auto lower = std::make_shared<LowerCli>();
  CLI::App* lower_cmd = app.add_subcommand("lower", "print a function after lowering");
  lower->input.AddOptions(lower_cmd);
  lower_cmd->add_option("--target", lower->target,
                        "a cuda target prints the kernels (\"cuda -arch=sm_90\"); default: host");
  lower_cmd->add_flag("--steps", lower->steps, "print the function after every pass");
  lower_cmd->callback([lower, &global] { RunLower(*lower, global); });

  auto build = std::make_shared<BuildCli>();
  CLI::App* build_cmd = app.add_subcommand("build", "compile a function for a target");
  build->input.AddOptions(build_cmd);
  build_cmd->add_option("--target", build->target,
                        "e.g. \"llvm -mcpu=znver5 -num-cores=2\" or \"cuda -arch=sm_90\"");
  build_cmd->add_option("-o,--output", build->output, "the output file");
  build_cmd->add_option("--emit", build->emit,
                        "obj (default), llvm or asm; for cuda: cubin (default), ptx or cuda");
  build_cmd->callback([build, &global] { RunBuild(*build, global); });

  auto time = std::make_shared<TimeCli>();
  CLI::App* time_cmd =
      app.add_subcommand("time", "compile, verify against a reference, and time a function");
  time->input.AddOptions(time_cmd);
  time_cmd->add_option("--target", time->target,
                       "e.g. \"llvm -num-cores=2\" or \"cuda -arch=sm_90\"; default: host");
  time_cmd->add_option("--repeat", time->timer.repeat, "timed repeats")->capture_default_str();
  time_cmd->add_option("--min-repeat-ms", time->timer.min_repeat_ms, "minimum length of a repeat")
      ->capture_default_str();
  CLI::Option* flush =
      time_cmd->add_flag("--flush-cache", time->timer.flush_cache, "flush caches between repeats");
  time_cmd
      ->add_flag("--cold-weights", time->timer.cold_constants,
                 "evict the function's constant weights (its layout-free parameters) from the "
                 "caches before every call, the rest staying warm (a GPU's samples each start "
                 "after an L2 flush anyway)")
      ->excludes(flush);
  time_cmd->add_option("--seed", time->seed, "seed of the random inputs")->capture_default_str();
  time_cmd->add_option("--timeout", time->timeout_s, "seconds the kernel may take, all runs")
      ->capture_default_str();
  time_cmd->add_option("--record", time->record,
                       "store the verified measurement in this tuning database as a record of "
                       "the function's workload (needs --trace)");
  time->runner.AddOptions(time_cmd);
  time_cmd->callback([time, &global] { RunTime(*time, global); });
}

}  // namespace tirtune::cli
