// reverse_compute_inline: removes an elementwise consumer by folding its computation into the
// single producer of the intermediate buffer it reads; the producer then writes the consumer's
// output directly.
//
// Preconditions:
//  1. the consumer is spatial (no init, no reduction iterators), has no predicate, and its body is
//     a single store `D[...] = g(..., B[u0, u1, ...], ...)` whose indices are an injective affine
//     map of its iterators (distinct iterators, or a bijective affine map such as a reshape);
//  2. of the buffers the consumer reads, exactly one, B, is written by another block; the consumer
//     does not read D;
//  3. B is an intermediate buffer written by exactly one block, the producer, which comes before
//     the consumer, and read by no block but the consumer;
//  4. the producer is spatial, has no predicate, and its body is a single store
//     `B[v0, v1, ...] = f(...)` at distinct iterators; f does not read B or D;
//  5. every load of B in the consumer is at the same indices (u0, u1, ...), which are distinct
//     consumer iterators; every other consumer iterator has extent 1; and the domain of u_d equals
//     the domain of v_d, so both blocks visit the same elements of B;
//  6. no block between the producer and the consumer touches D or writes a buffer g reads;
//  7. removing the consumer leaves its scope with a non-empty body.
// With u_d := v_d (and unit iterators at their min), the producer's store becomes
// `D[...] = g(..., f, ...)`; its reads gain the consumer's other reads and its write of B becomes
// the write of D. The consumer, the loops that held only it, and B disappear.
//
// Before:                                  After ReverseComputeInline(D):
//   for i in range(16):                      for i in range(16):
//     with block("B"):                         with block("B"):
//       vi = axis.spatial(16, i)                 vi = axis.spatial(16, i)
//       B[vi] = A[vi] * 2.0                      reads(A[vi], E[vi])
//   for i in range(16):                          writes(D[vi])
//     with block("D"):                           D[vi] = max(A[vi] * 2.0 + E[vi], 0.0)
//       vj = axis.spatial(16, i)
//       D[vj] = max(B[vj] + E[vj], 0.0)
#include <fmt/format.h>

#include <algorithm>

#include "block_checks.h"
#include "buffer_loads.h"
#include "leaf_block_removal.h"
#include "read_regions.h"
#include "tirtune/arith/iter_map.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

constexpr const char* kPrimitive = "reverse_compute_inline";

// Step 1: the consumer's store writes each element of D at most once.
void CheckInjectiveStore(const BlockRealizeNode* consumer, const BufferStoreNode* store) {
  arith::VarRangeMap doms;
  for (const IterVar& iv : consumer->block->iter_vars) doms[iv.var] = iv.dom;
  arith::IterMapResult map = arith::DetectIterMap(store->indices, doms);
  if (map.ok()) return;
  throw SimpleScheduleError(
      "NotInjectiveStoreError",
      fmt::format("{} needs block '{}' to write each element of '{}' once, at an injective affine "
                  "map of its iterators ({})",
                  kPrimitive, consumer->block->name, store->buffer->name, map.error),
      {consumer});
}

// Step 2: the one buffer the consumer reads that another block writes.
Buffer SingleProducedRead(const ScheduleState& state, const BlockRealizeNode* consumer) {
  std::vector<Buffer> produced;
  for (const BufferRegion& r : consumer->block->reads) {
    bool seen = std::any_of(produced.begin(), produced.end(),
                            [&](const Buffer& b) { return b.same_as(r.buffer); });
    if (seen) continue;
    for (const BlockRealizeNode* writer : BlocksWriting(state, r.buffer)) {
      if (writer != consumer) {
        produced.push_back(r.buffer);
        break;
      }
    }
  }
  if (produced.size() == 1) return produced[0];
  std::string names;
  for (const Buffer& b : produced) names += (names.empty() ? "'" : ", '") + b->name + "'";
  throw SimpleScheduleError(
      "NotSingleProducedReadError",
      fmt::format("{} needs block '{}' to read exactly one buffer that another block writes; it "
                  "reads {}",
                  kPrimitive, consumer->block->name,
                  produced.empty() ? std::string("none") : names),
      {consumer});
}

