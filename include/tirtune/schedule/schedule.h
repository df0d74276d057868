// Schedule: the user-facing object for transforming a PrimFunc. Every primitive checks its
// preconditions (throwing a ScheduleError that leaves the schedule unchanged), transforms the
// function, and records one instruction in the trace. Blocks, loops and sampled integers are
// handled through random variables (BlockRV, LoopRV, ExprRV). CanApply asks whether a primitive
// would succeed without transforming anything.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/schedule/error.h"
#include "tirtune/schedule/instruction.h"
#include "tirtune/schedule/random.h"
#include "tirtune/schedule/state.h"
#include "tirtune/schedule/trace.h"

namespace tirtune {

/// A split factor: a constant, a sampled ExprRV, or nothing (inferred from the others; at most
/// one per split).
using SplitFactor = std::variant<std::monostate, int64_t, ExprRV>;

/// The id of the random variables that transforming primitives return in check-only mode (see
/// Schedule::CanApply). They stand for nothing: resolving one is an internal error.
inline constexpr int64_t kPlaceholderRVId = -3;

class Schedule {
 public:
  explicit Schedule(PrimFunc func, uint64_t seed = 1);

  const PrimFunc& func() const { return state_.func(); }
  const ScheduleState& state() const { return state_; }
  ScheduleState& mutable_state() { return state_; }
  const Trace& trace() const { return trace_; }
  RandomEngine& rng() { return rng_; }
  /// An independent copy (the IR is shared, being immutable).
  Schedule Copy() const { return *this; }

  // ---- Legality without transformation.
  /// Whether `step` succeeds, decided without building any new IR: `step` runs in check-only
  /// mode, in which every transforming primitive runs its precondition checks (the same code as a
  /// real call) and returns right before it would construct the new function. Returns false when
  /// `step` throws a ScheduleError; other exceptions (InternalError, UserError) propagate.
  /// Whatever happens, the function, the trace, the random engine and the random variables are
  /// left as they were.
  ///
  /// Inside `step`, lookups and sampling work as usual but record nothing, and transforming
  /// primitives return placeholder random variables (id kPlaceholderRVId) that must not be used.
  /// A step is therefore lookups and sampling followed by one transforming primitive, e.g.
  ///   sch.CanApply([&](Schedule& s) { s.Parallel(s.GetLoops(s.GetBlock("C"))[0]); })
  /// A second transforming primitive would be checked against the untransformed function.
  bool CanApply(const std::function<void(Schedule&)>& step);
  /// True while a CanApply step runs.
  bool check_only() const { return check_only_; }

  // ---- Resolving random variables (ScheduleError when the block or loop no longer exists).
  const BlockRealizeNode* Get(BlockRV block) const;
  const ForNode* Get(LoopRV loop) const;
  int64_t Get(ExprRV expr) const;
  const std::string& BlockName(BlockRV block) const;

  // ---- Lookup (pure).
  BlockRV GetBlock(const std::string& name);
  /// Loops above the block up to its scope block, outermost first.
  std::vector<LoopRV> GetLoops(BlockRV block);
  std::vector<BlockRV> GetChildBlocks(BlockRV block);
  std::vector<BlockRV> GetChildBlocks(LoopRV loop);

  // ---- Sampling (pure). A given decision is reused; otherwise one is sampled and recorded.
  std::vector<ExprRV> SamplePerfectTile(LoopRV loop, int n, int max_innermost_factor,
                                        std::optional<std::vector<int64_t>> decision = {});
  /// n factors tiling the extent rounded up (see sample_perfect_tile.cc): the outermost is
  /// ceil(extent / the others), so a Split by them guards one partial tile.
  std::vector<ExprRV> SampleGuardedTile(LoopRV loop, int n, int max_innermost_factor,
                                        std::optional<std::vector<int64_t>> decision = {});
  ExprRV SampleCategorical(std::vector<int64_t> candidates, std::vector<double> probs,
                           std::optional<int64_t> decision = {});

  // ---- Loop transformations.
  std::vector<LoopRV> Split(LoopRV loop, const std::vector<SplitFactor>& factors);
  LoopRV Fuse(const std::vector<LoopRV>& loops);
  void Reorder(const std::vector<LoopRV>& order);
  void Parallel(LoopRV loop);
  void Vectorize(LoopRV loop);
  void Unroll(LoopRV loop);
  void Bind(LoopRV loop, const std::string& thread_axis);

  // ---- Producer/consumer relations within a scope (pure).
  std::vector<BlockRV> GetProducers(BlockRV block);
  std::vector<BlockRV> GetConsumers(BlockRV block);

  // ---- Compute location.
  /// `index` is the position among the loop body's statements; -1 picks it automatically.
  void ComputeAt(BlockRV block, LoopRV loop, bool preserve_unit_loops = false, int index = -1);
  void ReverseComputeAt(BlockRV block, LoopRV loop, bool preserve_unit_loops = false,
                        int index = -1);
  void ComputeInline(BlockRV block);
  void ReverseComputeInline(BlockRV block);
  /// Samples where `block` could be computed: a loop of its consumers' nest, LoopRV::Root() or
  /// LoopRV::Inline(). The decision is the loop's index among the candidates, -1 for root, -2 for
  /// inline.
  LoopRV SampleComputeLocation(BlockRV block, std::optional<int64_t> decision = {});

