// The lowering passes, one function per pass and one file per function in src/lower/ (each file
// shows the IR before and after). src/lower/pipeline.cc chains them into the recipe of Lower();
// they are public so that tests and `tirtune lower --steps` can run them one at a time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/lower/lower.h"

namespace tirtune {

/// One storage_align request: the stride of `axis` must leave remainder `offset` modulo `factor`.
struct StorageAlignRequest {
  int axis = 0;
  int64_t factor = 1;
  int64_t offset = 0;
};
/// Requests per buffer, by identity (the buffers of the block form, which ConvertBlocksToLoops
/// keeps).
using StorageAlignRequests = std::map<const BufferNode*, std::vector<StorageAlignRequest>>;

/// Block form: the requests of every block's "buffer_dim_align" annotation, for the buffers that
/// blocks allocate (storage_align.cc). CompactBufferAllocations applies them.
StorageAlignRequests CollectStorageAlign(const PrimFunc& func);

/// Block form: a block's reduction init becomes a guarded statement at the front of its body
/// (lower_init_blocks.cc).
PrimFunc LowerInitBlocks(const PrimFunc& func);

/// Block form to loop form: blocks are replaced by their bodies with the iterators substituted,
/// predicates become `if`s and allocated buffers become Allocate nodes
/// (convert_blocks_to_loops.cc).
PrimFunc ConvertBlocksToLoops(const PrimFunc& func);

/// Where CompactBufferAllocations may place allocations relative to thread-bound loops.
enum class AllocationPlacement : uint8_t {
  /// Above every thread-bound loop (the CPU runs them as serial loops).
  kCpu,
  /// Shared and local buffers into blockIdx loops, local buffers into threadIdx/vthread loops.
  kGpu,
};

/// Loop form: moves each Allocate down to the lowest common ancestor of its uses and shrinks the
/// buffer to the region accessed there, with strides padded as `align` asks
/// (compact_buffer_allocations.cc).
PrimFunc CompactBufferAllocations(const PrimFunc& func, const StorageAlignRequests& align = {},
                                  AllocationPlacement placement = AllocationPlacement::kCpu);

/// Loop form: every buffer, parameters included, becomes one-dimensional
/// (flatten_buffers.cc).
PrimFunc FlattenBuffers(const PrimFunc& func);

/// Loop form: `local` allocations stay `local` only when they fit options.max_stack_bytes; every
/// other allocation becomes `global` (plan_storage_scopes.cc).
PrimFunc PlanStorageScopes(const PrimFunc& func, const LowerOptions& options = {});

/// Simplifies every expression under the ranges of the enclosing loops and removes the
/// statements that do nothing: decided `if`s, unit loops, no-ops (simplify_statements.cc).
PrimFunc SimplifyStatements(const PrimFunc& func);

/// A buffer that one block writes as `buf[i0, i1, ...] = select(inside, x, 0)` at its own
/// iterators: every element is zero where `inside`, a function of the indices, is false.
struct ZeroPadding {
  Buffer buffer;
  std::vector<Var> indices;
  Expr inside;
};
using ZeroPaddedBuffers = std::vector<ZeroPadding>;

/// Block form: the intermediates that hold a materialized zero pad (skip_padding_taps.cc).
ZeroPaddedBuffers CollectZeroPadding(const PrimFunc& func);

/// Loop form: a reduction update that adds `select(inside, x, 0) * w` (an inlined zero pad), or
/// `x * w` where x is read from a buffer of `padded` (a materialized one), gets the conjuncts of
/// `inside` that only outer loops decide as an `if` around the loop body they are decided in, so
/// the taps on the padding are skipped (skip_padding_taps.cc).
PrimFunc SkipPaddingTaps(const PrimFunc& func, const ZeroPaddedBuffers& padded = {});

/// Loop form: where every value of the loops inside a body keeps a guard conjunct of a
/// non-dividing split true once a test of the outer loops passes, the body is unswitched on that
/// test, so full tiles run without the guard (unswitch_tile_guards.cc).
PrimFunc UnswitchTileGuards(const PrimFunc& func);

/// Expands unrolled loops, and serial loops under "pragma_auto_unroll_max_step", into copies of
/// their bodies (unroll_loops.cc).
PrimFunc UnrollLoops(const PrimFunc& func, const LowerOptions& options = {});

/// Rewrites vectorized loops into vector statements, or into annotated serial loops where that
/// is not possible (vectorize_loops.cc).
PrimFunc VectorizeLoops(const PrimFunc& func);

/// Parallel loops inside parallel loops become serial, as do thread-bound loops, which the CPU
/// code generators do not support (serialize_nested_parallel.cc).
PrimFunc SerializeNestedParallel(const PrimFunc& func);

/// The ways `func` breaks the lowered-form contract of lower.h, one message each; empty when it
/// satisfies it (verify_lowered_form.cc).
std::vector<std::string> VerifyLoweredForm(const PrimFunc& func, const LowerOptions& options = {});

}  // namespace tirtune
