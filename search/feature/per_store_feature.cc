// ExtractFeatures: one row of kNumFeatures values per BufferStore of a lowered function, in the
// layout of feature_layout.h (names and meanings in feature_names.cc).
//
// The lowered form has no vectorized or explicitly unrolled loops left, so both are read back
// from what lowering made of them: a vector store (a ramp index of L lanes) counts as an innermost
// vectorized loop of extent L, a serial loop annotated "pragma_vectorize" as a vectorized loop,
// one annotated "pragma_unroll" as an unrolled loop, and G sibling statements that differ only
// in integer constants (the copies an expanded unrolled loop leaves, see unrolled_copies.h) as
// the first of them inside an unrolled loop of extent G, over which each access moves by the
// difference of its offsets in the first two copies. Without that, a candidate would have a row
// per copy, and the pack-sum model, which gives every row of a candidate the same gradient,
// overshoots on candidates with many rows.
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "buffer_access.h"
#include "feature_layout.h"
#include "op_counts.h"
#include "tirtune/ir/functor.h"
#include "tirtune/search/feature.h"
#include "unrolled_copies.h"

namespace tirtune {
namespace {

using namespace feature_layout;
using feature::BufferAccess;
using feature::ComputeFootprint;
using feature::CountOps;
using feature::Footprint;
using feature::OpCounts;

double Slog(double x) { return std::log2(1.0 + std::fabs(x)); }

// Distinct bytes the accesses touch over the loops from `first_loop` inwards; accesses of one
// buffer overlap, so each buffer counts with its largest footprint.
double UniqueBytes(const std::vector<BufferAccess>& accesses, const std::vector<int64_t>& extents,
                   size_t first_loop) {
  std::vector<std::pair<const BufferNode*, double>> per_buffer;
  for (const BufferAccess& a : accesses) {
    double bytes = ComputeFootprint(a, extents, first_loop).unique * a.elem_bytes;
    auto it = std::find_if(per_buffer.begin(), per_buffer.end(),
                           [&](const auto& entry) { return entry.first == a.buffer; });
    if (it == per_buffer.end()) {
      per_buffer.emplace_back(a.buffer, bytes);
    } else {
      it->second = std::max(it->second, bytes);
    }
  }
  double total = 0;
  for (const auto& entry : per_buffer) total += entry.second;
  return total;
}

// ---- The walk ----

// A loop of a loop-kind group as the position features see it.
struct KindLoop {
  double extent;
  size_t position;  // 0 = outermost; the lanes of a vector store are innermost of all
  bool reduce;      // the loop does not move the stored element
};

// Writes num, prod, innermost length and the position one-hot of `loops` at `out`.
void WriteLoopKind(const std::vector<KindLoop>& loops, size_t num_positions, float* out) {
  float* onehot = out + 3;
  if (loops.empty()) {
    onehot[0] = 1;
    return;
  }
  double prod = 1;
  const KindLoop* innermost = &loops.front();
  int category = -1;
  for (const KindLoop& loop : loops) {
    prod *= loop.extent;
    if (loop.position > innermost->position) innermost = &loop;
    int level = loop.position + 1 == num_positions ? 0 : loop.position == 0 ? 2 : 1;
    int c = 1 + level + (loop.reduce ? 3 : 0);
    category = category == -1 || category == c ? c : 7;
  }
  out[0] = Slog(static_cast<double>(loops.size()));
  out[1] = Slog(prod);
  out[2] = Slog(innermost->extent);
  onehot[category] = 1;
}

// The register block of a store: the loops inside the innermost loop of extent > 1 that does
// not move the stored element (`reuse`, usually the innermost reduction loop), whose elements
// stay in registers across it. Columns: the block's size in elements (vector lanes included),
// its number of loops of extent > 1, the extents of its three innermost such loops, the extent
// of `reuse`, the block without its innermost loop, and the store's loop iterations
// (outer_prod) over the block's size. All zero when every loop moves the stored element.
void WriteRegisterBlock(const BufferAccess& write, const std::vector<int64_t>& extents, int lanes,
                        double outer_prod, float* out) {
  size_t reuse = extents.size();
  for (size_t k = extents.size(); k-- > 0;) {
    if (write.coef[k] == 0 && extents[k] > 1) {
      reuse = k;
      break;
    }
  }
  if (reuse == extents.size()) return;
  double block = static_cast<double>(lanes);
  std::vector<double> inner;  // the block's loops of extent > 1, outermost first
  for (size_t k = reuse + 1; k < extents.size(); ++k) {
    block *= static_cast<double>(extents[k]);
    if (extents[k] > 1) inner.push_back(static_cast<double>(extents[k]));
  }
  out[0] = static_cast<float>(Slog(block));
  out[1] = static_cast<float>(Slog(static_cast<double>(inner.size())));
  for (size_t j = 0; j < 3 && j < inner.size(); ++j) {
    out[2 + j] = static_cast<float>(Slog(inner[inner.size() - 1 - j]));
  }
  out[5] = static_cast<float>(Slog(static_cast<double>(extents[reuse])));
  out[6] = static_cast<float>(Slog(block / (inner.empty() ? 1.0 : inner.back())));
  out[7] = static_cast<float>(Slog(outer_prod / block));
}

// What the buffer group of a row says about one buffer (the union of its accesses).
struct BufferSummary {
  const BufferNode* buffer = nullptr;
  bool read = false, write = false;
  double bytes = 0, unique_bytes = 0, lines = 0, unique_lines = 0, stride = 0;
  BufferColumn reuse_type = kReuseNone;
  double reuse_dis_iter = 0, reuse_dis_bytes = 0, reuse_ct = 0;
};

class PerStoreFeatureExtractor {
 public:
  FeatureMatrix Run(const PrimFunc& func) {
    // Shared memory per GPU block: every shared allocation of the function (one kernel, or the
    // largest share of a few).
    PreOrderVisit(func->body, [&](const Object* node) {
      if (const auto* alloc = node->as<AllocateNode>()) {
        if (alloc->buffer->scope == StorageScope::kShared) {
          double elems = 1;
          for (const Expr& dim : alloc->buffer->shape) {
            const int64_t* d = AsConstInt(dim);
            elems *= d != nullptr ? static_cast<double>(*d) : 1.0;
          }
          shared_bytes_ += elems * alloc->buffer->dtype.bytes();
        }
      }
      return true;
    });
    Visit(func->body);
    FillSizeShares();
    return std::move(out_);
  }

