// tirtune-gpu-runner: runs a GPU bundle (tirtune/measure/gpu_bundle.h) on a GPU host that has
// only the NVIDIA driver. For each case: load the cubin, fill the inputs (seeded), run its kernels once, check the
// outputs against the interpreter's numbers (and against an earlier case's outputs where the
// manifest says so); only a verified kernel is timed: CUDA events around its launches, an L2
// flush before every repeat, the median of the repeats. Prints a table and writes the results as
// JSON. Exit status 0 when every case did what the manifest expects, 1 otherwise, 1 as well when
// there is no GPU (saying so).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tirtune/measure/gpu_bundle.h"
#include "tirtune/runtime/cuda_driver.h"

namespace tirtune::gpu_bundle {
namespace {

using nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::array<int64_t, 3> Dims(const json& j) {
  std::array<int64_t, 3> d = {1, 1, 1};
  for (size_t i = 0; i < 3 && i < j.size(); ++i) d[i] = j[i].get<int64_t>();
  return d;
}

struct Buffer {
  std::string name;
  std::string kind;
  int64_t elements = 0;
  cuda::DeviceBuffer device;
  uint64_t address = 0;  // the launch argument's value
};

struct Launch {
  cuda::Kernel kernel;
  std::array<int64_t, 3> grid{}, block{};
  std::vector<size_t> args;
  int64_t dynamic_shared_bytes = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

class BundleRunner {
 public:
  BundleRunner(cuda::Context& ctx, std::string dir, double min_ms)
      : ctx_(ctx), dir_(std::move(dir)), min_ms_(min_ms) {
    int64_t flush_bytes = std::max<int64_t>(2 * ctx.info().l2_bytes, int64_t{64} << 20);
    flush_ = ctx.Allocate(static_cast<size_t>(flush_bytes));
  }

