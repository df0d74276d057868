// The GPU bundle: what bench_gpu_prepare writes on the tuning host (no GPU needed) and
// tirtune-gpu-bench runs on a GPU host that has only the NVIDIA driver (no LLVM, no toolkit).
//
// A bundle is a folder with `manifest.json` and one cubin per case:
//   {"format": 1, "arch": "sm_90", "cases": [CASE, ...]}
//   CASE = {"name", "workload", "schedule" (what the schedule does, in words), "cubin",
//           "flops" (0: not a compute-bound case), "time" (bool: time it once verified),
//           "expect": "pass" | "mismatch" (a planted wrong reference the check must catch),
//           "rtol", "atol",
//           "buffers": [{"name", "dtype": "float32", "elements", "kind": "input" | "output" |
//                        "intermediate", "seed" and "low" (inputs: values in [low, low + 2))}],
//           "kernels": [{"name", "grid": [x, y, z], "block": [x, y, z], "args": [buffer index]}],
//           "check": {OUTPUT: {"indices": [...], "values": [...]}}  (the interpreter's numbers),
//           "same_as": NAME (optional: every output element compared with that earlier case's)}
// Inputs are not stored: both sides fill them with FillSeeded, so a bundle for 4096³ GEMM stays a
// few hundred kilobytes.
#pragma once

#include <cmath>
#include <cstdint>

namespace tirtune::gpu_bundle {

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

}  // namespace tirtune::gpu_bundle