 private:
  // Maps each store of the first copy of an unrolled body to the same store in the second.
  using Counterparts = std::unordered_map<const BufferStoreNode*, const BufferStoreNode*>;

  // A loop around the current statement: a For node, or the loop over the copies of an unrolled
  // body (node null, `copies` set).
  struct Loop {
    const ForNode* node;
    int64_t extent;
    const Counterparts* copies;
  };

  void Visit(const Stmt& s) {
    switch (s->kind()) {
      case NodeKind::kFor: {
        const auto* loop = static_cast<const ForNode*>(s.get());
        const int64_t* extent = AsConstInt(loop->extent);
        positions_[loop->loop_var.get()] = static_cast<int>(loops_.size());
        loops_.push_back({loop, extent != nullptr ? std::max<int64_t>(*extent, 1) : 1, nullptr});
        Visit(loop->body);
        loops_.pop_back();
        positions_.erase(loop->loop_var.get());
        return;
      }
      case NodeKind::kSeqStmt:
        VisitSeq(static_cast<const SeqStmtNode*>(s.get()));
        return;
      case NodeKind::kIfThenElse: {
        const auto* branch = static_cast<const IfThenElseNode*>(s.get());
        conditions_.push_back({&branch->condition, loops_.size()});
        Visit(branch->then_case);
        if (branch->else_case.defined()) Visit(branch->else_case);
        conditions_.pop_back();
        return;
      }
      case NodeKind::kAllocate: {
        const auto* alloc = static_cast<const AllocateNode*>(s.get());
        alloc_outer_prod_[alloc->buffer.get()] = LoopProduct(0, loops_.size());
        Visit(alloc->body);
        return;
      }
      case NodeKind::kLetStmt:
        Visit(static_cast<const LetStmtNode*>(s.get())->body);
        return;
      case NodeKind::kBlockRealize:
        Visit(static_cast<const BlockRealizeNode*>(s.get())->block->body);
        return;
      case NodeKind::kBlock:
        Visit(static_cast<const BlockNode*>(s.get())->body);
        return;
      case NodeKind::kBufferStore:
        AddRow(static_cast<const BufferStoreNode*>(s.get()));
        return;
      default:
        return;
    }
  }