  // Runs one case; returns its result (and whether it met the manifest's expectation).
  json Run(const json& c, const std::vector<std::string>& kept_later) {
    std::string name = c.at("name");
    json result = {{"name", name}, {"workload", c.value("workload", "")},
                   {"schedule", c.value("schedule", "")}};
    cuda::Module module = ctx_.Load(ReadFile(dir_ + "/" + c.at("cubin").get<std::string>()));
    std::vector<Buffer> buffers;
    for (const json& b : c.at("buffers")) {
      if (b.value("dtype", "float32") != "float32") {
        throw std::runtime_error(fmt::format("{}: buffer {} is {}, only float32 is supported",
                                             name, b.at("name").get<std::string>(),
                                             b.value("dtype", "")));
      }
      Buffer buf{b.at("name"), b.at("kind"), b.at("elements").get<int64_t>(), {}, 0};
      buf.device = ctx_.Allocate(static_cast<size_t>(buf.elements) * sizeof(float));
      buf.address = buf.device.address();
      if (buf.kind == "input") {
        std::vector<float> host(static_cast<size_t>(buf.elements));
        if (b.contains("file")) {
          std::string path = dir_ + "/" + b.at("file").get<std::string>();
          std::string bytes = ReadFile(path);
          if (bytes.size() != host.size() * sizeof(float)) {
            throw std::runtime_error(fmt::format("{} holds {} bytes, buffer {} needs {}", path,
                                                 bytes.size(), buf.name,
                                                 host.size() * sizeof(float)));
          }
          std::memcpy(host.data(), bytes.data(), bytes.size());
        } else {
          FillSeeded(host.data(), buf.elements, b.at("seed").get<uint64_t>(),
                     b.value("low", -1.0f));
        }
        ctx_.CopyToDevice(buf.device, host.data(), host.size() * sizeof(float));
      } else {
        ctx_.Fill(buf.device, 0xFF);  // NaN: an element no kernel writes shows
      }
      buffers.push_back(std::move(buf));
    }
    std::vector<Launch> launches;
    json kernel_info = json::array();
    for (const json& k : c.at("kernels")) {
      Launch l{module.Function(k.at("name")), Dims(k.at("grid")), Dims(k.at("block")),
               k.at("args").get<std::vector<size_t>>(), k.value("dynamic_shared", int64_t{0})};
      kernel_info.push_back({{"name", l.kernel.name},
                             {"registers", l.kernel.registers},
                             {"local_bytes", l.kernel.local_bytes},
                             {"static_shared_bytes", l.kernel.static_shared_bytes}});
      launches.push_back(std::move(l));
    }
    result["kernels"] = kernel_info;
    auto run_all = [&] {
      for (const Launch& l : launches) {
        std::vector<void*> args;
        for (size_t a : l.args) args.push_back(&buffers.at(a).address);
        ctx_.Launch(l.kernel, l.grid, l.block, l.dynamic_shared_bytes, std::move(args));
      }
    };
    run_all();
    ctx_.Synchronize();

    // Verification.
    double rtol = c.value("rtol", 1e-3), atol = c.value("atol", 1e-3);
    int64_t checked = 0, wrong = 0;
    std::string first_wrong;
    auto note = [&](const std::string& what) {
      ++wrong;
      if (first_wrong.empty()) first_wrong = what;
    };
    std::map<std::string, std::vector<float>> outputs;
    for (const Buffer& b : buffers) {
      if (b.kind != "output") continue;
      std::vector<float>& host = outputs[b.name];
      host.resize(static_cast<size_t>(b.elements));
      ctx_.CopyToHost(host.data(), b.device, host.size() * sizeof(float));
    }
    if (c.contains("check")) {
      for (const auto& [out, ref] : c.at("check").items()) {
        const std::vector<float>& got = outputs.at(out);
        const json& indices = ref.at("indices");
        const json& values = ref.at("values");
        double check_rtol = ref.value("rtol", rtol), check_atol = ref.value("atol", atol);
        for (size_t i = 0; i < indices.size(); ++i) {
          size_t at = indices[i].get<size_t>();
          ++checked;
          if (!Matches(got.at(at), values[i], check_rtol, check_atol)) {
            note(fmt::format("{}[{}] = {} where the reference has {}", out, at, got[at],
                             values[i].dump()));
          }
        }
      }
    }
    if (c.contains("same_as")) {
      std::string other = c.at("same_as");
      auto found = kept_.find(other);
      if (found == kept_.end()) {
        note(fmt::format("no outputs of case {} to compare with", other));
      } else {
        for (const auto& [out, got] : outputs) {
          const std::vector<float>& want = found->second.at(out);
          for (size_t i = 0; i < got.size(); ++i) {
            ++checked;
            if (!Close(got[i], want[i], rtol, atol)) {
              note(fmt::format("{}[{}] = {} where {} computes {}", out, i, got[i], other, want[i]));
            }
          }
        }
      }
    }
    bool verified = wrong == 0 && checked > 0;
    std::string expect = c.value("expect", "pass");
    result["checked"] = checked;
    result["wrong"] = wrong;
    if (!first_wrong.empty()) result["first_wrong"] = first_wrong;
    result["verified"] = verified;
    result["as_expected"] = verified == (expect == "pass");
    if (std::find(kept_later.begin(), kept_later.end(), name) != kept_later.end()) {
      kept_[name] = std::move(outputs);
    }

    if (verified && c.value("time", false)) {
      auto flush = [&] { ctx_.Fill(flush_, static_cast<uint8_t>(++flushes_)); };
      double first = ctx_.TimeMs(flush, run_all);
      int repeats = static_cast<int>(std::clamp(min_ms_ / std::max(first, 1e-3), 10.0, 500.0));
      std::vector<double> times;
      for (int r = 0; r < repeats; ++r) times.push_back(ctx_.TimeMs(flush, run_all));
      double median = Median(times);
      result["repeats"] = repeats;
      result["median_ms"] = median;
      result["min_ms"] = *std::min_element(times.begin(), times.end());
      result["max_ms"] = *std::max_element(times.begin(), times.end());
      double flops = c.value("flops", 0.0);
      if (flops > 0) result["tflops"] = flops / (median * 1e-3) / 1e12;
    }
    return result;
  }

