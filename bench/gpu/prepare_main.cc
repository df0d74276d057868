// bench_gpu_prepare: writes a GPU bundle (gpu_bundle.h) on a host without a GPU. Every workload
// of the operator library at its small shape with the plain GPU schedule, the tiled GEMM
// schedules at 256³ (checked against the interpreter), and the timed cases: GEMM 4096³ (plain and
// tiled, checked against the plain kernel in full and against host-computed elements) and conv2d.
// Each kernel is lowered, compiled to a cubin for the arch and passed through the resource gates
// here; small cases also run in the GPU-semantics executor against the interpreter first.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "hand_schedules.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/codegen/target.h"
#include "tirtune/interp/gpu_executor.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/schedule/trace.h"
#include "tirtune/measure/gpu_bundle.h"
#include "tirtune/measure/reference.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::gpu_bundle {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

enum class Reference { kInterpreter, kGemmElements, kNone };

struct Case {
  std::string name;
  std::string workload;
  std::string schedule;
  std::function<Schedule(const PrimFunc&)> make;
  Reference reference = Reference::kInterpreter;
  std::string same_as;
  bool time = false;
  std::string expect = "pass";
  double rtol = 1e-3, atol = 1e-3;
  /// Inputs as files of raw float32 (as `tirtune time --target cuda` writes them), not seeds.
  bool file_inputs = false;
  /// CudaOptions::int32_indices.
  bool int32_indices = false;
};

uint64_t SeedOf(size_t param) { return 1000 + param; }

// Where a parameter's values start: a variance (batch_norm's moving_var) must not be negative.
float LowOf(const Buffer& param) {
  std::string name = param->name;
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  return name.find("var") != std::string::npos ? 0.25f : -1.0f;
}

std::vector<NDArray> SeededArgs(const PrimFunc& func) {
  std::vector<NDArray> args;
  std::vector<bool> written = WrittenParams(func);
  for (size_t p = 0; p < func->params.size(); ++p) {
    const Buffer& b = func->params[p];
    std::vector<int64_t> shape;
    for (const Expr& e : b->shape) shape.push_back(*AsConstInt(e));
    NDArray a = NDArray::Empty(shape, b->dtype);
    if (!written[p]) FillSeeded(a.data<float>(), a.size(), SeedOf(p), LowOf(b));
    args.push_back(std::move(a));
  }
  return args;
}

class Preparer {
 public:
  Preparer(std::string dir, Target target) : dir_(std::move(dir)), target_(std::move(target)) {
    manifest_ = json::array();
  }

