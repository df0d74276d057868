// A sample of the CUDA design space of a GEMM with the tiling decided by the test: for tests that
// need a known GPU schedule (its lowering, its features).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/codegen/target.h"
#include "tirtune/search/space.h"

namespace tirtune::testing {

/// `f`'s first CUDA design space (sm_90) replayed with the SamplePerfectTile decisions `tiles`
/// in order and every SampleCategorical at its first candidate (scalar fetches, no unrolling),
/// postprocessed; nullopt with the reason in `why` when rejected.
inline std::optional<Schedule> GpuSampleWithTiles(const PrimFunc& f,
                                                  const std::vector<nlohmann::json>& tiles,
                                                  std::string* why) {
  SpaceGenerator gen = SpaceGenerator::For(Target::Parse("cuda -arch=sm_90"));
  Trace trace = WithoutDecisions(gen.GenerateDesignSpaces(f, 1)[0].trace());
  size_t next = 0;
  for (size_t i = 0; i < trace.insts().size(); ++i) {
    const std::string& kind = trace.insts()[i].kind->name;
    if (kind == "SamplePerfectTile") trace = trace.WithDecision(i, tiles.at(next++));
    if (kind == "SampleCategorical") trace = trace.WithDecision(i, 0);
  }
  std::optional<Schedule> sch = gen.ReplayAndPostprocess(f, trace, 1);
  if (!sch) *why = gen.WhyRejected(f, trace, 1);
  return sch;
}

}  // namespace tirtune::testing