  // Children that hash alike are copies of one unrolled body: the first stands for all of them,
  // inside a loop over the copies.
  void VisitSeq(const SeqStmtNode* seq) {
    std::vector<uint64_t> hashes(seq->seq.size());
    std::unordered_map<uint64_t, std::vector<size_t>> groups;
    for (size_t i = 0; i < seq->seq.size(); ++i) {
      hashes[i] = feature::StoreShapeHash(seq->seq[i]);
      if (hashes[i] != 0) groups[hashes[i]].push_back(i);
    }
    for (size_t i = 0; i < seq->seq.size(); ++i) {
      if (hashes[i] == 0) continue;
      const std::vector<size_t>& group = groups[hashes[i]];
      if (group.front() != i) continue;
      if (group.size() == 1) {
        Visit(seq->seq[i]);
        continue;
      }
      std::vector<const BufferStoreNode*> first = feature::StoresInOrder(seq->seq[group[0]]);
      std::vector<const BufferStoreNode*> second = feature::StoresInOrder(seq->seq[group[1]]);
      Counterparts counterparts;
      for (size_t s = 0; s < std::min(first.size(), second.size()); ++s) {
        counterparts.emplace(first[s], second[s]);
      }
      loops_.push_back({nullptr, static_cast<int64_t>(group.size()), &counterparts});
      Visit(seq->seq[i]);
      loops_.pop_back();
    }
  }

  // is_gpu, the thread-axis extents around the current store, shared memory and occupancy.
  void WriteGpuColumns(float* out) const {
    static const char* const kAxes[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                        "threadIdx.y", "threadIdx.z", "vthread"};
    double extents[7] = {1, 1, 1, 1, 1, 1, 1};
    bool gpu = false;
    for (const Loop& loop : loops_) {
      if (loop.node == nullptr || loop.node->for_kind != ForKind::kThreadBinding) continue;
      gpu = true;
      for (size_t a = 0; a < 7; ++a) {
        if (loop.node->thread_tag.rfind(kAxes[a], 0) == 0) extents[a] *= loop.extent;
      }
    }
    if (!gpu) return;
    out[0] = 1;
    for (size_t a = 0; a < 7; ++a) out[1 + a] = static_cast<float>(Slog(extents[a]));
    out[8] = static_cast<float>(Slog(shared_bytes_));
    constexpr double kThreadSlots = 2048, kMaxBlocks = 32, kSharedPerSm = 228.0 * 1024;
    const double threads = extents[3] * extents[4] * extents[5];
    double blocks = std::min(std::floor(kThreadSlots / threads), kMaxBlocks);
    if (shared_bytes_ > 0) blocks = std::min(blocks, std::floor(kSharedPerSm / shared_bytes_));
    out[9] = static_cast<float>(std::min(1.0, blocks * threads / kThreadSlots));
  }

  double LoopProduct(size_t begin, size_t end) const {
    double prod = 1;
    for (size_t k = begin; k < end; ++k) prod *= static_cast<double>(loops_[k].extent);
    return prod;
  }

