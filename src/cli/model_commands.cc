// `tirtune compile` and `tirtune run`: a model compiled with the best records of a database into
// an artifact directory, and that artifact run on given or random inputs (verified against the
// interpreter, benchmarked).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "stop_signals.h"
#include "tirtune/support/error.h"

#if TIRTUNE_WITH_MODELS
#include "tirtune/codegen/cuda.h"
#include "tirtune/database/database.h"
#include "tirtune/graph/executor.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/measure/verify.h"
#include "tirtune/model/compile.h"
#include "tirtune/model/executor.h"
#include "tirtune/model/npy.h"
#endif

namespace tirtune::cli {

#if TIRTUNE_WITH_MODELS
namespace {

struct ModelCompileCli {
  std::string model;
  std::string db;
  std::string target;
  std::string output;
  std::string offload = "measured";
};

void RunModelCompile(const ModelCompileCli& opts, const GlobalOptions& global) {
  model::CompileModelOptions options;
  options.target = opts.target.empty() ? Target::Host() : Target::Parse(opts.target);
  if (std::string why; options.target.is_cuda() && !CudaCompilerAvailable(&why)) {
    TT_USER_ERROR("tirtune compile --target cuda: cannot compile CUDA here: {}", why);
  }
  options.source = opts.model;
  std::unique_ptr<Database> db;
  if (!opts.db.empty()) {
    OpenOptions open;
    open.create_if_missing = false;
    db = OpenDatabase(opts.db, open);
    RequireIntact(*db, "tirtune compile");
    options.db = db.get();
  }
  options.offload = model::ParseOffload(opts.offload);
  model::ModelTasks tasks =
      model::LoadOnnxModel(opts.model, model::OffloadPatterns(options.offload, options.target));
  std::vector<model::CompiledTask> compiled;
  {
    StopOnSignals stop_on_signals("tirtune compile: stopping (again to abort)\n");
    options.stop = stop_on_signals.flag();
    compiled = model::CompileModel(tasks, opts.output, options);
  }
  int tuned = static_cast<int>(
      std::count_if(compiled.begin(), compiled.end(), [](const auto& t) { return t.tuned; }));
  int offloaded = static_cast<int>(std::count_if(
      compiled.begin(), compiled.end(), [](const auto& t) { return !t.library.empty(); }));
  if (global.json) {
    nlohmann::json functions = nlohmann::json::array();
    for (const model::CompiledTask& t : compiled) {
      nlohmann::json j = {{"name", t.name},
                          {"weight", t.weight},
                          {"tuned", t.tuned},
                          {"workload_key", t.workload_key},
                          {"compile_ms", t.compile_ms}};
      if (!t.library.empty()) {
        j["library"] = t.library;
      } else {
        j["object"] = t.object_file;
        if (!t.tuned) j["fallback_reason"] = t.fallback_reason;
      }
      if (t.best_seconds) j["best_seconds"] = *t.best_seconds;
      if (!t.note.empty()) j["note"] = t.note;
      if (!t.offload_note.empty()) j["offload_note"] = t.offload_note;
      functions.push_back(std::move(j));
    }
    fmt::print("{}\n", nlohmann::json{{"output", opts.output},
                                      {"target", options.target.str()},
                                      {"database", opts.db},
                                      {"offload", model::OffloadName(options.offload)},
                                      {"tuned", tuned},
                                      {"offloaded", offloaded},
                                      {"default", compiled.size() - tuned - offloaded},
                                      {"functions", functions}}
                           .dump(2));
    return;
  }
  fmt::print(
      "compiled {} function(s) for {} into {}: {} tuned, {} offloaded, {} with the default "
      "schedule\n",
      compiled.size(), options.target.str(), opts.output, tuned, offloaded,
      compiled.size() - tuned - offloaded);
  for (const model::CompiledTask& t : compiled) {
    if (!t.library.empty()) {
      fmt::print("  library  {} (x{}): {}{}{}\n", t.name, t.weight, t.library,
                 t.best_seconds ? fmt::format(", measured {:.4f} ms", *t.best_seconds * 1e3)
                                : std::string(),
                 t.note.empty() ? "" : "; " + t.note);
    } else if (t.tuned) {
      fmt::print("  tuned    {} (x{}): best {:.4f} ms{}\n", t.name, t.weight,
                 t.best_seconds.value_or(0) * 1e3, t.note.empty() ? "" : "; " + t.note);
    } else {
      fmt::print("  default  {} (x{}): {}\n", t.name, t.weight, t.fallback_reason);
    }
    if (!t.offload_note.empty()) fmt::print("           not offloaded: {}\n", t.offload_note);
  }
}

struct ModelRunCli {
  std::string dir;
  std::vector<std::string> inputs;
  std::string outputs_dir;
  bool bench = false;
  int repeat = 10;
  int warmup = 3;
  uint64_t seed = 1;
  bool verify = false;
};

// An input file: .npy, or raw little-endian elements (.bin) of the input's type. NumPy has no
// bfloat16: a bfloat16 input reads a uint16 .npy as its bits.
NDArray ReadInput(const std::string& path, const graph::TensorType& type) {
  if (path.size() >= 4 && path.substr(path.size() - 4) == ".npy") {
    NDArray a = model::ReadNpy(path);
    if (type.dtype == DataType::BFloat16() && a.dtype() == DataType::UInt(16)) {
      NDArray bits = NDArray::Empty(a.shape(), type.dtype);
      std::copy_n(static_cast<const char*>(a.raw()), a.nbytes(), static_cast<char*>(bits.raw()));
      return bits;
    }
    return a;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) TT_USER_ERROR("cannot read '{}'", path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  NDArray a = NDArray::Empty(type.shape, type.dtype);
  if (static_cast<int64_t>(bytes.size()) != a.nbytes()) {
    TT_USER_ERROR("'{}' holds {} bytes; the input is {} ({} bytes)", path, bytes.size(), type.str(),
                  a.nbytes());
  }
  std::copy(bytes.begin(), bytes.end(), static_cast<char*>(a.raw()));
  return a;
}

void RunModelRun(const ModelRunCli& opts, const GlobalOptions& global) {
  model::GraphExecutor executor(opts.dir);
  const model::Artifact& art = executor.artifact();
  std::vector<graph::TensorType> types = executor.InputTypes();
  std::vector<NDArray> inputs;
  if (opts.inputs.empty()) {
    for (size_t i = 0; i < types.size(); ++i) {
      NDArray a = NDArray::Empty(types[i].shape, types[i].dtype);
      RandomRange range = RandomRangeFor(types[i].dtype);
      a.FillRandom(opts.seed + i, range.lo, range.hi);
      inputs.push_back(std::move(a));
    }
  } else {
    if (opts.inputs.size() != types.size()) {
      TT_USER_ERROR("the model takes {} input(s), {} file(s) given", types.size(),
                    opts.inputs.size());
    }
    for (size_t i = 0; i < types.size(); ++i) inputs.push_back(ReadInput(opts.inputs[i], types[i]));
  }
  std::vector<NDArray> outputs = executor.Run(inputs);
  nlohmann::json result = {{"model", opts.dir}, {"target", art.target}};

  nlohmann::json outputs_json = nlohmann::json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = art.values[art.outputs[i]].name;
    nlohmann::json j = {{"name", name}, {"shape", outputs[i].shape()}};
    if (!opts.outputs_dir.empty()) {
      std::filesystem::create_directories(opts.outputs_dir);
      std::string path =
          (std::filesystem::path(opts.outputs_dir) / fmt::format("output_{}.npy", i)).string();
      // (NumPy has no bfloat16: such an output is written widened to float32, exactly.)
      const NDArray& out = outputs[i];
      if (out.dtype() == DataType::BFloat16()) {
        NDArray wide = NDArray::Empty(out.shape(), DataType::Float(32));
        for (int64_t k = 0; k < out.size(); ++k) wide.SetDouble(k, out.GetDouble(k));
        model::WriteNpy(path, wide);
      } else {
        model::WriteNpy(path, out);
      }
      j["file"] = path;
    }
    outputs_json.push_back(std::move(j));
  }
  result["outputs"] = outputs_json;

  if (opts.verify) {
    std::vector<NDArray> expected = graph::RunGraph(executor.ReferenceGraph(), inputs);
    double max_abs = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      VerifyResult v = CompareArrays(art.values[art.outputs[i]].name, expected[i], outputs[i],
                                     Tolerance{/*rtol=*/1e-3, /*atol=*/1e-4});
      if (!v.ok) TT_USER_ERROR("the compiled model differs from the interpreter: {}", v.message);
      max_abs = std::max(max_abs, v.max_abs_error);
    }
    result["verified"] = true;
    result["max_abs_error"] = max_abs;
  }

