// Design spaces: the schedule rules that turn a function into one or more partially-decided
// schedules (sampling instructions record the open choices), the postprocessors that complete or
// reject a sampled schedule, the mutators that change one decision of a trace, and PostOrderApply,
// which applies the rules to every block, consumers first. Defaults follow the CPU and CUDA
// recipes of MetaSchedule (../shared/reference/metaschedule-notes.md).
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
  /// MultiLevelTiling samples guarded tiles (SampleGuardedTile: the extent rounded up to a
  /// multiple of 4..64 is tiled, the partial tile guarded) instead of only exact divisors.
  /// Default true.
  bool guarded_tiles = true;

  /// num_cores from the target, vector_bytes from its CPU features.
  static CpuSpaceConfig For(const Target& target);
};

/// The knobs of the CUDA design space (MetaSchedule's CUDA rules, metaschedule-notes.md).
struct GpuSpaceConfig {
  /// The device's limits (threads per block, vthreads, shared memory, vector bytes).
  GpuLimits limits;
  /// Largest innermost tile factor MultiLevelTiling samples. Default 64.
  int max_innermost_factor = 64;
  /// Threads per block AutoBind samples for a block left unbound.
  std::vector<int64_t> thread_extents = {32, 64, 128, 256, 512, 1024};
  /// Threads CrossThreadReduction samples for one reduction.
  std::vector<int64_t> reduction_threads = {4, 8, 16, 32, 64, 128, 256, 512};
  /// Elements one thread moves per access in a cooperative fetch (1: scalar).
  std::vector<int64_t> fetch_vector_lanes = {1, 2, 4};
  /// The auto-unroll steps sampled. Default {0, 16, 64, 512}: MetaSchedule's 1024 is left out,
  /// fully unrolled GEMM tiles of that size take NVRTC seconds per candidate.
  std::vector<int64_t> unroll_max_steps = {0, 16, 64, 512};
  /// Threads per block RewriteUnboundBlock gives a block no rule bound. Default 256.
  int64_t default_threads = 256;

  static GpuSpaceConfig For(const Target& target);
};

/// Annotation keys the rules write and the postprocessors rewrite into loops.
inline constexpr const char* kAnnParallel = "meta_schedule.parallel";
inline constexpr const char* kAnnVectorize = "meta_schedule.vectorize";
inline constexpr const char* kAnnUnrollExplicit = "meta_schedule.unroll_explicit";
inline constexpr const char* kAnnTilingStructure = "meta_schedule.tiling_structure";
/// Set by AddRFactor on a reduction whose rfactor block RandomComputeLocation should also place.
inline constexpr const char* kAnnRandomComputeProducer = "meta_schedule.random_compute_producer";
/// Set by the CUDA MultiLevelTiling on a shared read cache, valued the sampled vector lanes:
/// RewriteCooperativeFetch spreads its copy loops over the threads of the block.
inline constexpr const char* kAnnCooperativeFetch = "meta_schedule.cooperative_fetch";

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
/// Packs the layout-free parameters (kLayoutFreeAttr) in the order their reader walks them
/// (search/postproc/rewrite_layout.cc).
std::shared_ptr<Postproc> MakeRewriteLayout();
/// Rejects a schedule that does not lower (Lower throws) or does not verify as well formed.
std::shared_ptr<Postproc> MakeVerifyLowers();

/// Lower(func) without expanding unrolled loops (max_explicit_unroll = 0, expand_auto_unroll =
/// false): the lowered form features are extracted from, where an unrolled loop stays one loop
/// (annotated "pragma_unroll" or "pragma_auto_unroll_max_step") instead of copies of its body.
/// A GPU schedule (thread-bound loops) goes through LowerGpuToLoops instead, its thread loops
/// kept for the GPU feature columns. Remembered for the most recently lowered functions (by
/// identity: a Schedule and its copies share one function), so that a candidate scored by the
/// search is not lowered again when the cost model learns from its measurement. Thread-safe; errors
/// propagate as from Lower and are not remembered.
PrimFunc LowerForFeatures(const PrimFunc& func);
std::vector<std::shared_ptr<Postproc>> DefaultCpuPostprocs();

