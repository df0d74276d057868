// DefaultSchedule: inline injective producers, then per block: move the last spatial loop below
// the reduction loops, fuse the leading spatial loops until they give every core work and
// parallelize them; split the innermost spatial loop by the vector width and vectorize it.
//
//   for n, h, w, co, rh, rw, rc:            for n_h_fused in parallel(N * H):
//     C[n, h, w, co] += ...           →       for w, rh, rw, rc, co_0:
//                                               for co_1 in vectorized(16): C[...] += ...
//
// A reduction whose last spatial iterator indexes a leading dimension of a load (dense with an
// [N, K] weight: C[i, j] += A[i, k] * W[j, k]) would vectorize into gathers. When its innermost
// loop reduces along the last dimension of every load instead, that loop is split by the vector
// width and factored out (RFactor), so that the partial sums vectorize over contiguous data:
//
//   for i, j, k:                            for i in parallel, j, k_0:
//     C[i, j] += A[i, k] * W[j, k]   →         for k_1 in vectorized(16):
//                                                C_rf[i, j, k_1] += A[i, k_0*16 + k_1] * W[...]
//                                           for i in parallel, j, k_1: C[i, j] += C_rf[i, j, k_1]
//
// Otherwise such a block keeps its loop order and is not vectorized.
#include "tirtune/search/default_schedule.h"

#include <string>
#include <vector>

#include "tirtune/ir/buffer.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/stmt.h"
#include "tirtune/search/space.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// Whether `loop` (one of the loops above `realize`) binds only spatial iterators of its block,
// i.e. no reduction iterator's binding mentions it.
bool IsSpatialLoop(const BlockRealizeNode* realize, const ForNode* loop) {
  const BlockNode* block = realize->block.get();
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (block->iter_vars[i].kind != IterKind::kReduce) continue;
    bool uses = false;
    PostOrderVisit(realize->iter_values[i], [&](const Object* node) {
      if (node == loop->loop_var.get()) uses = true;
    });
    if (uses) return false;
  }
  return true;
}

int64_t ConstExtent(const ForNode* loop) {
  const int64_t* extent = AsConstInt(loop->extent);
  return extent != nullptr ? *extent : -1;
}

bool Uses(const Expr& expr, const Object* var) {
  bool uses = false;
  PostOrderVisit(expr, [&](const Object* node) {
    if (node == var) uses = true;
  });
  return uses;
}

// How the loads of a block's body index with the block iterator bound to `loop`.
enum class Access {
  kContiguous,  // no load indexes a leading dimension with it
  kStrided,     // some load does: consecutive iterations are a row apart
  kUnknown,     // `loop` binds no iterator alone
};

Access LoadAccess(const BlockRealizeNode* realize, const ForNode* loop) {
  const BlockNode* block = realize->block.get();
  const Object* var = nullptr;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (!Uses(realize->iter_values[i], loop->loop_var.get())) continue;
    if (var != nullptr) return Access::kUnknown;
    var = block->iter_vars[i].var.get();
  }
  if (var == nullptr) return Access::kUnknown;
  Access access = Access::kContiguous;
  PostOrderVisit(block->body, [&](const Object* node) {
    if (node->kind() != NodeKind::kBufferLoad) return;
    const auto* load = static_cast<const BufferLoadNode*>(node);
    for (size_t d = 0; d + 1 < load->indices.size(); ++d) {
      if (Uses(load->indices[d], var)) access = Access::kStrided;
    }
  });
  return access;
}

void ParallelizeVectorize(Schedule& sch, const std::string& name, const Target& target);

// The rfactor rewrite above for `name`, whose innermost loop `inner` reduces contiguously; false
// (and nothing changed) when it does not apply.
bool VectorizeByRFactor(Schedule& sch, const std::string& name, LoopRV inner, const Target& target,
                        int64_t lanes) {
  const BlockRealizeNode* realize = sch.Get(sch.GetBlock(name));
  const ForNode* loop = sch.Get(inner);
  int64_t extent = ConstExtent(loop);
  // Long enough that lanes-wide partial sums pay for the final reduction over them.
  if (extent < 4 * lanes || extent % lanes != 0 || IsSpatialLoop(realize, loop) ||
      LoadAccess(realize, loop) != Access::kContiguous) {
    return false;
  }
  Schedule trial = sch.Copy();
  try {
    std::vector<LoopRV> parts = trial.Split(inner, {std::monostate{}, int64_t{lanes}});
    const int ndim = static_cast<int>(realize->block->writes.at(0).buffer->shape.size());
    BlockRV rf = trial.RFactor(parts[1], /*factor_axis=*/ndim);
    std::string rf_name = trial.Get(rf)->block->name;
    ParallelizeVectorize(trial, rf_name, target);
  } catch (const ScheduleError&) {
    return false;
  }
  sch = std::move(trial);
  // The final reduction over the partial sums: parallel, and scalar (its last spatial iterator
  // is strided in the partial-sum buffer, and its reduction too short to factor again).
  ParallelizeVectorize(sch, name, target);
  return true;
}

// Step 1: inline every block into its consumers where ComputeInline allows (elementwise and
// injective producers such as pad); the blocks writing the outputs stay.
void InlineProducers(Schedule& sch) {
  std::vector<std::string> names;
  for (const BlockRealizeNode* r : sch.state().AllBlocks()) {
    if (sch.state().ScopeBlock(r) != nullptr) names.push_back(r->block->name);  // not the root
  }
  for (const std::string& name : names) {
    if (sch.state().FindBlock(name) == nullptr) continue;
    try {
      sch.ComputeInline(sch.GetBlock(name));
    } catch (const ScheduleError&) {
      // Not inlinable (a reduction, an output, a block read at several places): keep it.
    }
  }
}

