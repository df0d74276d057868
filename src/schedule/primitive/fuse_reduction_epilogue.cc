// fuse_reduction_epilogue: folds a bias-add epilogue into a sum reduction, so that the reduction
// starts from the bias instead of 0 and writes the output directly; the intermediate disappears.
//
// Unlike TVM's version, which also folds ReLU and clipping (and then applies them to every partial
// sum, changing the result), this one accepts only epilogues for which folding is exact: adding C
// once to a sum is the same as starting the sum from C. Floating-point sums are reassociated, as
// by any reordering of a reduction.
//
// Preconditions:
//  1. the reduction block is a sum: it has reduction iterators, an init `temp[v...] = 0` and an
//     update `temp[v...] = temp[v...] + x` (or `x + temp[v...]`), where v are its spatial
//     iterators, each exactly once, and x does not read temp; it has no predicate;
//  2. temp is an intermediate buffer, written only by the reduction and read only by it and by
//     the epilogue;
//  3. the epilogue is spatial, has no predicate, and its body is `D[w...] = temp[u...] + C[...]`
//     or `C[...] + temp[u...]`: temp is loaded exactly once; C is another buffer (not temp, not D)
//     indexed by epilogue iterators or constants (any broadcast of the bias);
//  4. u lists every epilogue iterator once, w is a permutation of u, and u_d has the domain of
//     v_d: the blocks map their spatial iterators one to one;
//  5. both blocks share a scope, the reduction comes first, the reduction does not read D, and
//     no block between them touches D or writes C;
//  6. removing the epilogue leaves its scope with a non-empty body.
// Any other epilogue (ReLU `max(temp + C, 0)`, clipping, scaling `temp * 2`, a second use of temp)
// is rejected with NonExactEpilogueError, which points to reverse_compute_at instead.
//
// Before:                                     After FuseReductionEpilogue(C, D):
//   with block("C"):                            with block("C"):
//     vi, vj = spatial; vk = reduce               vi, vj = spatial; vk = reduce
//     with init(): temp[vi, vj] = 0.0             reads(bias[vj], A[vi, vk], B[vk, vj])
//     temp[vi, vj] = temp[vi, vj] + A*B           writes(D[vi, vj])
//   with block("D"):                              with init(): D[vi, vj] = bias[vj]
//     vi, vj = spatial                            D[vi, vj] = D[vi, vj] + A[vi, vk] * B[vk, vj]
//     D[vi, vj] = temp[vi, vj] + bias[vj]
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "block_checks.h"
#include "buffer_loads.h"
#include "leaf_block_removal.h"
#include "read_regions.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

constexpr const char* kPrimitive = "fuse_reduction_epilogue";
constexpr const char* kAlternative =
    "use reverse_compute_at instead, which computes the epilogue after the reduction, under the "
    "reduction's spatial loops";

class NotSumReductionError : public ScheduleError {
 public:
  NotSumReductionError(const BlockRealizeNode* block, std::string why)
      : block_(block), why_(std::move(why)) {}
  const char* Kind() const override { return "NotSumReductionError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cannot fuse an epilogue into block '{}': {}; starting the reduction from the bias is "
        "exact only for a sum `temp = temp + x` that starts from 0; {}",
        block_->block->name, why_, kAlternative);
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
  std::string why_;
};

class NonExactEpilogueError : public ScheduleError {
 public:
  NonExactEpilogueError(const BlockRealizeNode* epilogue, std::string why)
      : epilogue_(epilogue), why_(std::move(why)) {}
  const char* Kind() const override { return "NonExactEpilogueError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cannot fold epilogue '{}' into the reduction: {}; only `D = temp + C[...]` folds "
        "exactly (C becomes the reduction's starting value), and folding anything else would "
        "change the result; {}",
        epilogue_->block->name, why_, kAlternative);
  }
  std::string Explanation() const override {
    return ShortMessage() +
           ". For example, ReLU of a sum of the products -2 and 3 is max(-2 + 3, 0) = 1, but "
           "applied to every partial sum it is max(max(0 + -2, 0) + 3, 0) = 3";
  }
  std::vector<const Object*> Locations() const override { return {epilogue_}; }

 private:
  HeldNode<BlockRealizeNode> epilogue_;
  std::string why_;
};

class EpilogueMappingError : public ScheduleError {
 public:
  EpilogueMappingError(const BlockRealizeNode* reduction, const BlockRealizeNode* epilogue,
                       std::string why)
      : reduction_(reduction), epilogue_(epilogue), why_(std::move(why)) {}
  const char* Kind() const override { return "EpilogueMappingError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cannot fuse epilogue '{}' into reduction '{}': {}; the epilogue must compute each "
        "output element from the one reduction result at the same iterators",
        epilogue_->block->name, reduction_->block->name, why_);
  }
  std::vector<const Object*> Locations() const override { return {reduction_, epilogue_}; }

 private:
  HeldNode<BlockRealizeNode> reduction_;
  HeldNode<BlockRealizeNode> epilogue_;
  std::string why_;
};

