// Reference outputs for verification.
#include "tirtune/measure/reference.h"

#include <unordered_set>

#include "tirtune/codegen/build.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/flop_count.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/stmt.h"
#include "tirtune/lower/lower.h"
#include "tirtune/measure/runner_pool.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/support/error.h"

namespace tirtune {

std::vector<bool> WrittenParams(const PrimFunc& func) {
  std::unordered_set<const Object*> stored;
  PostOrderVisit(func->body, [&](const Object* node) {
    if (node->kind() == NodeKind::kBufferStore) {
      stored.insert(static_cast<const BufferStoreNode*>(node)->buffer.get());
    }
  });
  std::vector<bool> written;
  for (const Buffer& b : func->params) written.push_back(stored.count(b.get()) > 0);
  return written;
}

double LongestReduction(const PrimFunc& func) {
  double longest = 1;
  PostOrderVisit(func->body, [&](const Object* node) {
    if (node->kind() != NodeKind::kBlock) return;
    double terms = 1;
    for (const IterVar& iv : static_cast<const BlockNode*>(node)->iter_vars) {
      if (iv.kind != IterKind::kReduce) continue;
      const int64_t* extent = AsConstInt(iv.dom.extent);
      terms *= extent != nullptr ? static_cast<double>(*extent) : 1.0;
    }
    longest = std::max(longest, terms);
  });
  return longest;
}

namespace {

// The unscheduled function with the outermost loop of each nest (past loops of extent 1) run in
// parallel where the schedule allows it (every block under it uses it as a spatial iterator):
// the same arithmetic in the same order per output element, spread over the host's cores (a
// GEMM 4096³ reference, serial, takes minutes).
PrimFunc ParallelOuterLoops(const PrimFunc& original) {
  Schedule sch(original);
  std::vector<std::string> names;
  for (const BlockRealizeNode* b : sch.state().AllBlocks()) names.push_back(b->block->name);
  for (const std::string& name : names) {
    try {
      // The first loop longer than 1 (a batch of one stays outside).
      std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock(name));
      size_t outer = 0;
      while (outer + 1 < loops.size() && IsConstInt(sch.Get(loops[outer])->extent, 1)) ++outer;
      if (loops.empty() || sch.Get(loops[outer])->for_kind != ForKind::kSerial) continue;
      sch.Parallel(loops[outer]);
    } catch (const ScheduleError&) {
      // a reduction loop, or one shared with another nest: stays serial
    }
  }
  return sch.func();
}

}  // namespace

Reference ComputeReference(const PrimFunc& original, uint64_t seed, const Target& target,
                           const ReferenceConfig& config, const std::vector<ArgSpec>& args) {
  Reference ref;
  ref.expected = MakeRandomArgs(original, seed);
  FillStatedValues(args, ref.expected);
  if (EstimateFlops(original) < config.interpret_below_flops) {
    Interpret(original, ref.expected);
    ref.source = "interpreter";
  } else {
    PrimFunc lowered = Lower(ParallelOuterLoops(original));
    RunnerConfig runner;
    runner.runner_path = config.runner_path;
    runner.timeout_s = config.timeout_s;
    runner.stop = config.stop;
    RunnerPool pool(runner);
    MeasureCandidate c;
    c.object = EmitObject(lowered, target);
    c.func_name = lowered->name;
    c.target = target.str();
    c.args = args.empty() ? ArgSpecsOf(original) : args;
    c.seed = seed;
    c.return_outputs = true;
    MeasureResult r = pool.MeasureOne(c);
    if (config.stop != nullptr && config.stop->load()) {
      throw Interrupted("computing the reference was interrupted");
    }
    if (!r.ok()) {
      TT_USER_ERROR("computing the reference: the unscheduled function, compiled, failed ({}): {}",
                    MeasureStatusName(r.status), r.message);
    }
    if (r.outputs.size() != ref.expected.size()) {
      TT_USER_ERROR("computing the reference: the runner returned {} arrays for {} parameters",
                    r.outputs.size(), ref.expected.size());
    }
    ref.expected = std::move(r.outputs);
    ref.source = "unscheduled function, compiled";
  }
  std::vector<bool> written = WrittenParams(original);
  for (size_t i = 0; i < written.size(); ++i) {
    if (!written[i]) ref.expected[i] = NDArray();
  }
  return ref;
}

}  // namespace tirtune