  // ---- Caching and storage.
  /// A block that copies the `read_index`-th read buffer of `block` into a new buffer of `scope`,
  /// which `block` then reads instead. Returns the copy block.
  BlockRV CacheRead(BlockRV block, int read_index, StorageScope scope);
  /// Pads an einsum-like block's iteration space to multiples of `padding` (one factor per
  /// iterator): zero-padded input copies `<name>_pad` before it, its output computed into a
  /// padded buffer copied back after it (pad_einsum.cc).
  void PadEinsum(BlockRV block, const std::vector<int64_t>& padding);
  /// A block that writes `block`'s `write_index`-th write buffer from a new buffer of `scope`,
  /// which `block` then writes instead. Returns the copy block.
  BlockRV CacheWrite(BlockRV block, int write_index, StorageScope scope);
  void SetScope(BlockRV block, int write_index, StorageScope scope);
  void StorageAlign(BlockRV block, int write_index, int axis, int factor, int offset);
  /// Stores the read-only parameter `param_index` packed (ir/packed_layout.h): its buffer takes
  /// the packed shape, every access reads the packed element, and the function attribute
  /// kPackedParamsAttr tells callers to pass PackedLayout::Pack of the tensor
  /// (transform_layout.cc).
  void TransformLayout(int param_index, const PackedLayout& layout);

  // ---- Reductions.
  /// Factors the reduction over `loop` into a new block computing partial results indexed by
  /// `loop` (at dimension `factor_axis` of the new buffer); returns that block.
  BlockRV RFactor(LoopRV loop, int factor_axis);
  /// Moves `block`'s init into its own block placed just above `loop`; returns the init block.
  BlockRV DecomposeReduction(BlockRV block, LoopRV loop);
  /// Folds an exact epilogue (bias-add) into the reduction's init and update; see
  /// src/schedule/primitive/fuse_reduction_epilogue.cc for what is accepted.
  void FuseReductionEpilogue(BlockRV reduction, BlockRV epilogue);

  // ---- Unit loops.
  /// A loop of extent 1 directly above the block (or loop); returns it.
  LoopRV AddUnitLoop(BlockRV block);
  LoopRV AddUnitLoop(LoopRV loop);

  // ---- Annotations. Values are integers, floats or strings.
  void Annotate(LoopRV loop, const std::string& key, const nlohmann::json& value);
  void Annotate(BlockRV block, const std::string& key, const nlohmann::json& value);
  /// The value is a sampled integer; the trace records `value` as an input, so a replay with
  /// another decision for it annotates the new value.
  void Annotate(LoopRV loop, const std::string& key, ExprRV value);
  void Annotate(BlockRV block, const std::string& key, ExprRV value);
  void Unannotate(LoopRV loop, const std::string& key);
  void Unannotate(BlockRV block, const std::string& key);

  // ---- Library offload.
  /// Hands the whole function to a library: sets the function attribute kOffloadAttr to
  /// `composite` (a FusionPattern's name, "dnnl.conv2d"), which the builder and the compiler
  /// read to run the library's kernel instead of compiling the loops. The loops are left as
  /// they are (the reference). A record whose trace offloads is a library record. A non-empty
  /// `algorithm` (one of the backend's LibraryBackend::Algorithms) sets kOffloadAlgorithmAttr
  /// too: the library runs the composite that way.
  void Offload(const std::string& composite, const std::string& algorithm = "");

  /// Marks the end of the schedule proper; what follows are postprocessing steps.
  void EnterPostproc();

  // ---- Random variables, for the trace machinery.
  BlockRV NewBlockRV(const std::string& name);
  LoopRV NewLoopRV(const VarNode* loop_var);
  ExprRV NewExprRV(int64_t value);
  /// A loop random variable standing for the root (-1) or inlining (-2) location.
  LoopRV NewLocationRV(int64_t location);
  /// -1 when `loop` stands for the root location, -2 for inlining, 0 for a real loop.
  int64_t LocationOf(LoopRV loop) const;
  /// Records an instruction (called by every primitive after it succeeds); does nothing in
  /// check-only mode.
  void Record(const char* kind, std::vector<InstInput> inputs, nlohmann::json attrs,
              std::vector<RVRef> outputs, nlohmann::json decision = nullptr);

 private:
  ScheduleState state_;
  Trace trace_;
  RandomEngine rng_;
  /// Set by CanApply: primitives return after their checks (see CanApply).
  bool check_only_ = false;
  int64_t next_rv_id_ = 0;
  std::unordered_map<int64_t, std::string> block_rvs_;
  std::unordered_map<int64_t, Var> loop_rvs_;
  std::unordered_map<int64_t, int64_t> expr_rvs_;
  std::unordered_map<int64_t, int64_t> location_rvs_;
};

/// Whether a guarded tiling may round `extent` up to `padded`: by at most 15% of it (7 -> 8,
/// 197 -> 224; not 3 -> 4 or 77 -> 96). Every masked iteration still runs its loops and tests
/// its guard, so SampleGuardedTile and the search's pinned register tiles stay within this.
bool GuardedRoundingIsSmall(int64_t extent, int64_t padded);

}  // namespace tirtune