  void AddRow(const BufferStoreNode* store) {
    out_.data.resize(out_.data.size() + FeatureMatrix::kNumFeatures, 0.0f);
    float* row = out_.data.data() + out_.rows * FeatureMatrix::kNumFeatures;
    ++out_.rows;
    const size_t n = loops_.size();
    std::vector<int64_t> extents(n);
    for (size_t k = 0; k < n; ++k) extents[k] = loops_[k].extent;
    const double outer_prod = LoopProduct(0, n);

    // Step 1. The accesses: the store first, then every load in order. Over a loop of unrolled
    // copies an access moves by the difference of its offsets in the first two copies.
    std::vector<BufferAccess> accesses = Accesses(store, n);
    for (size_t k = 0; k < n; ++k) {
      if (loops_[k].copies == nullptr) continue;
      auto counterpart = loops_[k].copies->find(store);
      if (counterpart == loops_[k].copies->end()) continue;
      std::vector<BufferAccess> next = Accesses(counterpart->second, n);
      for (size_t a = 0; a < std::min(accesses.size(), next.size()); ++a) {
        accesses[a].coef[k] = next[a].offset - accesses[a].offset;
      }
    }
    const BufferAccess& write = accesses.front();

    // Step 2. Arithmetic, weighted by the executions of each expression.
    OpCounts ops;
    CountOps(store->value, outer_prod, &ops);
    for (const Expr& index : store->indices) CountOps(index, outer_prod, &ops);
    for (const auto& [condition, depth] : conditions_) {
      CountOps(*condition, LoopProduct(0, depth), &ops);
    }
    function_ops_ += ops;
    for (size_t c = 0; c < kNumArithClasses; ++c) {
      row[kFloatOps + c] = static_cast<float>(Slog(ops.float_ops[c]));
      row[kIntOps + c] = static_cast<float>(Slog(ops.int_ops[c]));
    }
    row[kBoolOp] = static_cast<float>(Slog(ops.bool_op));
    row[kSelect] = static_cast<float>(Slog(ops.select));

    // Step 3. Loop kinds.
    const int lanes = store->value.dtype().lanes();
    const size_t num_positions = n + (lanes > 1 ? 1 : 0);
    std::vector<KindLoop> vectorized, unrolled, parallel;
    std::optional<size_t> vector_loop;  // the innermost vectorized loop
    int64_t max_unroll_step = 0;
    for (size_t k = 0; k < n; ++k) {
      const ForNode* loop = loops_[k].node;
      KindLoop kind_loop{static_cast<double>(extents[k]), k, write.coef[k] == 0};
      if (loop == nullptr) {
        unrolled.push_back(kind_loop);
        max_unroll_step = std::max(max_unroll_step, extents[k]);
        continue;
      }
      if (loop->for_kind == ForKind::kParallel) parallel.push_back(kind_loop);
      if (loop->for_kind == ForKind::kVectorized || loop->annotations.count("pragma_vectorize")) {
        vectorized.push_back(kind_loop);
        vector_loop = k;  // the innermost so far
      }
      // Lowered for features (LowerForFeatures), an auto-unrolled loop nest keeps its
      // annotation instead of being expanded.
      auto auto_unroll = loop->annotations.find("pragma_auto_unroll_max_step");
      if (auto_unroll != loop->annotations.end()) {
        if (const int64_t* step = AsConstInt(auto_unroll->second)) {
          max_unroll_step = std::max(max_unroll_step, *step);
        }
      }
      auto unroll = loop->annotations.find("pragma_unroll");
      if (loop->for_kind == ForKind::kUnrolled || unroll != loop->annotations.end()) {
        unrolled.push_back(kind_loop);
        const int64_t* step =
            unroll != loop->annotations.end() ? AsConstInt(unroll->second) : nullptr;
        max_unroll_step = std::max(max_unroll_step, step != nullptr ? *step : extents[k]);
      }
    }
    if (lanes > 1) vectorized.push_back({static_cast<double>(lanes), n, false});
    WriteLoopKind(vectorized, num_positions, row + kVectorize);
    WriteLoopKind(unrolled, num_positions, row + kUnroll);
    WriteLoopKind(parallel, num_positions, row + kParallel);
    WriteGpuColumns(row + kGpu);

    // Step 4. Buffers, most cache lines first.
    WriteBuffers(accesses, extents, row);

    // Step 5. Arithmetic intensity as loops are added from the innermost outwards.
    OpCounts per_iteration;
    CountOps(store->value, 1.0, &per_iteration);
    WriteIntensityCurve(accesses, extents, per_iteration.Flops(), row + kIntensity);

    // Step 6. Allocation of the stored buffer, and the outer scope.
    auto alloc = alloc_outer_prod_.find(store->buffer.get());
    if (alloc != alloc_outer_prod_.end()) {
      double elems = 1;
      for (const Expr& dim : store->buffer->shape) {
        const int64_t* d = AsConstInt(dim);
        elems *= d != nullptr ? static_cast<double>(*d) : 1.0;
      }
      row[kAlloc + 0] = static_cast<float>(Slog(elems * store->buffer->dtype.bytes()));
      row[kAlloc + 1] = static_cast<float>(Slog(elems * alloc->second));
      row[kAlloc + 2] = static_cast<float>(Slog(alloc->second));
      row[kAlloc + 3] = static_cast<float>(Slog(outer_prod / alloc->second));
    }
    WriteRegisterBlock(write, extents, lanes, outer_prod, row + kRegisterBlock);
    // Step 7. Gathers, guards and copies.
    WriteAccessShape(store, accesses, vector_loop, outer_prod, row + kAccessShape);
    row[kOuter + 0] = static_cast<float>(Slog(outer_prod));
    row[kOuter + 1] = static_cast<float>(Slog(static_cast<double>(n)));
    row[kOuter + 2] = static_cast<float>(Slog(static_cast<double>(max_unroll_step)));
  }

