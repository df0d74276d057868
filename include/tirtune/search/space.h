// Design spaces: the schedule rules that turn a function into one or more partially-decided
// schedules (sampling instructions record the open choices), the postprocessors that complete or
// reject a sampled schedule, the mutators that change one decision of a trace, and PostOrderApply,
// which applies the rules to every block, consumers first. Defaults follow the CPU recipe of
// ../shared/reference/metaschedule-notes.md §1.3–1.5.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/codegen/target.h"
#include "tirtune/ir/function.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {

/// The knobs of the CPU design space. Defaults as MetaSchedule's LLVM rules.
struct CpuSpaceConfig {
  /// Threads of the target: the parallel extent aims at num_cores * max_jobs_per_core.
  int num_cores = 1;
  /// Default 16.
  int max_jobs_per_core = 16;
  /// Bytes of one vector register (64 with AVX-512, 32 with AVX2). Default 64.
  int vector_bytes = 64;
  /// Largest innermost tile factor MultiLevelTiling samples. Default 64.
  int max_innermost_factor = 64;
  /// Largest fused extent vectorized by ParallelizeVectorizeUnroll. Default 64.
  int max_vectorize_extent = 64;
  /// The unroll steps sampled for the auto-unroll annotation. Default {0, 16, 64, 512}.
  std::vector<int64_t> unroll_max_steps = {0, 16, 64, 512};
  /// MultiLevelTiling's structure. Default "SSRSRS".
  std::string tiling_structure = "SSRSRS";

  /// num_cores from the target, vector_bytes from its CPU features.
  static CpuSpaceConfig For(const Target& target);
};

/// Annotation keys the rules write and the postprocessors rewrite into loops.
inline constexpr const char* kAnnParallel = "meta_schedule.parallel";
inline constexpr const char* kAnnVectorize = "meta_schedule.vectorize";
inline constexpr const char* kAnnUnrollExplicit = "meta_schedule.unroll_explicit";
inline constexpr const char* kAnnTilingStructure = "meta_schedule.tiling_structure";
/// Set by AddRFactor on a reduction whose rfactor block RandomComputeLocation should also place.
inline constexpr const char* kAnnRandomComputeProducer = "meta_schedule.random_compute_producer";

/// A schedule rule: applied to one block of a schedule, it returns the schedules that continue
/// from it (one for a deterministic rule, several when it forks the space, the input unchanged when
/// it does not apply). It never throws ScheduleError: a variant that fails is dropped.
class ScheduleRule {
 public:
  virtual ~ScheduleRule() = default;
  virtual std::string name() const = 0;
  virtual std::vector<Schedule> Apply(const Schedule& sch, BlockRV block) = 0;
};

/// A postprocessor: completes a sampled schedule (e.g. turns annotations into loops) or rejects
/// it (returns false). Runs after Schedule::EnterPostproc.
class Postproc {
 public:
  virtual ~Postproc() = default;
  virtual std::string name() const = 0;
  virtual bool Apply(Schedule& sch) = 0;
};

/// A mutator: a new trace differing from `trace` in one sampling decision (or, for
/// MutateParallel, one annotation), or nullopt when it finds nothing to change. The trace has no
/// postprocessing steps; the caller replays it and runs the postprocessors again. Apply may be
/// called from several threads at once.
class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual std::string name() const = 0;
  virtual std::optional<Trace> Apply(const PrimFunc& func, const Trace& trace,
                                     RandomEngine& rng) = 0;
};

struct MutatorWithProb {
  std::shared_ptr<Mutator> mutator;
  double prob = 0;
};

// ---- The CPU rules, in the order DefaultCpuRules applies them.
std::shared_ptr<ScheduleRule> MakeAutoInline();
std::shared_ptr<ScheduleRule> MakeAddRFactor(const CpuSpaceConfig& config);
std::shared_ptr<ScheduleRule> MakeMultiLevelTiling(const CpuSpaceConfig& config);
std::shared_ptr<ScheduleRule> MakeParallelizeVectorizeUnroll(const CpuSpaceConfig& config);
std::shared_ptr<ScheduleRule> MakeRandomComputeLocation();
std::vector<std::shared_ptr<ScheduleRule>> DefaultCpuRules(const CpuSpaceConfig& config);