// Replaces every load of `buffer` by `value`.
class LoadReplacer : public StmtMutator {
 public:
  LoadReplacer(Buffer buffer, Expr value) : buffer_(std::move(buffer)), value_(std::move(value)) {}
  using StmtMutator::VisitExpr_;
  Expr VisitExpr_(const BufferLoadNode* op) override {
    if (op->buffer.same_as(buffer_)) return value_;
    return StmtMutator::VisitExpr_(op);
  }

 private:
  Buffer buffer_;
  Expr value_;
};

}  // namespace

void Schedule::ReverseComputeInline(BlockRV block_rv) {
  const BlockRealizeNode* consumer = Get(block_rv);
  const BlockNode* cblock = consumer->block.get();
  // Step 1. The consumer writes one element of D per iterator value.
  CheckSpatialBlock(consumer, kPrimitive);
  CheckTrivialPredicate(consumer, kPrimitive);
  const BufferStoreNode* cstore = SingleStoreOf(consumer, kPrimitive);
  CheckInjectiveStore(consumer, cstore);
  const Buffer& out = cstore->buffer;

  // Step 2. It reads one produced buffer B, and not its own output.
  Buffer inlined = SingleProducedRead(state_, consumer);
  if (LoadsBuffer(cstore->value, out)) {
    throw SimpleScheduleError(
        "ConflictingAccessError",
        fmt::format("{} cannot move the computation of block '{}': it reads '{}', the buffer it "
                    "writes, so the order of its writes matters",
                    kPrimitive, cblock->name, out->name),
        {consumer});
  }

  // Step 3. B has one producer, before the consumer, and no other reader.
  std::vector<const BlockRealizeNode*> writers = BlocksWriting(state_, inlined);
  if (writers.size() != 1) {
    throw SimpleScheduleError(
        "NotSingleProducerError",
        fmt::format("{} needs buffer '{}' read by block '{}' to be written by exactly one block; "
                    "{} blocks write it",
                    kPrimitive, inlined->name, cblock->name, writers.size()),
        {consumer});
  }
  const BlockRealizeNode* producer = writers[0];
  CheckIntermediate(func(), inlined, producer, kPrimitive);
  for (const BlockRealizeNode* reader : BlocksReading(state_, inlined)) {
    if (reader == consumer) continue;
    throw SimpleScheduleError(
        "OtherReadersError",
        fmt::format("{} would remove buffer '{}', but block '{}' reads it besides block '{}'",
                    kPrimitive, inlined->name, reader->block->name, cblock->name),
        {consumer, reader});
  }
  std::vector<const BlockRealizeNode*> order = state_.AllBlocks();
  auto producer_at = std::find(order.begin(), order.end(), producer);
  auto consumer_at = std::find(order.begin(), order.end(), consumer);
  if (consumer_at < producer_at) {
    throw SimpleScheduleError(
        "NotSingleProducerError",
        fmt::format("{} needs the producer '{}' of buffer '{}' to come before block '{}'",
                    kPrimitive, producer->block->name, inlined->name, cblock->name),
        {consumer, producer});
  }

  // Step 4. The producer stores one element of B per iterator value.
  CheckSpatialBlock(producer, kPrimitive);
  CheckTrivialPredicate(producer, kPrimitive);
  const BufferStoreNode* pstore = SingleStoreOf(producer, kPrimitive);
  std::vector<const VarNode*> pvars = StoreIndexVars(producer, pstore, kPrimitive);
  if (LoadsBuffer(pstore->value, inlined) || LoadsBuffer(pstore->value, out)) {
    throw SimpleScheduleError(
        "ConflictingAccessError",
        fmt::format("{} cannot fold block '{}' into block '{}': the producer reads '{}'",
                    kPrimitive, cblock->name, producer->block->name,
                    LoadsBuffer(pstore->value, inlined) ? inlined->name : out->name),
        {consumer, producer});
  }

  // Step 5. Every load of B is at the same distinct iterators, matching the producer's.
  std::vector<const BufferLoadNode*> loads = LoadsOf(cstore->value, inlined);
  auto load_error = [&](const std::string& why) {
    return SimpleScheduleError(
        "LoadIndicesError",
        fmt::format("{} needs block '{}' to load '{}' at the same distinct iterators everywhere, "
                    "covering the producer's domain; {}",
                    kPrimitive, cblock->name, inlined->name, why),
        {consumer, producer});
  };
  if (loads.empty()) throw load_error("it is never loaded in the store's value");
  VarMap vmap;  // consumer iterators -> producer iterators
  std::vector<const VarNode*> used;
  for (size_t d = 0; d < loads[0]->indices.size(); ++d) {
    const auto* var = loads[0]->indices[d].as<VarNode>();
    const IterVar* citer = var == nullptr ? nullptr : FindIterVar(cblock, var);
    if (citer == nullptr || std::find(used.begin(), used.end(), var) != used.end()) {
      throw load_error(fmt::format("index {} is not a distinct block iterator", d));
    }
    const IterVar* piter = FindIterVar(producer->block.get(), pvars[d]);
    if (!SameDomain(*citer, *piter)) {
      throw load_error(fmt::format("iterator '{}' and the producer's '{}' have different domains",
                                   var->name, pvars[d]->name));
    }
    used.push_back(var);
    vmap[var] = piter->var;
  }
  for (const BufferLoadNode* load : loads) {
    if (!SameIndices(load->indices, loads[0]->indices)) {
      throw load_error("two loads use different indices");
    }
  }
  for (const IterVar& iv : cblock->iter_vars) {
    if (vmap.count(iv.var.get())) continue;
    if (!IsConstInt(iv.dom.extent, 1)) {
      throw load_error(fmt::format("iterator '{}' does not index it", iv.var->name));
    }
    vmap[iv.var.get()] = iv.dom.min;
  }

  // Step 6. Moving the write of D up to the producer crosses no other access of D or g's inputs.
  std::vector<const StmtNode*> ancestors = state_.Ancestors(consumer);
  for (auto it = producer_at + 1; it != consumer_at; ++it) {
    const BlockNode* between = (*it)->block.get();
    if (std::find(ancestors.begin(), ancestors.end(), *it) != ancestors.end()) continue;
    bool conflict = ReadsBuffer(between, out) || WritesBuffer(between, out);
    for (const BufferRegion& r : cblock->reads) conflict |= WritesBuffer(between, r.buffer);
    if (!conflict) continue;
    throw SimpleScheduleError(
        "ConflictingAccessError",
        fmt::format("{} cannot move the write of '{}' from block '{}' up to block '{}': block "
                    "'{}' in between accesses its buffers",
                    kPrimitive, out->name, cblock->name, producer->block->name, between->name),
        {consumer, *it});
  }
  LeafBlockRemoval removal = PlanLeafBlockRemoval(state_, consumer, kPrimitive);
  if (check_only_) return;

  // Step 7. The producer stores g(f) into D, with the consumer's accesses in its iterators.
  const BlockNode* pblock = producer->block.get();
  LoadReplacer replacer(inlined, pstore->value);
  Expr value = replacer.VisitExpr(Substitute(cstore->value, vmap));
  std::vector<Expr> indices;
  for (const Expr& e : cstore->indices) indices.push_back(Substitute(e, vmap));
  std::vector<BufferRegion> reads =
      SpliceRegions(pblock->reads, Buffer(), SubstituteRegions(cblock->reads, vmap, inlined));
  std::vector<BufferRegion> writes =
      SpliceRegions(pblock->writes, inlined, SubstituteRegions(cblock->writes, vmap, inlined));
  Block new_producer = MakeBlock(pblock->name, pblock->iter_vars, std::move(reads),
                                 std::move(writes), MakeBufferStore(out, value, indices),
                                 pblock->init, pblock->alloc_buffers, pblock->annotations);
  state_.SetFunc(func().WithBody(RemoveLeafAndReplaceBlock(
      func()->body, std::move(removal), inlined, producer, std::move(new_producer))));
  Record("ReverseComputeInline", {block_rv.ref()}, nlohmann::json::object(), {});
}

}  // namespace tirtune