  // The access-shape columns of a store (feature_names.cc says what each means).
  void WriteAccessShape(const BufferStoreNode* store, const std::vector<BufferAccess>& accesses,
                        std::optional<size_t> vector_loop, double outer_prod, float* out) const {
    double gathered = 0;
    for (size_t a = 1; a < accesses.size(); ++a) {
      const BufferAccess& load = accesses[a];
      double stride = load.lanes > 1 ? load.lane_stride : vector_loop ? load.coef[*vector_loop] : 0;
      if (std::fabs(stride) > 1) gathered += outer_prod;
    }
    out[0] = static_cast<float>(Slog(gathered));
    if (!conditions_.empty()) {
      out[1] = static_cast<float>(Slog(static_cast<double>(conditions_.size())));
      out[2] = static_cast<float>(Slog(LoopProduct(conditions_.back().second, loops_.size())));
    }
    const ExprNode* value = store->value.get();
    if (value->kind() == NodeKind::kSelect) {
      // A constant (or a broadcast one) on one side: the copy is the other side.
      auto is_constant = [](const Expr& e) {
        const Expr& v = e->kind() == NodeKind::kBroadcast
                            ? static_cast<const BroadcastNode*>(e.get())->value
                            : e;
        return v->kind() == NodeKind::kFloatImm || v->kind() == NodeKind::kIntImm;
      };
      const auto* select = static_cast<const SelectNode*>(value);
      if (is_constant(select->f)) {
        value = select->t.get();
      } else if (is_constant(select->t)) {
        value = select->f.get();
      }
    }
    if (value->kind() == NodeKind::kBufferLoad) {
      out[3] = static_cast<float>(Slog(outer_prod * store->value.dtype().lanes()));
    }
  }

