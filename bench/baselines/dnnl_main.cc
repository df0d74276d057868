// bench_dnnl: the oneDNN baseline of a tirtune workload, timed in its own process. Threads come
// from OMP_NUM_THREADS (oneDNN uses OpenMP), set by the caller to tirtune's thread count.
#include <dnnl.h>
#include <fmt/core.h>

#include "baselines/baseline_harness.h"
#include "baselines/dnnl_operators.h"

int main(int argc, char** argv) {
  using namespace tirtune::bench;
  std::vector<BaselineOperator> operators = MatmulBaselines();
  for (auto family : {ConvBaselines, ReductionBaselines}) {
    for (BaselineOperator& op : family()) operators.push_back(std::move(op));
  }
  const dnnl_version_t* v = dnnl_version();
  BaselineLibrary onednn{"onednn", fmt::format("{}.{}.{}", v->major, v->minor, v->patch)};
  return BaselineMain(argc, argv, onednn, operators);
}
