// Reference outputs for verification.
#include "tirtune/measure/reference.h"

#include <unordered_set>

#include "tirtune/codegen/build.h"
#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/flop_count.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/stmt.h"
#include "tirtune/lower/lower.h"

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

Reference ComputeReference(const PrimFunc& original, uint64_t seed, const Target& target,
                           const ReferenceConfig& config) {
  Reference ref;
  ref.expected = MakeRandomArgs(original, seed);
  if (EstimateFlops(original) < config.interpret_below_flops) {
    Interpret(original, ref.expected);
    ref.source = "interpreter";
  } else {
    std::unique_ptr<Kernel> kernel = JitCompile(Lower(original), target);
    if (int32_t status = kernel->Run(ref.expected); status != 0) {
      throw UserError("the unscheduled function returned status " + std::to_string(status) +
                      " while computing the reference");
    }
    ref.source = "unscheduled function, compiled";
  }
  std::vector<bool> written = WrittenParams(original);
  for (size_t i = 0; i < written.size(); ++i) {
    if (!written[i]) ref.expected[i] = NDArray();
  }
  return ref;
}

}  // namespace tirtune