  // The size shares of every row: each source column (log2(1 + x)) less log2(1 + the float
  // operations of the whole function, or all its operations when it has none), plus 64 to keep a
  // present value apart from an absent one (0 stays 0). Loop extents and bytes say how big the
  // workload is; their shares say how the schedule spends its work, which carries over between
  // workloads of different sizes.
  void FillSizeShares() {
    const double scale = Slog(function_ops_.Flops());
    for (size_t r = 0; r < out_.rows; ++r) {
      float* row = out_.data.data() + r * FeatureMatrix::kNumFeatures;
      for (size_t i = 0; i < kNumShares; ++i) {
        const float value = row[kShareSources[i]];
        row[kShares + i] = value != 0 ? static_cast<float>(value - scale + 64) : 0.0f;
      }
    }
  }

  std::vector<BufferAccess> Accesses(const BufferStoreNode* store, size_t num_loops) const {
    std::vector<BufferAccess> accesses;
    accesses.push_back(feature::AnalyzeAccess(store->buffer, store->indices, /*is_write=*/true,
                                              positions_, num_loops));
    PostOrderVisit(store->value, [&](const Object* node) {
      if (const auto* load = node->as<BufferLoadNode>()) {
        accesses.push_back(feature::AnalyzeAccess(load->buffer, load->indices,
                                                  /*is_write=*/false, positions_, num_loops));
      }
    });
    return accesses;
  }

  static void WriteBuffers(const std::vector<BufferAccess>& accesses,
                           const std::vector<int64_t>& extents, float* row) {
    const size_t n = extents.size();
    // Step 1. Merge the accesses of each buffer.
    std::vector<BufferSummary> buffers;
    for (const BufferAccess& a : accesses) {
      auto it = std::find_if(buffers.begin(), buffers.end(),
                             [&](const BufferSummary& b) { return b.buffer == a.buffer; });
      bool first = it == buffers.end();
      if (first) it = buffers.insert(buffers.end(), BufferSummary{.buffer = a.buffer});
      Footprint fp = ComputeFootprint(a, extents, 0);
      (a.is_write ? it->write : it->read) = true;
      it->bytes += fp.touches * a.elem_bytes;
      it->unique_bytes = std::max(it->unique_bytes, fp.unique * a.elem_bytes);
      it->lines += fp.lines;
      it->unique_lines = std::max(it->unique_lines, fp.unique_lines);
      if (!first) continue;
      // Reuse is judged from the buffer's first access: the innermost loop that does not move it
      // reuses what the loops inside it touched.
      it->stride = fp.stride;
      for (size_t k = n; k-- > 0;) {
        if (a.coef[k] != 0 || extents[k] <= 1) continue;
        it->reuse_type = kReuseLoopMultipleRead;
        it->reuse_ct = static_cast<double>(extents[k]);
        it->reuse_dis_iter = 1;
        for (size_t j = k + 1; j < n; ++j) it->reuse_dis_iter *= static_cast<double>(extents[j]);
        it->reuse_dis_bytes = UniqueBytes(accesses, extents, k + 1);
        break;
      }
    }
    for (BufferSummary& b : buffers) {
      if (b.reuse_type != kReuseNone || !b.read || !b.write) continue;
      b.reuse_type = kReuseSerialMultipleReadWrite;
      b.reuse_ct = 1;
      b.reuse_dis_iter = 1;
      for (const BufferAccess& a : accesses) b.reuse_dis_bytes += a.lanes * a.elem_bytes;
    }
    // Step 2. Most lines first, then most bytes, then by name.
    std::sort(buffers.begin(), buffers.end(), [](const BufferSummary& x, const BufferSummary& y) {
      if (x.lines != y.lines) return x.lines > y.lines;
      if (x.bytes != y.bytes) return x.bytes > y.bytes;
      return x.buffer->name < y.buffer->name;
    });
    // Step 3. Write the first kNumBuffers.
    for (size_t i = 0; i < std::min(buffers.size(), kNumBuffers); ++i) {
      const BufferSummary& b = buffers[i];
      float* out = row + kBuffers + i * kBufferWidth;
      out[b.read && b.write ? kAccReadWrite : b.write ? kAccWrite : kAccRead] = 1;
      out[kBytes] = static_cast<float>(Slog(b.bytes));
      out[kUniqueBytes] = static_cast<float>(Slog(b.unique_bytes));
      out[kLines] = static_cast<float>(Slog(b.lines));
      out[kUniqueLines] = static_cast<float>(Slog(b.unique_lines));
      out[b.reuse_type] = 1;
      out[kReuseDisIter] = static_cast<float>(Slog(b.reuse_dis_iter));
      out[kReuseDisBytes] = static_cast<float>(Slog(b.reuse_dis_bytes));
      out[kReuseCt] = static_cast<float>(Slog(b.reuse_ct));
      const double ct = std::max(1.0, b.reuse_ct);
      out[kBytesDReuseCt] = static_cast<float>(Slog(b.bytes / ct));
      out[kUniqueBytesDReuseCt] = static_cast<float>(Slog(b.unique_bytes / ct));
      out[kLinesDReuseCt] = static_cast<float>(Slog(b.lines / ct));
      out[kUniqueLinesDReuseCt] = static_cast<float>(Slog(b.unique_lines / ct));
      out[kStride] = static_cast<float>(Slog(b.stride));
    }
  }