class IntermediateUseError : public ScheduleError {
 public:
  IntermediateUseError(const BlockRealizeNode* other, std::string buffer, std::string why)
      : other_(other), buffer_(std::move(buffer)), why_(std::move(why)) {}
  const char* Kind() const override { return "IntermediateUseError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "cannot fuse: block '{}' {} '{}', so the reduction result must stay in its own buffer; {}",
        other_->block->name, why_, buffer_, kAlternative);
  }
  std::vector<const Object*> Locations() const override { return {other_}; }

 private:
  HeldNode<BlockRealizeNode> other_;
  std::string buffer_;
  std::string why_;
};

// The sum's parts: the accumulator's store, the summand x, and whether x comes first.
struct SumUpdate {
  const BufferStoreNode* store = nullptr;
  Expr summand;
  bool summand_first = false;
};

// Step 1: the reduction is `temp[v] = temp[v] + x` with init `temp[v] = 0`.
SumUpdate MatchSum(const BlockRealizeNode* reduction) {
  const BlockNode* block = reduction->block.get();
  if (!block->init.defined() || !HasReductionIter(block)) {
    throw NotSumReductionError(reduction, "it is not a reduction block with an init");
  }
  CheckTrivialPredicate(reduction, kPrimitive);
  const auto* store = block->body.as<BufferStoreNode>();
  if (store == nullptr) throw NotSumReductionError(reduction, "its body is not a single store");
  const auto* init = block->init.as<BufferStoreNode>();
  if (init == nullptr || !init->buffer.same_as(store->buffer) ||
      !SameIndices(init->indices, store->indices)) {
    throw NotSumReductionError(reduction, "its init is not a single store to the accumulator");
  }
  if (!IsConstZero(init->value)) {
    throw NotSumReductionError(reduction, "its init does not store 0");
  }
  SumUpdate sum{store, Expr(), false};
  const auto* add = store->value.as<AddNode>();
  auto is_acc = [&](const Expr& e) {
    const auto* load = e.as<BufferLoadNode>();
    return load != nullptr && load->buffer.same_as(store->buffer) &&
           SameIndices(load->indices, store->indices);
  };
  if (add != nullptr && is_acc(add->a)) {
    sum.summand = add->b;
  } else if (add != nullptr && is_acc(add->b)) {
    sum.summand = add->a;
    sum.summand_first = true;
  } else {
    throw NotSumReductionError(reduction,
                               "its update is not `temp = temp + x` (a max, min or "
                               "product reduction has another identity and combiner)");
  }
  if (!LoadsOf(sum.summand, store->buffer).empty()) {
    throw NotSumReductionError(reduction, "its summand reads the accumulator");
  }
  return sum;
}

// The operators between the root of `value` and the load of temp, outermost first.
std::vector<NodeKind> PathTo(const Expr& value, const BufferLoadNode* target) {
  std::vector<NodeKind> path;
  std::function<bool(const Expr&)> walk = [&](const Expr& e) -> bool {
    if (e.get() == target) return true;
    path.push_back(e->kind());
    bool found = false;
    PostOrderVisit(e, [&](const Object* node) { found |= node == target; });
    if (found && IsBinaryOpKind(e->kind())) {
      if (walk(BinaryA(e.get())) || walk(BinaryB(e.get()))) return true;
    } else if (found) {
      return true;  // under a non-binary node: the node itself says enough
    }
    path.pop_back();
    return false;
  };
  walk(value);
  return path;
}

// Why an epilogue whose value is not `temp + C` cannot be folded.
std::string NonExactReason(const Expr& value, const BufferLoadNode* temp_load) {
  std::vector<NodeKind> path = PathTo(value, temp_load);
  std::vector<std::string> nonlinear;
  bool scales = false, negates = false;
  for (NodeKind k : path) {
    std::string name;
    if (k == NodeKind::kMax) name = "max";
    if (k == NodeKind::kMin) name = "min";
    if (k == NodeKind::kSelect) name = "select";
    if (k == NodeKind::kCall) name = "a math function";
    if (k == NodeKind::kCast) name = "a cast";
    if (IsCompareKind(k)) name = "a comparison";
    if (!name.empty() && std::find(nonlinear.begin(), nonlinear.end(), name) == nonlinear.end()) {
      nonlinear.push_back(name);
    }
    scales |= k == NodeKind::kMul || k == NodeKind::kDiv || k == NodeKind::kFloorDiv ||
              k == NodeKind::kFloorMod;
    negates |= k == NodeKind::kSub;
  }
  if (!nonlinear.empty()) {
    std::string names;
    for (size_t i = 0; i < nonlinear.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == nonlinear.size() ? " and " : ", ") + nonlinear[i];
    }
    bool clamps = std::find(nonlinear.begin(), nonlinear.end(), "max") != nonlinear.end() ||
                  std::find(nonlinear.begin(), nonlinear.end(), "min") != nonlinear.end();
    return fmt::format(
        "it applies {} to the reduction result{}, and a fused update would apply it to every "
        "partial sum instead of once to the total",
        names, clamps ? " (as ReLU or clipping do)" : "");
  }
  if (scales) {
    return "it scales the reduction result, which folding would apply to the bias as well";
  }
  if (negates) return "it subtracts with the reduction result, which is not a bias-add";
  return "it is not a bias-add of the reduction result";
}