  void Add(const Case& spec) {
    auto start = std::chrono::steady_clock::now();
    Workload w = MakeWorkload(spec.workload);
    std::string status;
    try {
      json c = Build(spec, w);
      manifest_.push_back(c);
      status = c.value("status", "ok");
    } catch (const std::exception& e) {
      status = std::string("SKIPPED: ") + e.what();
      ++skipped_;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << fmt::format("{:<34} {:<32} {:6.1f} s  {}", spec.name, spec.workload, s, status)
              << std::endl;
  }

  int Finish() {
    WriteManifest(dir_, target_.arch, manifest_);
    std::cout << fmt::format("{} cases in {}/manifest.json, {} skipped\n",
                             manifest_.size(), dir_, skipped_);
    return skipped_ == 0 ? 0 : 1;
  }

 private:
  json Build(const Case& spec, const Workload& w) {
    const PrimFunc& func = w.func;
    Schedule sch = spec.make(func);
    GpuModule module = LowerGpu(sch.func(), target_.gpu);
    CudaBinary binary = CompileCuda(module, target_, {.int32_indices = spec.int32_indices});
    std::vector<std::string> gates = CheckResourceGates(module, binary, target_.gpu);
    if (!gates.empty()) throw std::runtime_error("resource gates: " + gates.front());
    std::ofstream(dir_ + "/" + spec.name + ".cu") << binary.source;
    std::ofstream(dir_ + "/" + spec.name + ".trace.json") << sch.trace().ToJson().dump(1) << "\n";
    std::vector<bool> written = WrittenParams(func);
    std::vector<NDArray> seeded = spec.file_inputs ? SeededArgs(func) : std::vector<NDArray>{};
    std::vector<Input> inputs;
    for (size_t p = 0; p < func->params.size(); ++p) {
      Input input;
      input.seed = SeedOf(p);
      input.low = LowOf(func->params[p]);
      if (spec.file_inputs && !written[p]) {
        const NDArray& a = seeded[p];
        input.file = fmt::format("{}.input{}.bin", spec.name, p);
        std::ofstream(dir_ + "/" + input.file, std::ios::binary)
            .write(static_cast<const char*>(a.raw()), static_cast<std::streamsize>(a.nbytes()));
      }
      inputs.push_back(input);
    }
    gpu_bundle::CaseSpec c_spec{.name = spec.name, .workload = spec.workload,
                                .schedule = spec.schedule, .flops = w.flops, .time = spec.time,
                                .expect = spec.expect, .rtol = spec.rtol, .atol = spec.atol,
                                .same_as = spec.same_as};
    json c = WriteCase(dir_, c_spec, module, binary, written, inputs);
    int64_t registers = 0;
    for (const KernelResources& r : binary.resources) registers = std::max(registers, r.registers);
    std::string status = fmt::format("{} kernel(s), {} registers, nvrtc {:.0f} ms",
                                     module.kernels.size(), registers, binary.nvrtc_ms);
    if (spec.reference == Reference::kInterpreter) {
      double reduction_length = LongestReduction(func);
      std::vector<NDArray> want = SeededArgs(func);
      Interpret(func, want);
      json check = json::object();
      for (size_t p = 0; p < func->params.size(); ++p) {
        if (written[p]) check[func->params[p]->name] = CheckOf(want[p], reduction_length);
      }
      c["check"] = check;
      if (w.flops < 5e7) status += ", executor " + ExecutorAgrees(func, module, want, spec);
    } else if (spec.reference == Reference::kGemmElements) {
      c["check"] = {{"C", GemmElements(func)}};
    }
    if (spec.expect == "mismatch") Corrupt(c);
    c["status"] = status;
    return c;
  }

  // The GPU-semantics executor on the same inputs, compared with the interpreter's `want`.
  std::string ExecutorAgrees(const PrimFunc& func, const GpuModule& module,
                             const std::vector<NDArray>& want, const Case& spec) {
    std::vector<NDArray> got;  // the module's parameters are the function's, flattened
    for (const NDArray& a : SeededArgs(func)) {
      NDArray flat = NDArray::Empty({a.size()}, a.dtype());
      std::memcpy(flat.data<float>(), a.data<float>(), static_cast<size_t>(a.nbytes()));
      got.push_back(std::move(flat));
    }
    try {
      ExecuteGpuModule(module, got);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("the GPU-semantics executor: ") + e.what());
    }
    std::vector<bool> written = WrittenParams(func);
    for (size_t p = 0; p < want.size(); ++p) {
      if (!written[p]) continue;
      for (int64_t i = 0; i < want[p].size(); ++i) {
        if (!Close(got[p].GetDouble(i), want[p].GetDouble(i), spec.rtol, spec.atol)) {
          throw std::runtime_error(fmt::format(
              "the GPU-semantics executor differs at {}[{}]: {} where the interpreter has {}",
              func->params[p]->name, i, got[p].GetDouble(i), want[p].GetDouble(i)));
        }
      }
    }
    return "agrees";
  }

  // 512 elements of C = A B computed here in double from the seeded inputs.
  json GemmElements(const PrimFunc& func) {
    std::vector<int64_t> a_shape, b_shape;
    for (const Expr& e : func->params[0]->shape) a_shape.push_back(*AsConstInt(e));
    for (const Expr& e : func->params[1]->shape) b_shape.push_back(*AsConstInt(e));
    int64_t m = a_shape[0], k = a_shape[1], n = b_shape[1];
    std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    FillSeeded(a.data(), m * k, SeedOf(0));
    FillSeeded(b.data(), k * n, SeedOf(1));
    json indices = json::array(), values = json::array();
    for (int64_t at : SpreadIndices(m * n, 512)) {
      int64_t i = at / n, j = at % n;
      double sum = 0;
      for (int64_t r = 0; r < k; ++r) sum += double{a[i * k + r]} * double{b[r * n + j]};
      indices.push_back(at);
      values.push_back(sum);
    }
    return {{"indices", indices}, {"values", values}};
  }

