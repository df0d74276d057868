// GPU bundles: how CUDA kernels built on one host (no GPU needed) are verified and timed on a GPU
// host by `tirtune-gpu-runner`, a process of its own that needs only the NVIDIA driver (a kernel
// that faults poisons its CUDA context, never the tuner's process).
//
// A bundle is a folder with `manifest.json`, one cubin per case and input files where inputs are
// not generated:
//   {"format": 1, "arch": "sm_90", "cases": [CASE, ...]}
//   CASE = {"name", "workload", "schedule" (in words), "cubin",
//           "flops" (0: unknown), "time" (bool: time it once verified),
//           "expect": "pass" | "mismatch" (a planted wrong reference the check must catch),
//           "rtol", "atol",
//           "buffers": [{"name", "dtype": "float32", "elements",
//                        "kind": "input" | "output" | "intermediate",
//                        inputs: "seed" and "low" (FillSeeded) or "file" (raw float32)}],
//           "kernels": [{"name", "grid": [x, y, z], "block": [x, y, z], "args": [buffer index],
//                        "dynamic_shared": bytes (0: static shared memory only)}],
//           "check": {OUTPUT: {"indices": [...], "values": [...], optional "rtol", "atol"
//                     overriding the case's}} (the reference's numbers; a value that is not
//                     finite is the string "nan", "inf" or "-inf", which JSON has no number for),
//           "same_as": NAME (optional: every output element compared with that earlier case's)}
// Seeded inputs keep a bundle for a 4096³ GEMM a few hundred kilobytes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tirtune {

struct CudaBinary;
struct GpuModule;
class NDArray;

namespace gpu_bundle {

inline constexpr int kFormat = 1;

/// Uniform values in [lo, lo + 2) from splitmix64 of `seed`: the same numbers on every host.
inline void FillSeeded(float* data, int64_t n, uint64_t seed, float lo = -1.0f) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
  for (int64_t i = 0; i < n; ++i) {
    state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    data[i] = static_cast<float>(static_cast<double>(z >> 40) / static_cast<double>(1ULL << 23) +
                                 lo);
  }
}

/// Whether `got` is within tolerance of `want` (NaN is never close).
inline bool Close(double got, double want, double rtol, double atol) {
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

/// A reference value as a check entry holds it: a number, or "nan", "inf", "-inf".
inline nlohmann::json EncodeValue(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

/// Whether `got` matches a check entry's value `want` (EncodeValue's form): within tolerance of a
/// number, or the same kind of non-finite value.
inline bool Matches(double got, const nlohmann::json& want, double rtol, double atol) {
  if (want.is_number()) return Close(got, want.get<double>(), rtol, atol);
  if (want == "nan") return std::isnan(got);
  if (want == "inf") return std::isinf(got) && got > 0;
  if (want == "-inf") return std::isinf(got) && got < 0;
  return false;
}

/// Up to `limit` element indices of an array of `n` elements: all of them, or `limit` spread
/// over the whole array.
inline std::vector<int64_t> SpreadIndices(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t s = 0; s < std::min(n, limit); ++s) {
    out.push_back(n <= limit ? s : (s * 7919 + (s * n) / limit) % n);
  }
  return out;
}

/// Where a case's input comes from: FillSeeded(seed, low), or a file of raw float32 values.
struct Input {
  uint64_t seed = 0;
  float low = -1.0f;
  std::string file;
};

/// What a case is, besides its kernels.
struct CaseSpec {
  std::string name;
  std::string workload;
  std::string schedule;
  double flops = 0;
  bool time = false;
  std::string expect = "pass";
  double rtol = 1e-3, atol = 1e-3;
  std::string same_as;
};

/// Writes `binary`'s cubin into `dir` and returns the case's manifest entry: the module's
/// parameters (an input per parameter not in `written`, from `inputs`; the others outputs), its
/// global intermediates, and its kernels' launches. Only float32 buffers (UserError otherwise).
nlohmann::json WriteCase(const std::string& dir, const CaseSpec& spec, const GpuModule& module,
                         const CudaBinary& binary, const std::vector<bool>& written,
                         const std::vector<Input>& inputs);

/// A check entry: up to `limit` elements of `expected` (all of them, or spread evenly), with the
/// tolerance the CPU's verification applies to it (Tolerance::ForSum for sums of
/// `reduction_length` terms, atol scaled by AtolScale).
nlohmann::json CheckOf(const NDArray& expected, double reduction_length, int64_t limit = 1 << 14);

/// Writes `dir`/manifest.json.
void WriteManifest(const std::string& dir, const std::string& arch, const nlohmann::json& cases);

/// Runs tirtune-gpu-runner on the bundle in `dir` as a child process and returns its results
/// (gpu_runner_main.cc: {"device": ..., "cases": [...]}). Throws UserError with what the runner
/// said when it cannot run the bundle at all (no GPU, a wrong arch), or when it runs past
/// `timeout_s`.
nlohmann::json RunBundle(const std::string& dir, double timeout_s, const std::string& runner_path = "");

/// The tirtune-gpu-runner built with this library (or the one next to the running program).
std::string DefaultRunnerPath();

}  // namespace gpu_bundle
}  // namespace tirtune