// ---- The CPU mutators with their probabilities (0.90, 0.05, 0.03, 0.02).
std::shared_ptr<Mutator> MakeMutateTileSize();
std::shared_ptr<Mutator> MakeMutateComputeLocation();
std::shared_ptr<Mutator> MakeMutateUnroll();
std::shared_ptr<Mutator> MakeMutateParallel(const CpuSpaceConfig& config);
std::vector<MutatorWithProb> DefaultCpuMutators(const CpuSpaceConfig& config);

// ---- The CUDA rules, in the order DefaultCudaRules applies them.
/// AutoInline as on CPU, but `exp` and `select` producers inline too (a GPU recomputes them
/// rather than writing a tensor to global memory and reading it back).
std::shared_ptr<ScheduleRule> MakeAutoInlineGpu();
/// Multi-level tiling bound to the thread hierarchy, with shared read caches and a local write
/// cache (multi_level_tiling_gpu.cc).
std::shared_ptr<ScheduleRule> MakeMultiLevelTilingGpu(const GpuSpaceConfig& config);
std::shared_ptr<ScheduleRule> MakeCrossThreadReduction(const GpuSpaceConfig& config);
/// The auto-unroll annotation of ParallelizeVectorizeUnroll (no parallel, no vectorize).
std::shared_ptr<ScheduleRule> MakeUnrollGpu(const GpuSpaceConfig& config);
std::shared_ptr<ScheduleRule> MakeAutoBind(const GpuSpaceConfig& config);
std::vector<std::shared_ptr<ScheduleRule>> DefaultCudaRules(const GpuSpaceConfig& config);

// ---- The CUDA postprocessors, in order.
std::shared_ptr<Postproc> MakeRewriteCooperativeFetch(const GpuSpaceConfig& config);
std::shared_ptr<Postproc> MakeRewriteUnboundBlock(const GpuSpaceConfig& config);
/// RewriteReductionBlock, leaving alone reductions whose loops are bound to threads (the
/// cross-thread lowering wants their init inside).
std::shared_ptr<Postproc> MakeRewriteReductionBlockGpu();
/// Rejects a schedule that LowerGpu refuses for the limits (threads, vthreads, shared memory,
/// unbound statements, races it can see).
std::shared_ptr<Postproc> MakeVerifyGpuCode(const GpuSpaceConfig& config);
std::vector<std::shared_ptr<Postproc>> DefaultCudaPostprocs(const GpuSpaceConfig& config);

// ---- The CUDA mutators (tile size 0.90, unroll 0.08, thread binding 0.02).
/// Resamples a SampleCategorical whose value a Split takes as a factor (a thread count).
std::shared_ptr<Mutator> MakeMutateThreadBinding();
std::vector<MutatorWithProb> DefaultCudaMutators();

/// PostOrderApply: every rule, in order, on every block (consumers before producers); the
/// result is the design spaces, each a schedule whose trace holds sampling instructions.
class SpaceGenerator {
 public:
  SpaceGenerator(std::vector<std::shared_ptr<ScheduleRule>> rules,
                 std::vector<std::shared_ptr<Postproc>> postprocs,
                 std::vector<MutatorWithProb> mutators);
  /// The defaults for a CPU target.
  static SpaceGenerator DefaultCpu(const CpuSpaceConfig& config);
  /// The defaults for a cuda target.
  static SpaceGenerator DefaultCuda(const GpuSpaceConfig& config);
  /// DefaultCpu or DefaultCuda, by the target's kind.
  static SpaceGenerator For(const Target& target);

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
  /// Why none of `spaces` (func's design spaces) yields a valid sample: the first rejection among
  /// a few samples of each (a strategy only sees that nothing came back); empty when one of them
  /// is valid, i.e. the space is merely used up.
  std::string WhyNoSample(const PrimFunc& func, const std::vector<Trace>& spaces,
                          uint64_t seed) const;

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