  if (opts.bench) {
    if (opts.repeat < 1) TT_USER_ERROR("--repeat must be at least 1");
    for (int i = 0; i < opts.warmup; ++i) executor.Run(inputs);
    std::vector<double> samples;
    for (int i = 0; i < opts.repeat; ++i) {
      auto start = std::chrono::steady_clock::now();
      executor.Run(inputs);
      samples.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    // Each call's time in the model: the median of `repeat` runs whose calls are timed one by
    // one; a function's time is the sum over its calls.
    std::vector<std::vector<double>> call_samples(art.calls.size());
    for (int i = 0; i < opts.repeat; ++i) {
      std::vector<double> calls = executor.RunTimedCalls();
      for (size_t c = 0; c < calls.size(); ++c) call_samples[c].push_back(calls[c]);
    }
    std::map<int, double> per_function;
    double total = 0;
    for (size_t c = 0; c < call_samples.size(); ++c) {
      const double median = MedianOf(std::move(call_samples[c])).value_or(0);
      per_function[art.calls[c].function] += median;
      total += median;
    }
    // Each call again, warm and alone (the median of `repeat` runs in a row), as
    // `tune --warm-weights` times it: what a function loses in the model beside that is the model's
    // data flow (weights and activations coming from memory, other calls' threads).
    std::map<int, double> alone_per_function;
    double alone_total = 0;
    std::vector<double> alone = executor.RunTimedCalls(opts.repeat);
    for (size_t c = 0; c < alone.size(); ++c) {
      alone_per_function[art.calls[c].function] += alone[c];
      alone_total += alone[c];
    }
    std::vector<std::pair<double, int>> shares;
    for (const auto& [f, s] : per_function) shares.emplace_back(s, f);
    std::sort(shares.rbegin(), shares.rend());
    nlohmann::json shares_json = nlohmann::json::array();
    for (const auto& [s, f] : shares) {
      shares_json.push_back({{"function", art.functions[f].name},
                             {"tuned", art.functions[f].tuned},
                             {"seconds", s},
                             {"alone_seconds", alone_per_function[f]},
                             {"share", total > 0 ? s / total : 0}});
    }
    result["median_seconds"] = MedianOf(samples).value_or(0);
    result["calls_seconds"] = total;
    result["calls_alone_seconds"] = alone_total;
    result["samples"] = samples;
    result["functions"] = shares_json;
  }

  if (global.json) {
    fmt::print("{}\n", result.dump(2));
    return;
  }
  fmt::print("ran {} ({} call(s) of {} function(s)) on {} input(s)\n", opts.dir, art.calls.size(),
             art.functions.size(), inputs.size());
  for (const nlohmann::json& o : outputs_json) {
    fmt::print("  output {} {}{}\n", o["name"].get<std::string>(), o["shape"].dump(),
               o.contains("file") ? " -> " + o["file"].get<std::string>() : "");
  }
  if (opts.verify) {
    fmt::print("  verified against the interpreter (max abs error {:.2g})\n",
               result["max_abs_error"].get<double>());
  }
  if (opts.bench) {
    fmt::print("latency: {:.3f} ms (median of {} runs after {} warm-up)\n",
               result["median_seconds"].get<double>() * 1e3, opts.repeat, opts.warmup);
    fmt::print(
        "  calls one by one: {:.3f} ms; each warm and alone (as tune --warm-weights times them): "
        "{:.3f} "
        "ms\n",
        result["calls_seconds"].get<double>() * 1e3,
        result["calls_alone_seconds"].get<double>() * 1e3);
    fmt::print("  share   in model  alone\n");
    for (const nlohmann::json& s : result["functions"]) {
      fmt::print("  {:5.1f}%  {:.3f} ms  {:.3f} ms  {}{}\n", s["share"].get<double>() * 100,
                 s["seconds"].get<double>() * 1e3, s["alone_seconds"].get<double>() * 1e3,
                 s["function"].get<std::string>(), s["tuned"].get<bool>() ? " (tuned)" : "");
    }
  }
}

}  // namespace

void AddModelCommands(CLI::App& app, const GlobalOptions& global) {
  auto compile = std::make_shared<ModelCompileCli>();
  CLI::App* compile_cmd = app.add_subcommand(
      "compile", "compile an ONNX model with the best schedules of a tuning database");
  compile_cmd->add_option("--model", compile->model, "the ONNX model")->required();
  compile_cmd->add_option("--db", compile->db,
                          "the tuning database (without: default schedules only)");
  compile_cmd->add_option("--target", compile->target, "e.g. \"llvm -num-cores=2\"; default: host");
  compile_cmd->add_option("-o,--output", compile->output, "the artifact directory")->required();
  compile_cmd
      ->add_option("--offload", compile->offload,
                   "measured: a function a library can run (oneDNN convolutions and matrix "
                   "products with their epilogues) runs on it where its record, measured while "
                   "tuning, beat the tuned kernels; always: on the library regardless; never: "
                   "every function a kernel")
      ->capture_default_str();
  compile_cmd->callback([compile, &global] { RunModelCompile(*compile, global); });

  auto run = std::make_shared<ModelRunCli>();
  CLI::App* run_cmd = app.add_subcommand("run", "run a compiled model (tirtune compile)");
  run_cmd->add_option("dir", run->dir, "the artifact directory")->required();
  run_cmd->add_option("--inputs", run->inputs,
                      "one file per input, in order: .npy, or raw little-endian elements "
                      "(default: random inputs)");
  run_cmd->add_option("--outputs-dir", run->outputs_dir, "write output_I.npy files here");
  run_cmd->add_flag("--bench", run->bench, "time the model and each function");
  run_cmd->add_option("--repeat", run->repeat, "timed runs with --bench")->capture_default_str();
  run_cmd->add_option("--warmup", run->warmup, "untimed runs first")->capture_default_str();
  run_cmd->add_option("--seed", run->seed, "seed of the random inputs")->capture_default_str();
  run_cmd->add_flag("--verify", run->verify,
                    "compare the outputs with the interpreter (small models: it is slow)");
  run_cmd->callback([run, &global] { RunModelRun(*run, global); });
}

#else

void AddModelCommands(CLI::App&, const GlobalOptions&) {}

#endif

}  // namespace tirtune::cli
