// The oneDNN baseline for GEMM: times dnnl_sgemm (row-major C[M,N] = A[M,K] * B[K,N]) in its own
// process and prints one JSON line. Threads come from OMP_NUM_THREADS (oneDNN uses OpenMP), set
// by the calling script so that baseline and candidate run with the same count.
#include <dnnl.h>
#include <fmt/core.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tirtune/measure/timer.h"
#include "tirtune/support/ndarray.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    fmt::print(stderr, "usage: {} M N K [min_repeat_ms]\n", argv[0]);
    return 2;
  }
  int64_t m = std::atoll(argv[1]), n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  tirtune::TimerConfig config;
  config.repeat = 7;
  if (argc > 4) config.min_repeat_ms = std::atof(argv[4]);
  using tirtune::DataType;
  using tirtune::NDArray;
  NDArray a = NDArray::Empty({m, k}, DataType::Float(32));
  NDArray b = NDArray::Empty({k, n}, DataType::Float(32));
  NDArray c = NDArray::Empty({m, n}, DataType::Float(32));
  a.FillRandom(1);
  b.FillRandom(2);
  auto run = [&] {
    dnnl_status_t s = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data<float>(), k, b.data<float>(), n,
                                 0.0f, c.data<float>(), n);
    if (s != dnnl_success) {
      fmt::print(stderr, "dnnl_sgemm failed with status {}\n", static_cast<int>(s));
      std::exit(1);
    }
  };
  tirtune::TimingResult t = tirtune::TimeFunction(run, config);
  double flops = 2.0 * m * n * k;
  const char* threads = std::getenv("OMP_NUM_THREADS");
  fmt::print("{}\n", nlohmann::json{{"impl", "onednn_sgemm"},
                                    {"m", m},
                                    {"n", n},
                                    {"k", k},
                                    {"threads", threads ? threads : "default"},
                                    {"median_seconds", t.median},
                                    {"cv", t.cv},
                                    {"gflops", flops / t.median / 1e9}}
                         .dump());
  return 0;
}