// ---- The CPU postprocessors, in order.
std::shared_ptr<Postproc> MakeDisallowDynamicLoop();
std::shared_ptr<Postproc> MakeRewriteParallelVectorizeUnroll();
std::shared_ptr<Postproc> MakeRewriteReductionBlock();
/// Rejects a schedule that does not lower (Lower throws) or does not verify as well formed.
std::shared_ptr<Postproc> MakeVerifyLowers();

/// Lower(func) without expanding unrolled loops (max_explicit_unroll = 0, expand_auto_unroll =
/// false): the lowered form features are extracted from, where an unrolled loop stays one loop
/// (annotated "pragma_unroll" or "pragma_auto_unroll_max_step") instead of copies of its body.
/// Remembered for the most recently lowered functions (by identity: a Schedule and its copies
/// share one function), so that a candidate scored by the search is not lowered again when the
/// cost model learns from its measurement. Thread-safe; errors propagate as from Lower and are
/// not remembered.
PrimFunc LowerForFeatures(const PrimFunc& func);
std::vector<std::shared_ptr<Postproc>> DefaultCpuPostprocs();

// ---- The CPU mutators with their probabilities (0.90, 0.05, 0.03, 0.02).
std::shared_ptr<Mutator> MakeMutateTileSize();
std::shared_ptr<Mutator> MakeMutateComputeLocation();
std::shared_ptr<Mutator> MakeMutateUnroll();
std::shared_ptr<Mutator> MakeMutateParallel(const CpuSpaceConfig& config);
std::vector<MutatorWithProb> DefaultCpuMutators(const CpuSpaceConfig& config);

/// PostOrderApply: every rule, in order, on every block (consumers before producers); the
/// result is the design spaces, each a schedule whose trace holds sampling instructions.
class SpaceGenerator {
 public:
  SpaceGenerator(std::vector<std::shared_ptr<ScheduleRule>> rules,
                 std::vector<std::shared_ptr<Postproc>> postprocs,
                 std::vector<MutatorWithProb> mutators);
  /// The defaults for a CPU target.
  static SpaceGenerator DefaultCpu(const CpuSpaceConfig& config);

  std::vector<Schedule> GenerateDesignSpaces(const PrimFunc& func, uint64_t seed) const;

  /// Replays `trace` (without its postprocessing) on a fresh schedule of `func`, re-sampling the
  /// decisions it lacks with `seed`, then runs the postprocessors. nullopt when replay throws a
  /// ScheduleError or a postprocessor rejects the result.
  std::optional<Schedule> ReplayAndPostprocess(const PrimFunc& func, const Trace& trace,
                                               uint64_t seed) const;
  /// Why ReplayAndPostprocess(func, trace, seed) gives nullopt: the replay's schedule error, or
  /// the postprocessor that rejected the sample; empty when it gives a schedule. For messages
  /// when a task's space yields nothing valid.
  std::string WhyRejected(const PrimFunc& func, const Trace& trace, uint64_t seed) const;

  const std::vector<std::shared_ptr<ScheduleRule>>& rules() const { return rules_; }
  const std::vector<std::shared_ptr<Postproc>>& postprocs() const { return postprocs_; }
  const std::vector<MutatorWithProb>& mutators() const { return mutators_; }

 private:
  std::optional<Schedule> Replay(const PrimFunc& func, const Trace& trace, uint64_t seed,
                                 std::string* why) const;

  std::vector<std::shared_ptr<ScheduleRule>> rules_;
  std::vector<std::shared_ptr<Postproc>> postprocs_;
  std::vector<MutatorWithProb> mutators_;
};

/// `trace` with every sampling decision removed (so replay samples afresh).
Trace WithoutDecisions(const Trace& trace);

}  // namespace tirtune