// The bias operand: a load of C (not temp, not D) at epilogue iterators or constants.
const BufferLoadNode* MatchBias(const BlockRealizeNode* epilogue, const Expr& addend,
                                const Buffer& temp, const Buffer& out) {
  const auto* load = addend.as<BufferLoadNode>();
  if (load == nullptr || load->buffer.same_as(temp) || load->buffer.same_as(out)) {
    throw NonExactEpilogueError(
        epilogue,
        "its addend is not a load of a bias buffer other than the reduction result and "
        "the output");
  }
  for (const Expr& index : load->indices) {
    if (AsConstInt(index) != nullptr) continue;
    const auto* var = index.as<VarNode>();
    bool is_iter = var != nullptr && FindIterVar(epilogue->block.get(), var) != nullptr;
    if (!is_iter) {
      throw NonExactEpilogueError(
          epilogue, fmt::format("its bias '{}' is indexed by an expression that is not an "
                                "epilogue iterator or a constant",
                                load->buffer->name));
    }
  }
  return load;
}

}  // namespace

void Schedule::FuseReductionEpilogue(BlockRV reduction_rv, BlockRV epilogue_rv) {
  const BlockRealizeNode* reduction = Get(reduction_rv);
  const BlockRealizeNode* epilogue = Get(epilogue_rv);
  const BlockNode* rblock = reduction->block.get();
  const BlockNode* eblock = epilogue->block.get();

  // Step 1. The reduction is a sum over its spatial iterators' accumulator.
  SumUpdate sum = MatchSum(reduction);
  const Buffer& temp = sum.store->buffer;
  std::vector<const VarNode*> rvars = StoreIndexVars(reduction, sum.store, kPrimitive);
  for (const IterVar& iv : rblock->iter_vars) {
    bool indexes = std::find(rvars.begin(), rvars.end(), iv.var.get()) != rvars.end();
    if (indexes != (iv.kind == IterKind::kSpatial)) {
      throw NotSumReductionError(
          reduction, fmt::format("its accumulator is not indexed by exactly its spatial "
                                 "iterators ('{}' {})",
                                 iv.var->name, indexes ? "is a reduction iterator" : "is missing"));
    }
  }

  // Step 2. temp is private to the two blocks.
  CheckIntermediate(func(), temp, reduction, kPrimitive);
  for (const BlockRealizeNode* b : BlocksWriting(state_, temp)) {
    if (b != reduction) throw IntermediateUseError(b, temp->name, "also writes");
  }
  for (const BlockRealizeNode* b : BlocksReading(state_, temp)) {
    if (b != reduction && b != epilogue) {
      throw IntermediateUseError(b, temp->name, "also reads");
    }
  }

  // Step 3. The epilogue is `D[w] = temp[u] + C[...]`, temp loaded once.
  CheckSpatialBlock(epilogue, kPrimitive);
  CheckTrivialPredicate(epilogue, kPrimitive);
  const BufferStoreNode* estore = SingleStoreOf(epilogue, kPrimitive);
  const Buffer& out = estore->buffer;
  std::vector<const BufferLoadNode*> temp_loads = LoadsOf(estore->value, temp);
  if (temp_loads.empty()) {
    throw EpilogueMappingError(reduction, epilogue,
                               fmt::format("the epilogue does not load '{}'", temp->name));
  }
  if (temp_loads.size() > 1) {
    throw NonExactEpilogueError(
        epilogue, fmt::format("it uses the reduction result '{}' {} times, and only one use can "
                              "become the accumulator",
                              temp->name, temp_loads.size()));
  }
  const BufferLoadNode* temp_load = temp_loads[0];
  const auto* add = estore->value.as<AddNode>();
  bool temp_first = add != nullptr && add->a.get() == temp_load;
  if (add == nullptr || (!temp_first && add->b.get() != temp_load)) {
    throw NonExactEpilogueError(epilogue, NonExactReason(estore->value, temp_load));
  }
  const BufferLoadNode* bias = MatchBias(epilogue, temp_first ? add->b : add->a, temp, out);

  // Step 4. One-to-one iterator mapping u_d -> v_d with equal domains; D[w] is a permutation.
  VarMap vmap;  // epilogue iterator -> reduction iterator
  for (size_t d = 0; d < temp_load->indices.size(); ++d) {
    const auto* var = temp_load->indices[d].as<VarNode>();
    const IterVar* eiter = FindIterVar(eblock, var);
    if (eiter == nullptr || vmap.count(var)) {
      throw EpilogueMappingError(
          reduction, epilogue,
          fmt::format("index {} of its load of '{}' is not a distinct epilogue iterator", d,
                      temp->name));
    }
    const IterVar* riter = FindIterVar(rblock, rvars[d]);
    if (!SameDomain(*eiter, *riter)) {
      throw EpilogueMappingError(
          reduction, epilogue,
          fmt::format("epilogue iterator '{}' and reduction iterator '{}' have different domains",
                      var->name, rvars[d]->name));
    }
    vmap[var] = riter->var;
  }
  if (vmap.size() != eblock->iter_vars.size()) {
    throw EpilogueMappingError(
        reduction, epilogue, fmt::format("some epilogue iterator does not index '{}'", temp->name));
  }
  std::vector<const VarNode*> wvars = StoreIndexVars(epilogue, estore, kPrimitive);
  if (wvars.size() != eblock->iter_vars.size()) {
    throw EpilogueMappingError(
        reduction, epilogue,
        fmt::format("the epilogue writes '{}' at fewer indices than it has iterators", out->name));
  }

  // Step 5. Moving the write of D up to the reduction crosses no other access of D or C.
  if (state_.ScopeBlock(reduction) != state_.ScopeBlock(epilogue)) {
    throw EpilogueMappingError(reduction, epilogue, "the blocks are in different scopes");
  }
  std::vector<const BlockRealizeNode*> order = state_.AllBlocks();
  auto reduction_at = std::find(order.begin(), order.end(), reduction);
  auto epilogue_at = std::find(order.begin(), order.end(), epilogue);
  if (epilogue_at < reduction_at) {
    throw EpilogueMappingError(reduction, epilogue, "the epilogue comes before the reduction");
  }
  if (ReadsBuffer(rblock, out) || !LoadsOf(sum.summand, out).empty()) {
    throw IntermediateUseError(reduction, out->name, "reads the epilogue's output");
  }
  for (auto it = reduction_at + 1; it != epilogue_at; ++it) {
    const BlockNode* between = (*it)->block.get();
    if (ReadsBuffer(between, out) || WritesBuffer(between, out)) {
      throw IntermediateUseError(*it, out->name, "between the two blocks accesses");
    }
    if (WritesBuffer(between, bias->buffer)) {
      throw IntermediateUseError(*it, bias->buffer->name, "between the two blocks writes");
    }
  }
  LeafBlockRemoval removal = PlanLeafBlockRemoval(state_, epilogue, kPrimitive);
  if (check_only_) return;

  // Step 6. init `D = C`, update `D = D + x`, in the reduction's iterators.
  std::vector<Expr> indices;
  for (const Expr& e : estore->indices) indices.push_back(Substitute(e, vmap));
  Expr bias_value = Substitute(GetRef(bias), vmap);
  Expr acc = MakeBufferLoad(out, indices);
  Stmt init = MakeBufferStore(out, bias_value, indices);
  Expr total = sum.summand_first ? MakeBinary(NodeKind::kAdd, sum.summand, acc)
                                 : MakeBinary(NodeKind::kAdd, acc, sum.summand);
  Stmt update = MakeBufferStore(out, total, indices);
  std::vector<BufferRegion> reduction_reads;
  for (const BufferRegion& r : rblock->reads) {
    reduction_reads.push_back(r.buffer.same_as(temp) ? BufferRegion::Point(out, indices) : r);
  }
  std::vector<BufferRegion> reads =
      SpliceRegions({BufferRegion::Point(bias->buffer, bias_value.as<BufferLoadNode>()->indices)},
                    Buffer(), reduction_reads);
  std::vector<BufferRegion> writes =
      SpliceRegions(rblock->writes, temp, {BufferRegion::Point(out, indices)});
  Block fused = MakeBlock(rblock->name, rblock->iter_vars, std::move(reads), std::move(writes),
                          update, init, rblock->alloc_buffers, rblock->annotations);
  state_.SetFunc(func().WithBody(RemoveLeafAndReplaceBlock(func()->body, std::move(removal), temp,
                                                           reduction, std::move(fused))));
  Record("FuseReductionEpilogue", {reduction_rv.ref(), epilogue_rv.ref()}, nlohmann::json::object(),
         {});
}

}  // namespace tirtune