 private:
  cuda::Context& ctx_;
  std::string dir_;
  double min_ms_;
  cuda::DeviceBuffer flush_;
  int flushes_ = 0;
  std::map<std::string, std::map<std::string, std::vector<float>>> kept_;
};

std::string Row(const json& r) {
  std::string registers;
  for (const json& k : r.value("kernels", json::array())) {
    registers += (registers.empty() ? "" : "/") + std::to_string(k.value("registers", 0));
  }
  std::string status = r.value("error", std::string());
  if (status.empty()) {
    status = r.value("verified", false) ? "verified" : "WRONG: " + r.value("first_wrong", "");
    if (!r.value("as_expected", false)) status += " (not as expected)";
  }
  std::string time = r.contains("median_ms") ? fmt::format("{:10.4f} ms", r["median_ms"].get<double>())
                                             : fmt::format("{:>13}", "-");
  std::string tflops =
      r.contains("tflops") ? fmt::format("{:8.2f}", r["tflops"].get<double>()) : "       -";
  return fmt::format("{:<28} {:>8} {} {} TFLOP/s  {}", r.value("name", ""), registers, time,
                     tflops, status);
}

int Main(int argc, char** argv) {
  CLI::App app{"tirtune-gpu-runner: verifies every case of a GPU bundle on the GPU, then times it."};
  std::string dir, json_out;
  int device = 0;
  double min_ms = 300;
  app.add_option("bundle", dir, "the bundle folder (manifest.json and cubins)")->required();
  app.add_option("--json", json_out, "write the results here");
  app.add_option("--device", device, "CUDA device ordinal")->capture_default_str();
  app.add_option("--min-ms", min_ms, "time each case for about this long (at least 10 repeats)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  json manifest;
  try {
    manifest = json::parse(ReadFile(dir + "/manifest.json"));
  } catch (const std::exception& e) {
    std::cerr << "error: " << dir << "/manifest.json: " << e.what() << "\n";
    return 1;
  }
  if (manifest.value("format", 0) != kFormat) {
    std::cerr << "error: " << dir << "/manifest.json is not a format-" << kFormat << " bundle\n";
    return 1;
  }
  std::unique_ptr<cuda::Context> ctx;
  try {
    ctx = std::make_unique<cuda::Context>(device);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  const cuda::DeviceInfo& info = ctx->info();
  json report = {{"device",
                  {{"name", info.name},
                   {"arch", info.Arch()},
                   {"sm_count", info.sm_count},
                   {"clock_mhz", info.clock_khz / 1000},
                   {"memory_clock_mhz", info.memory_clock_khz / 1000},
                   {"memory_bus_bits", info.memory_bus_bits},
                   {"l2_bytes", info.l2_bytes},
                   {"memory_bytes", info.memory_bytes},
                   {"max_shared_optin_bytes", info.max_shared_optin_bytes},
                   {"driver_version", info.driver_version}}},
                 {"bundle_arch", manifest.value("arch", "")},
                 {"cases", json::array()}};
  std::cout << fmt::format("device {}: {} ({}, {} SMs, {} MHz, L2 {} MiB, driver {})\n",
                           info.ordinal, info.name, info.Arch(), info.sm_count,
                           info.clock_khz / 1000, info.l2_bytes >> 20, info.driver_version);
  if (manifest.value("arch", "") != info.Arch()) {
    std::cerr << "error: the bundle's cubins are for " << manifest.value("arch", "?")
              << ", this device is " << info.Arch() << "\n";
    return 1;
  }
  std::vector<std::string> kept_later;
  for (const json& c : manifest.at("cases")) {
    if (c.contains("same_as")) kept_later.push_back(c.at("same_as"));
  }
  BundleRunner runner(*ctx, dir, min_ms);
  bool all_as_expected = true;
  for (const json& c : manifest.at("cases")) {
    json r;
    try {
      r = runner.Run(c, kept_later);
    } catch (const cuda::CudaError& e) {
      // The context may be poisoned: report and stop.
      r = {{"name", c.value("name", "")}, {"error", e.what()}, {"as_expected", false}};
      report["cases"].push_back(r);
      std::cout << Row(r) << "\n";
      all_as_expected = false;
      std::cout << "stopped: a driver error leaves the context unusable\n";
      break;
    } catch (const std::exception& e) {
      r = {{"name", c.value("name", "")}, {"error", e.what()}, {"as_expected", false}};
    }
    all_as_expected = all_as_expected && r.value("as_expected", false);
    std::cout << Row(r) << std::endl;
    report["cases"].push_back(r);
  }
  if (!json_out.empty()) std::ofstream(json_out) << report.dump(2) << "\n";
  std::cout << (all_as_expected ? "every case as expected\n" : "SOME CASES FAILED\n");
  return all_as_expected ? 0 : 1;
}

}  // namespace
}  // namespace tirtune::gpu_bundle

int main(int argc, char** argv) { return tirtune::gpu_bundle::Main(argc, argv); }