  // A planted wrong reference: every checked value shifted by one, which the GPU run must catch.
  static void Corrupt(json& c) {
    for (auto& [out, ref] : c["check"].items()) {
      for (json& v : ref["values"]) {
        if (v.is_number()) v = v.get<double>() + 1.0;
      }
    }
  }

  std::string dir_;
  Target target_;
  json manifest_;
  int skipped_ = 0;
};

std::string ShapeSpec(const WorkloadDef& def) {
  std::string spec = def.name + ":";
  for (size_t i = 0; i < def.small_shape.size(); ++i) {
    spec += (i ? "," : "") + std::to_string(def.small_shape[i]);
  }
  return spec;
}

int Main(int argc, char** argv) {
  CLI::App app{"Writes a GPU bundle: cubins, launches and reference numbers of GPU schedules."};
  std::string dir, arch = "sm_90";
  bool quick = false;
  app.add_option("dir", dir, "the bundle folder to write")->required();
  app.add_option("--arch", arch, "the GPU architecture")->capture_default_str();
  app.add_flag("--quick", quick, "only the small cases (no 4096³ GEMM, no conv2d)");
  CLI11_PARSE(app, argc, argv);
  fs::create_directories(dir);
  Preparer prep(dir, Target::Parse("cuda -arch=" + arch));
  auto spec = [](std::string name, std::string workload, std::string schedule,
                 std::function<Schedule(const PrimFunc&)> make) {
    Case c;
    c.name = std::move(name);
    c.workload = std::move(workload);
    c.schedule = std::move(schedule);
    c.make = std::move(make);
    return c;
  };
  auto plain = [](const PrimFunc& f) { return PlainGpuSchedule(f); };
  const char* plain_text = "plain: one thread per output element";

  // Every workload of the operator library, plain schedule, small shape.
  for (const WorkloadDef& def : AllWorkloads()) {
    if (!def.small_shape.empty()) {
      prep.Add(spec("plain_" + def.name, ShapeSpec(def), plain_text, plain));
    }
  }
  Case planted = spec("planted_wrong_reference", "gemm:64,64,64",
                          "plain, checked against references shifted by 1 (must be caught)", plain);
  planted.expect = "mismatch";
  prep.Add(planted);

  // The tiled schedules, checked against the interpreter at a small size.
  std::vector<GemmTiling> gemm_tilings = {
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 8},
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 8, .strided = false},
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 16},
      {.threads_y = 16, .threads_x = 16, .tile_y = 4, .tile_x = 4, .k_tile = 8},
      {.threads_y = 8, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 8},
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 4},
      {.threads_y = 8, .threads_x = 32, .tile_y = 8, .tile_x = 4, .k_tile = 8},
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 8, .decompose = false},
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 32},
      {.threads_y = 32, .threads_x = 8, .tile_y = 4, .tile_x = 8, .k_tile = 16},
      {.threads_y = 16, .threads_x = 16, .tile_y = 4, .tile_x = 8, .k_tile = 16},
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 16, .strided = false},
      {.threads_y = 8, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 32},
      {.threads_y = 16, .threads_x = 8, .tile_y = 8, .tile_x = 8, .k_tile = 32},
      {.threads_y = 32, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 16},
      {.threads_y = 16, .threads_x = 32, .tile_y = 8, .tile_x = 8, .k_tile = 16},
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 32, .strided = false},
      {.threads_y = 8, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 16},
      {.threads_y = 8, .threads_x = 8, .tile_y = 8, .tile_x = 8, .k_tile = 32},
      {.threads_y = 8, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 32, .strided = false},
      {.threads_y = 4, .threads_x = 32, .tile_y = 8, .tile_x = 8, .k_tile = 32},
      {.threads_y = 8, .threads_x = 32, .tile_y = 8, .tile_x = 4, .k_tile = 32},
      {.threads_y = 16, .threads_x = 8, .tile_y = 8, .tile_x = 8, .k_tile = 32, .strided = false},
      {.threads_y = 8, .threads_x = 8, .tile_y = 8, .tile_x = 8, .k_tile = 32, .strided = false},
      {.threads_y = 8, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 16, .strided = false},
      // float4 fetches and write-back.
      {.threads_y = 8, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 32, .strided = false,
       .vector_lanes = 4},
      {.threads_y = 8, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 16, .strided = false,
       .vector_lanes = 4},
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 16, .strided = false,
       .vector_lanes = 4},
      {.threads_y = 16, .threads_x = 8, .tile_y = 8, .tile_x = 8, .k_tile = 32, .strided = false,
       .vector_lanes = 4},
      {.threads_y = 8, .threads_x = 8, .tile_y = 8, .tile_x = 8, .k_tile = 32, .strided = false,
       .vector_lanes = 4},
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 8, .strided = false,
       .vector_lanes = 4},
      // Beyond 48 KiB of shared memory: dynamic shared memory (128 x 128 tiles, k tile 64 / 48).
      {.threads_y = 16, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 64, .strided = false,
       .vector_lanes = 4},
      {.threads_y = 8, .threads_x = 16, .tile_y = 8, .tile_x = 8, .k_tile = 128, .strided = false,
       .vector_lanes = 4},
  };
  auto gemm = [](GemmTiling t) {
    return [t](const PrimFunc& f) { return TiledGemmSchedule(f, t); };
  };
  for (size_t t = 0; t < gemm_tilings.size(); ++t) {
    prep.Add(spec(fmt::format("gemm256_tiled{}", t), "gemm:256,256,256",
                  gemm_tilings[t].Describe(), gemm(gemm_tilings[t])));
  }
  Case from_files = spec("gemm256_file_inputs", "gemm:256,256,256", gemm_tilings[0].Describe(),
                         gemm(gemm_tilings[0]));
  from_files.file_inputs = true;
  prep.Add(from_files);
  std::vector<ConvTiling> conv_tilings = {
      {.h_tile = 1, .w_threads = 8, .w_tile = 1, .co_threads = 16, .co_tile = 4, .rc_tile = 8},
      {.h_tile = 1, .w_threads = 4, .w_tile = 2, .co_threads = 16, .co_tile = 4, .rc_tile = 8},
      {.h_tile = 2, .w_threads = 8, .w_tile = 1, .co_threads = 16, .co_tile = 4, .rc_tile = 8},
      {.h_tile = 1, .w_threads = 8, .w_tile = 1, .co_threads = 8, .co_tile = 8, .rc_tile = 16},
      {.h_tile = 2, .w_threads = 8, .w_tile = 1, .co_threads = 16, .co_tile = 4, .rc_tile = 8,
       .strided = false},
      {.h_tile = 2, .w_threads = 4, .w_tile = 2, .co_threads = 16, .co_tile = 4, .rc_tile = 8},
      {.h_tile = 2, .w_threads = 8, .w_tile = 1, .co_threads = 16, .co_tile = 4, .rc_tile = 16},
      {.h_tile = 4, .w_threads = 8, .w_tile = 1, .co_threads = 16, .co_tile = 4, .rc_tile = 8},
      // float4 fetches and write-back.
      {.h_tile = 2, .w_threads = 8, .w_tile = 1, .co_threads = 16, .co_tile = 4, .rc_tile = 16,
       .strided = false, .vector_lanes = 4},
      {.h_tile = 2, .w_threads = 8, .w_tile = 1, .co_threads = 16, .co_tile = 4, .rc_tile = 8,
       .strided = false, .vector_lanes = 4},
      {.h_tile = 1, .w_threads = 8, .w_tile = 1, .co_threads = 8, .co_tile = 8, .rc_tile = 16,
       .strided = false, .vector_lanes = 4},
  };
  auto conv = [](ConvTiling t) {
    return [t](const PrimFunc& f) { return TiledConv2dSchedule(f, t); };
  };
  prep.Add(spec("softmax_small_rows16", "softmax:8,64", "one block of 16 threads per row",
                [](const PrimFunc& f) { return SoftmaxSchedule(f, 16); }));
  for (int64_t threads : {16, 64, 24}) {
    prep.Add(spec(fmt::format("softmax_small_cross{}", threads),
                  fmt::format("softmax:8,{}", threads * 4),
                  fmt::format("one block of {} threads per row, cross-thread reductions", threads),
                  [threads](const PrimFunc& f) { return SoftmaxCrossThreadSchedule(f, threads); }));
  }
  for (size_t t = 0; t < conv_tilings.size(); ++t) {
    prep.Add(spec(fmt::format("conv2d_small_tiled{}", t), "conv2d:1,8,16,16,64,3,1,1",
                  conv_tilings[t].Describe(), conv(conv_tilings[t])));
  }
  if (!quick) {
    // The timed cases.
    Case gemm_plain = spec("gemm4096_plain", "gemm:4096,4096,4096", plain_text, plain);
    gemm_plain.reference = Reference::kGemmElements;
    gemm_plain.time = true;
    prep.Add(gemm_plain);
    for (size_t t = 0; t < gemm_tilings.size(); ++t) {
      Case c = spec(fmt::format("gemm4096_tiled{}", t), "gemm:4096,4096,4096",
                        gemm_tilings[t].Describe(), gemm(gemm_tilings[t]));
      c.reference = Reference::kGemmElements;
      c.same_as = "gemm4096_plain";
      c.time = true;
      prep.Add(c);
    }
    // A softmax and a reduction at sizes worth timing, plain (each row in one thread).
    for (const char* w : {"softmax:4096,1024", "global_avg_pool2d:32,7,7,2048"}) {
      std::string name = std::string(w).substr(0, std::string(w).find(':')) + "_large_plain";
      Case c = spec(name, w, plain_text, plain);
      c.time = true;
      c.atol = 1e-5;
      prep.Add(c);
    }
    for (int64_t threads : {32, 64, 128, 256}) {
      Case c = spec(fmt::format("softmax_large_rows{}", threads), "softmax:4096,1024",
                    fmt::format("one block of {} threads per row, reductions through shared "
                                "memory (rfactor)",
                                threads),
                    [threads](const PrimFunc& f) { return SoftmaxSchedule(f, threads); });
      c.reference = Reference::kNone;
      c.same_as = "softmax_large_plain";
      c.time = true;
      c.atol = 1e-5;
      prep.Add(c);
    }
    for (int64_t threads : {32, 64, 128, 256, 512}) {
      Case c = spec(fmt::format("softmax_large_cross{}", threads), "softmax:4096,1024",
                    fmt::format("one block of {} threads per row, cross-thread reductions "
                                "(warp shuffles)",
                                threads),
                    [threads](const PrimFunc& f) { return SoftmaxCrossThreadSchedule(f, threads); });
      c.reference = Reference::kNone;
      c.same_as = "softmax_large_plain";
      c.time = true;
      c.atol = 1e-5;
      prep.Add(c);
    }
    const char* conv_shape = "conv2d:1,56,56,64,64,3,1,1";
    // 32-bit index arithmetic (CudaOptions::int32_indices) on the kernels that measure it.
    for (Case c : {spec("gemm4096_plain_i32", "gemm:4096,4096,4096", plain_text, plain),
                   spec("gemm4096_tiled8_i32", "gemm:4096,4096,4096", gemm_tilings[8].Describe(),
                        gemm(gemm_tilings[8])),
                   spec("conv2d_56_tiled2_i32", conv_shape, conv_tilings[2].Describe(),
                        conv(conv_tilings[2])),
                   spec("softmax_large_rows64_i32", "softmax:4096,1024", "64 threads per row",
                        [](const PrimFunc& f) { return SoftmaxSchedule(f, 64); })}) {
      c.reference = Reference::kNone;
      c.same_as = c.workload == "softmax:4096,1024" ? "softmax_large_plain"
                  : c.workload == conv_shape        ? ""
                                                    : "gemm4096_plain";
      c.time = true;
      c.int32_indices = true;
      c.atol = c.workload == "softmax:4096,1024" ? 1e-5 : 1e-3;
      if (c.same_as.empty()) c.reference = Reference::kInterpreter;
      prep.Add(c);
    }
    Case conv_plain = spec("conv2d_56_plain", conv_shape, plain_text, plain);
    conv_plain.time = true;
    prep.Add(conv_plain);
    for (size_t t = 0; t < conv_tilings.size(); ++t) {
      Case c = spec(fmt::format("conv2d_56_tiled{}", t), conv_shape,
                        conv_tilings[t].Describe(), conv(conv_tilings[t]));
      c.reference = Reference::kNone;
      c.same_as = "conv2d_56_plain";
      c.time = true;
      prep.Add(c);
    }
  }
  return prep.Finish();
}

}  // namespace
}  // namespace tirtune::gpu_bundle

int main(int argc, char** argv) {
  try {
    return tirtune::gpu_bundle::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