// Step 2 for one block: parallel outer spatial loops, vectorized inner spatial loop.
void ParallelizeVectorize(Schedule& sch, const std::string& name, const Target& target) {
  BlockRV block = sch.GetBlock(name);
  std::vector<LoopRV> loops = sch.GetLoops(block);
  if (loops.empty()) return;
  const BlockRealizeNode* realize = sch.Get(block);

  // A reduction whose innermost loops reduce (conv2d, dense): move the last spatial loop inside
  // them, so that the innermost loop walks consecutive outputs (and weights) and vectorizes.
  const int64_t lanes = 16;  // float32 lanes of an AVX-512 register; LLVM splits if narrower
  int last_spatial = -1;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (IsSpatialLoop(realize, sch.Get(loops[i]))) last_spatial = static_cast<int>(i);
  }
  bool vectorize = true;
  if (last_spatial >= 0 && last_spatial + 1 < static_cast<int>(loops.size()) &&
      LoadAccess(realize, sch.Get(loops[last_spatial])) == Access::kStrided) {
    if (VectorizeByRFactor(sch, name, loops.back(), target, lanes)) return;
    vectorize = false;  // keep the order: the innermost reduction at least reads rows
  } else if (last_spatial >= 0 && last_spatial + 1 < static_cast<int>(loops.size())) {
    std::vector<LoopRV> order(loops.begin() + last_spatial + 1, loops.end());
    order.push_back(loops[last_spatial]);
    try {
      sch.Reorder(order);
      loops = sch.GetLoops(block);
      realize = sch.Get(block);
    } catch (const ScheduleError&) {
    }
  }

  // The innermost loop: vectorize by the vector width when it is spatial with a constant extent.
  const ForNode* inner = sch.Get(loops.back());
  int64_t inner_extent = ConstExtent(inner);
  if (vectorize && IsSpatialLoop(realize, inner) && inner_extent >= 4) {
    try {
      if (inner_extent > lanes && inner_extent % lanes == 0) {
        std::vector<LoopRV> parts =
            sch.Split(loops.back(), /*factors=*/{std::monostate{}, int64_t{lanes}});
        sch.Vectorize(parts[1]);
        loops.back() = parts[0];
      } else if (inner_extent <= lanes) {
        sch.Vectorize(loops.back());
        loops.pop_back();
      }
    } catch (const ScheduleError&) {
    }
  }

  // The leading spatial loops: fuse until there are several chunks per core, then parallelize.
  std::vector<LoopRV> outer;
  int64_t extent = 1;
  const int64_t wanted = static_cast<int64_t>(target.num_cores) * 4;
  for (LoopRV loop : loops) {
    const ForNode* f = sch.Get(loop);
    int64_t e = ConstExtent(f);
    if (e < 0 || !IsSpatialLoop(sch.Get(block), f) || f->for_kind != ForKind::kSerial) break;
    outer.push_back(loop);
    extent *= e;
    if (extent >= wanted) break;
  }
  if (outer.empty() || extent < 2) return;
  try {
    LoopRV fused = outer.size() == 1 ? outer[0] : sch.Fuse(outer);
    sch.Parallel(fused);
  } catch (const ScheduleError&) {
    try {
      sch.Parallel(outer[0]);
    } catch (const ScheduleError&) {
    }
  }
}

}  // namespace

Schedule DefaultSchedule(const PrimFunc& func, const Target& target) {
  Schedule sch(func);
  InlineProducers(sch);
  std::vector<std::string> names;
  for (const BlockRealizeNode* r : sch.state().AllBlocks()) {
    // Only blocks directly under the root: nested blocks already run inside their parent's loops.
    const BlockRealizeNode* scope = sch.state().ScopeBlock(r);
    if (scope != nullptr && sch.state().ScopeBlock(scope) == nullptr) {
      names.push_back(r->block->name);
    }
  }
  for (const std::string& name : names) ParallelizeVectorize(sch, name, target);
  // Constant weights stored in the order the loops read them, as a tuned schedule stores them.
  MakeRewriteLayout()->Apply(sch);
  return sch;
}

Schedule DefaultGpuSchedule(const PrimFunc& func, const Target& target) {
  GpuSpaceConfig config = GpuSpaceConfig::For(target);
  std::vector<std::shared_ptr<Postproc>> bind = {MakeRewriteUnboundBlock(config),
                                                 MakeRewriteReductionBlockGpu(),
                                                 MakeVerifyGpuCode(config)};
  SpaceGenerator inlined({MakeAutoInlineGpu()}, bind, {});
  Trace trace = inlined.GenerateDesignSpaces(func, 1).front().trace();
  if (std::optional<Schedule> sch = inlined.ReplayAndPostprocess(func, trace, 1)) return *sch;
  SpaceGenerator plain({}, bind, {});
  if (std::optional<Schedule> sch = plain.ReplayAndPostprocess(func, Trace(), 1)) return *sch;
  TT_USER_ERROR("{}: no default GPU schedule puts every statement on the GPU's threads ({})",
                func->name, plain.WhyRejected(func, Trace(), 1));
}

std::vector<Schedule> BaselineSchedules(const PrimFunc& func, const Target& target) {
  std::vector<Schedule> out;
  if (!target.is_cuda()) out.emplace_back(func);
  try {
    out.push_back(target.is_cuda() ? DefaultGpuSchedule(func, target)
                                   : DefaultSchedule(func, target));
  } catch (const UserError&) {
  }
  return out;
}

}  // namespace tirtune
