// parallel, vectorize, unroll, bind: change how a loop executes.
//
// Preconditions (parallel, vectorize, bind):
//  1. the loop is serial (a loop is given one kind once);
//  2. every block under the loop that binds an iterator to an expression of the loop variable
//     binds only spatial iterators to it: running reduction iterations at once would race.
//     Binding to threadIdx.x/y/z is the exception: the threads then reduce together (a
//     cross-thread reduction, which GPU lowering turns into warp shuffles or shared memory,
//     LowerCrossThreadReduction in lower_gpu.h).
// unroll only needs the loop to be serial.
//
// Before:                 After Parallel(i):
//   for i in range(64):     for i in parallel(64):
#include <fmt/format.h>

#include "loop_checks.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

class WrongBlockIterTypeError : public ScheduleError {
 public:
  WrongBlockIterTypeError(const char* primitive, const ForNode* loop, const BlockRealizeNode* block,
                          std::string iter)
      : primitive_(primitive), loop_(loop), block_(block), iter_(std::move(iter)) {}
  const char* Kind() const override { return "WrongBlockIterTypeError"; }
  std::string ShortMessage() const override {
    return fmt::format("cannot {} loop '{}': block '{}' binds reduction iterator '{}' to it",
                       primitive_, loop_->loop_var->name, block_->block->name, iter_);
  }
  std::string Explanation() const override {
    return ShortMessage() +
           ". Only loops that every block under them uses for spatial iterators can run their "
           "iterations at once; split the reduction with rfactor first, or pick a spatial loop";
  }
  std::vector<const Object*> Locations() const override { return {loop_, block_}; }

 private:
  const char* primitive_;
  HeldNode<ForNode> loop_;
  HeldNode<BlockRealizeNode> block_;
  std::string iter_;
};

void CheckDataParallel(const char* primitive, const ForNode* loop) {
  const VarNode* var = loop->loop_var.get();
  auto is_var = [var](const VarNode* v) { return v == var; };
  PreOrderVisit(loop->body, [&](const Object* node) {
    if (node->kind() != NodeKind::kBlockRealize) return node->kind() >= NodeKind::kFor;
    const auto* realize = static_cast<const BlockRealizeNode*>(node);
    const BlockNode* block = realize->block.get();
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (block->iter_vars[i].kind == IterKind::kReduce &&
          UsesVar(realize->iter_values[i], is_var)) {
        throw WrongBlockIterTypeError(primitive, loop, realize, block->iter_vars[i].var->name);
      }
    }
    return false;  // the loop variable is not visible inside the block
  });
}

Stmt WithKind(const ForNode* loop, ForKind kind, std::string thread_tag = "") {
  return MakeFor(loop->loop_var, loop->min, loop->extent, kind, loop->body, std::move(thread_tag),
                 loop->annotations);
}

}  // namespace

void Schedule::Parallel(LoopRV loop_rv) {
  const ForNode* loop = Get(loop_rv);
  CheckSerial(loop, "parallelize");
  CheckDataParallel("parallelize", loop);
  if (check_only_) return;
  state_.Replace(loop, WithKind(loop, ForKind::kParallel));
  Record("Parallel", {loop_rv.ref()}, nlohmann::json::object(), {});
}

void Schedule::Vectorize(LoopRV loop_rv) {
  const ForNode* loop = Get(loop_rv);
  CheckSerial(loop, "vectorize");
  CheckDataParallel("vectorize", loop);
  if (check_only_) return;
  state_.Replace(loop, WithKind(loop, ForKind::kVectorized));
  Record("Vectorize", {loop_rv.ref()}, nlohmann::json::object(), {});
}

void Schedule::Unroll(LoopRV loop_rv) {
  const ForNode* loop = Get(loop_rv);
  CheckSerial(loop, "unroll");
  if (check_only_) return;
  state_.Replace(loop, WithKind(loop, ForKind::kUnrolled));
  Record("Unroll", {loop_rv.ref()}, nlohmann::json::object(), {});
}

void Schedule::Bind(LoopRV loop_rv, const std::string& thread_axis) {
  static const char* kAxes[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                "threadIdx.y", "threadIdx.z", "vthread.x"};
  bool known = false;
  for (const char* a : kAxes) known |= thread_axis == a;
  const ForNode* loop = Get(loop_rv);
  if (!known) {
    throw SimpleScheduleError(
        "UnknownThreadAxisError",
        fmt::format("cannot bind loop '{}' to '{}': thread axes are blockIdx.x/y/z, "
                    "threadIdx.x/y/z and vthread.x",
                    loop->loop_var->name, thread_axis),
        {loop});
  }
  CheckSerial(loop, "bind");
  if (thread_axis.rfind("threadIdx.", 0) != 0) CheckDataParallel("bind", loop);
  if (check_only_) return;
  state_.Replace(loop, WithKind(loop, ForKind::kThreadBinding, thread_axis));
  Record("Bind", {loop_rv.ref()}, {{"thread_axis", thread_axis}}, {});
}

}  // namespace tirtune
