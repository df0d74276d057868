// Candidate keys and the default feature function of the strategies.
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <thread>

#include "tirtune/ir/structural_equal.h"
#include "tirtune/search/space.h"
#include "tirtune/search/strategy.h"

namespace tirtune {

std::string CandidateKey(const Schedule& sch) { return StructuralHashHex(sch.func()); }

FeatureFn LoweredFeatures(int num_threads) {
  int threads = num_threads > 0
                    ? num_threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return [threads](const std::vector<Schedule>& candidates) {
    std::vector<FeatureMatrix> features(candidates.size());
    tbb::task_arena arena(threads);
    arena.execute([&] {
      tbb::parallel_for(size_t{0}, candidates.size(), [&](size_t i) {
        try {
          features[i] = ExtractFeatures(LowerForFeatures(candidates[i].func()));
        } catch (const std::exception&) {
          features[i] = FeatureMatrix{};  // does not lower: no rows, the lowest score
        }
      });
    });
    return features;
  };
}

}  // namespace tirtune
