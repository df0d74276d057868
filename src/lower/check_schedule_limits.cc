// CheckScheduleLimits: what a scheduled function may ask of the machine, checked before any pass
// runs. A hostile or absurd schedule (a trace from a file, a damaged database row, a search bug)
// would otherwise run for days, fill the memory with unrolled copies, or overflow a size into a
// small allocation that the kernel then writes past; it is refused instead, naming the limit.
//
//   iterations   every statement counted once per iteration of the loops around it (constant
//                extents; a loop of unknown extent counts once)
//   unrolling    the copies of a body that explicit unrolling makes (the product of the
//                unrolled loops around it that UnrollLoops expands), and the step count a
//                "pragma_auto_unroll_max_step" annotation asks for
//   vector lanes the extent of a vectorized loop
//   allocations  the bytes of every buffer a block allocates (constant shapes)
#include <fmt/format.h>

#include <algorithm>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/lower/lower.h"

namespace tirtune {
namespace {

// a * b, or `cap` when the product reaches it (or overflows).
int64_t MulCapped(int64_t a, int64_t b, int64_t cap) {
  int64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p) || p >= cap) return cap;
  return p;
}

class LimitChecker : public StmtVisitor {
 public:
  LimitChecker(const PrimFunc& func, const LowerOptions& options)
      : func_(func), options_(options) {}
  using StmtVisitor::VisitStmt_;

  void Run() {
    VisitStmt(func_->body);
    if (iterations_ > kMaxIterations) {
      Refuse(fmt::format("it runs more than {} statement instances (2^46) in all", kMaxIterations));
    }
  }

  void VisitStmt_(const ForNode* op) override {
    const int64_t* extent = AsConstInt(op->extent);
    int64_t n = extent != nullptr ? std::max<int64_t>(*extent, 0) : 1;
    if (op->for_kind == ForKind::kVectorized && n > kMaxVectorLanes) {
      Refuse(fmt::format("loop '{}' is vectorized over {} lanes, more than {}",
                         op->loop_var->name, n, kMaxVectorLanes));
    }
    if (auto it = op->annotations.find("pragma_auto_unroll_max_step");
        it != op->annotations.end()) {
      const int64_t* steps = AsConstInt(it->second);
      if (steps != nullptr && *steps > kMaxUnrollExpansion) {
        Refuse(fmt::format("loop '{}' asks to unroll up to {} steps, more than {}",
                           op->loop_var->name, *steps, kMaxUnrollExpansion));
      }
      // Inside explicitly unrolled loops, every copy expands again.
      if (steps != nullptr && MulCapped(copies_, *steps, kMaxUnrollExpansion + 1) >
                                  kMaxUnrollExpansion) {
        Refuse(fmt::format("loop '{}' asks to unroll up to {} steps in each of {} unrolled copies, "
                           "more than {} in all",
                           op->loop_var->name, *steps, copies_, kMaxUnrollExpansion));
      }
    }
    int64_t outer_iterations = multiplier_, outer_copies = copies_;
    multiplier_ = MulCapped(multiplier_, n, kMaxIterations + 1);
    if (op->for_kind == ForKind::kUnrolled && extent != nullptr &&
        *extent <= options_.max_explicit_unroll) {
      copies_ = MulCapped(copies_, n, kMaxUnrollExpansion + 1);
      if (copies_ > kMaxUnrollExpansion) {
        Refuse(fmt::format("unrolling loop '{}' makes more than {} copies of its body",
                           op->loop_var->name, kMaxUnrollExpansion));
      }
    }
    VisitStmt(op->body);
    multiplier_ = outer_iterations;
    copies_ = outer_copies;
  }

  void VisitStmt_(const BlockNode* op) override {
    for (const Buffer& b : op->alloc_buffers) CheckAllocation(b);
    StmtVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    CheckAllocation(op->buffer);
    StmtVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Count();
    StmtVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const EvaluateNode* op) override {
    Count();
    StmtVisitor::VisitStmt_(op);
  }

 private:
  [[noreturn]] void Refuse(const std::string& why) const {
    throw ScheduleLimitError(fmt::format("function '{}' exceeds a limit of what a schedule may ask "
                                         "for: {}",
                                         func_->name, why));
  }
  void Count() { iterations_ = std::min(kMaxIterations + 1, iterations_ + multiplier_); }
  void CheckAllocation(const Buffer& b) {
    int64_t bytes = b->dtype.bytes();
    for (const Expr& d : b->shape) {
      const int64_t* c = AsConstInt(d);
      if (c == nullptr) return;
      bytes = MulCapped(bytes, std::max<int64_t>(*c, 0), kMaxAllocationBytes + 1);
    }
    if (bytes > kMaxAllocationBytes) {
      Refuse(fmt::format("buffer '{}' would take more than {} bytes (1 TiB)", b->name,
                         kMaxAllocationBytes));
    }
  }

  const PrimFunc& func_;
  const LowerOptions& options_;
  int64_t multiplier_ = 1;  // iterations of the loops around the current statement
  int64_t copies_ = 1;      // copies explicit unrolling makes of the current statement
  int64_t iterations_ = 0;
};

}  // namespace

void CheckScheduleLimits(const PrimFunc& func, const LowerOptions& options) {
  LimitChecker(func, options).Run();
}

}  // namespace tirtune
