// The machine's measured float32 peak: every thread runs independent fused multiply-add chains
// (more vector accumulators than the FMA latency times the issue width needs, few enough to stay in
// registers: 24 of AVX-512's 32, 12 of AVX2's 16 — 24 there spill to the stack and halve the
// figure) on the widest vectors the CPU has, and the sum over the threads is reported, so that a
// kernel's GFLOP/s can be said as a fraction of what the cores do (../shared/BENCHMARKS.md asks for
// it). Pin it as the kernels are pinned (taskset), one thread per CPU.
//
//   bench_peak_fma [--threads N] [--seconds S]   prints one JSON line
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kChains512 = 24;
constexpr int kChains256 = 12;
constexpr long kStepsPerCheck = 1 << 20;

// kChains vectors of FMAs, `steps` times. Inlined into a function compiled for the vectors'
// instructions (below), where a * b + c contracts to an FMA (-ffp-contract=fast, CMakeLists.txt).
// The result depends on every accumulator so that nothing is optimized away; x -> 0.5 x + 0.5
// stays finite.
template <typename Vec, int kLanes, int kChains>
__attribute__((always_inline)) inline float Chains(long steps) {
  Vec acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = Vec{} + static_cast<float>(i);
  const Vec half = Vec{} + 0.5f;
  for (long s = 0; s < steps; ++s) {
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * half + half;
  }
  float out = 0;
  for (int i = 0; i < kChains; ++i) {
    for (int l = 0; l < kLanes; ++l) out += acc[i][l];
  }
  return out;
}

using Vec16 = float __attribute__((vector_size(64)));
using Vec8 = float __attribute__((vector_size(32)));

__attribute__((target("avx512f"))) float Chains512(long steps) {
  return Chains<Vec16, 16, kChains512>(steps);
}
__attribute__((target("avx2,fma"))) float Chains256(long steps) {
  return Chains<Vec8, 8, kChains256>(steps);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  double seconds = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0)
      threads = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--seconds") == 0)
      seconds = std::atof(argv[i + 1]);
  }
  if (argc % 2 == 0 || threads < 1 || !(seconds > 0)) {
    fmt::print(stderr, "usage: bench_peak_fma [--threads N >= 1] [--seconds S > 0]\n");
    return 2;
  }
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    fmt::print(stderr, "bench_peak_fma: this CPU has neither AVX-512F nor AVX2 with FMA\n");
    return 1;
  }
  int lanes = avx512 ? 16 : 8;
  auto run = [&](long steps) { return avx512 ? Chains512(steps) : Chains256(steps); };
  run(kStepsPerCheck);  // warm-up: clocks and the vector unit's power state

  std::vector<double> gflops(threads);
  std::atomic<float> sink{0};  // the chains' results, so that they cannot be optimized away
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto start = std::chrono::steady_clock::now();
      long steps = 0;
      double elapsed = 0;
      float keep = 0;
      while (elapsed < seconds) {
        keep += run(kStepsPerCheck);
        steps += kStepsPerCheck;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      sink.store(keep);
      gflops[t] = 2.0 * (avx512 ? kChains512 : kChains256) * lanes * steps / elapsed / 1e9;
    });
  }
  for (std::thread& t : pool) t.join();
  double total = 0;
  for (double g : gflops) total += g;
  fmt::print(
      "{{\"peak_gflops\": {:.1f}, \"threads\": {}, \"per_thread_gflops\": [{:.1f}], "
      "\"vector_bits\": {}}}\n",
      total, threads, fmt::join(gflops, ", "), lanes * 32);
  return 0;
}
