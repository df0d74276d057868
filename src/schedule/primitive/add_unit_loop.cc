// add_unit_loop: wraps a block realize, or a loop, in a new serial loop of extent 1. The loop
// gives later primitives (compute_at, split, bind) a handle where the nest had none, e.g. above a
// block that has no loops of its own.
//
// Preconditions:
//  1. a block must not be the root block (the function body has no enclosing scope to hold the
//     new loop).
//
// Before:                     After AddUnitLoop(block "B"):
//   for i in range(8):           for i in range(8):
//     with block("B"):             for u in range(1):
//       ...                          with block("B"):
//                                      ...
#include <fmt/format.h>

#include "tirtune/ir/op.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

class RootBlockUnitLoopError : public ScheduleError {
 public:
  explicit RootBlockUnitLoopError(const BlockRealizeNode* block) : block_(block) {}
  const char* Kind() const override { return "RootBlockUnitLoopError"; }
  std::string ShortMessage() const override {
    return fmt::format("cannot add a unit loop above block '{}': it is the root block",
                       block_->block->name);
  }
  std::string Explanation() const override {
    return ShortMessage() + ". A loop must sit inside a block; add it above a child block instead";
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
};

// The new loop `for u in range(1)` around `body`.
Stmt UnitLoopAround(const Var& u, Stmt body) {
  return MakeFor(u, IntImm(u.dtype(), 0), IntImm(u.dtype(), 1), ForKind::kSerial, std::move(body));
}

}  // namespace

LoopRV Schedule::AddUnitLoop(BlockRV block_rv) {
  const BlockRealizeNode* realize = Get(block_rv);
  if (state_.ScopeBlock(realize) == nullptr) throw RootBlockUnitLoopError(realize);
  if (check_only_) return LoopRV{kPlaceholderRVId};
  Var u = state_.FreshLoopVar("u", DataType::Index());
  state_.Replace(realize, UnitLoopAround(u, GetStmtRef(realize)));
  LoopRV out = NewLoopRV(u.get());
  Record("AddUnitLoop", {block_rv.ref()}, nlohmann::json::object(), {out.ref()});
  return out;
}

LoopRV Schedule::AddUnitLoop(LoopRV loop_rv) {
  const ForNode* loop = Get(loop_rv);
  if (check_only_) return LoopRV{kPlaceholderRVId};
  // The new loop takes the wrapped loop's type so that index arithmetic stays in one type.
  Var u = state_.FreshLoopVar("u", loop->loop_var.dtype());
  state_.Replace(loop, UnitLoopAround(u, GetStmtRef(loop)));
  LoopRV out = NewLoopRV(u.get());
  Record("AddUnitLoop", {loop_rv.ref()}, nlohmann::json::object(), {out.ref()});
  return out;
}

}  // namespace tirtune