  // Samples FLOPs per unique byte at kIntensitySamples points evenly spaced in log2(1 + FLOPs),
  // interpolating between the loop levels.
  static void WriteIntensityCurve(const std::vector<BufferAccess>& accesses,
                                  const std::vector<int64_t>& extents, double ops_per_iteration,
                                  float* out) {
    if (ops_per_iteration == 0) return;
    const size_t n = extents.size();
    // Step 1. One point per level, innermost (no loop) first.
    std::vector<double> xs, ys;
    double flops = ops_per_iteration;
    for (size_t level = n + 1; level-- > 0;) {
      if (level < n) flops *= static_cast<double>(extents[level]);
      double bytes = UniqueBytes(accesses, extents, level);
      xs.push_back(Slog(flops));
      ys.push_back(flops / std::max(bytes, 1.0));
    }
    // Step 2. Sample.
    size_t j = 0;
    for (size_t i = 0; i < kIntensitySamples; ++i) {
      double x = xs.back() * static_cast<double>(i + 1) / kIntensitySamples;
      while (j + 1 < xs.size() && xs[j] < x) ++j;
      double y = ys[j];
      if (j > 0 && xs[j] > xs[j - 1]) {
        double t = (x - xs[j - 1]) / (xs[j] - xs[j - 1]);
        y = ys[j - 1] + t * (ys[j] - ys[j - 1]);
      }
      out[i] = static_cast<float>(y);
    }
  }

  FeatureMatrix out_;
  double shared_bytes_ = 0;
  // The operations of all rows so far.
  OpCounts function_ops_;
  std::vector<Loop> loops_;
  feature::LoopPositions positions_;
  // The conditions of the enclosing ifs, each with the number of loops outside it.
  std::vector<std::pair<const Expr*, size_t>> conditions_;
  // For each allocated buffer, the product of the loop extents outside its allocation.
  std::unordered_map<const BufferNode*, double> alloc_outer_prod_;
};

}  // namespace

FeatureMatrix ExtractFeatures(const PrimFunc& lowered) {
  return PerStoreFeatureExtractor().Run(lowered);
}

std::vector<FeatureMatrix> ExtractFeaturesParallel(const std::vector<PrimFunc>& lowered,
                                                   int num_threads) {
  std::vector<FeatureMatrix> out(lowered.size());
  tbb::task_arena arena(num_threads > 0 ? num_threads : tbb::info::default_concurrency());
  arena.execute([&] {
    tbb::parallel_for(size_t{0}, lowered.size(),
                      [&](size_t i) { out[i] = ExtractFeatures(lowered[i]); });
  });
  return out;
}

}  // namespace tirtune
