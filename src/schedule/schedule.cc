// Schedule: random-variable tables, instruction recording, check-only mode (CanApply), and the
// lookup primitives (get_block, get_loops, get_child_blocks, enter_postproc). The transforming
// primitives live in src/schedule/primitive/, one file each.
#include "tirtune/schedule/schedule.h"

#include <fmt/format.h>

namespace tirtune {

Schedule::Schedule(PrimFunc func, uint64_t seed) : state_(std::move(func)), rng_(seed) {}

namespace {
void CheckNotPlaceholder(int64_t id) {
  TT_ICHECK(id != kPlaceholderRVId,
            "a placeholder random variable, returned by a primitive in check-only mode "
            "(Schedule::CanApply), was used");
}
}  // namespace

bool Schedule::CanApply(const std::function<void(Schedule&)>& step) {
  // What the step may touch even in check-only mode: lookups and sampling create random
  // variables and draw from the engine. Nesting (SampleComputeLocation inside a step) is fine.
  const bool was_check_only = check_only_;
  const RandomEngine rng = rng_;
  const int64_t first_new_rv = next_rv_id_;
  const PrimFunc func_before = func();
  const size_t trace_size = trace_.insts().size();
  auto restore = [&] {
    check_only_ = was_check_only;
    rng_ = rng;
    for (int64_t id = first_new_rv; id < next_rv_id_; ++id) {
      block_rvs_.erase(id);
      loop_rvs_.erase(id);
      expr_rvs_.erase(id);
      location_rvs_.erase(id);
    }
    next_rv_id_ = first_new_rv;
  };
  check_only_ = true;
  bool applies = true;
  try {
    step(*this);
  } catch (const ScheduleError&) {
    applies = false;
  } catch (...) {
    restore();
    throw;
  }
  restore();
  TT_ICHECK(func().same_as(func_before) && trace_.insts().size() == trace_size,
            "a primitive changed the schedule in check-only mode");
  return applies;
}

const BlockRealizeNode* Schedule::Get(BlockRV block) const {
  CheckNotPlaceholder(block.id);
  auto it = block_rvs_.find(block.id);
  TT_ICHECK(it != block_rvs_.end(), "block random variable {} does not belong to this schedule",
            block.id);
  const BlockRealizeNode* realize = state_.FindBlock(it->second);
  if (realize == nullptr) {
    throw SimpleScheduleError("BlockNotFoundError",
                              fmt::format("block '{}' no longer exists", it->second));
  }
  return realize;
}

const ForNode* Schedule::Get(LoopRV loop) const {
  CheckNotPlaceholder(loop.id);
  if (LocationOf(loop) != 0) {
    throw SimpleScheduleError("NotALoopError", LocationOf(loop) == -1
                                                   ? "the root location is not a loop"
                                                   : "the inline location is not a loop");
  }
  auto it = loop_rvs_.find(loop.id);
  TT_ICHECK(it != loop_rvs_.end(), "loop random variable {} does not belong to this schedule",
            loop.id);
  const ForNode* node = state_.FindLoop(it->second.get());
  if (node == nullptr) {
    throw SimpleScheduleError(
        "LoopNotFoundError",
        fmt::format("loop '{}' no longer exists (it was fused, split or moved away)",
                    it->second->name));
  }
  return node;
}

int64_t Schedule::Get(ExprRV expr) const {
  CheckNotPlaceholder(expr.id);
  auto it = expr_rvs_.find(expr.id);
  TT_ICHECK(it != expr_rvs_.end(), "expr random variable {} does not belong to this schedule",
            expr.id);
  return it->second;
}

const std::string& Schedule::BlockName(BlockRV block) const {
  auto it = block_rvs_.find(block.id);
  TT_ICHECK(it != block_rvs_.end(), "unknown block random variable {}", block.id);
  return it->second;
}

BlockRV Schedule::NewBlockRV(const std::string& name) {
  BlockRV rv{next_rv_id_++};
  block_rvs_[rv.id] = name;
  return rv;
}

LoopRV Schedule::NewLoopRV(const VarNode* loop_var) {
  LoopRV rv{next_rv_id_++};
  loop_rvs_[rv.id] = Var(ObjectPtr<const VarNode>(loop_var));
  return rv;
}

LoopRV Schedule::NewLocationRV(int64_t location) {
  TT_ICHECK(location == -1 || location == -2, "location {}", location);
  LoopRV rv{next_rv_id_++};
  location_rvs_[rv.id] = location;
  return rv;
}

int64_t Schedule::LocationOf(LoopRV loop) const {
  if (loop.is_root()) return -1;
  if (loop.is_inline()) return -2;
  auto it = location_rvs_.find(loop.id);
  return it == location_rvs_.end() ? 0 : it->second;
}

ExprRV Schedule::NewExprRV(int64_t value) {
  ExprRV rv{next_rv_id_++};
  expr_rvs_[rv.id] = value;
  return rv;
}

void Schedule::Record(const char* kind, std::vector<InstInput> inputs, nlohmann::json attrs,
                      std::vector<RVRef> outputs, nlohmann::json decision) {
  if (check_only_) return;
  const InstructionKind* k = FindInstructionKind(kind);
  TT_ICHECK(k != nullptr, "instruction kind {} is not registered", kind);
  trace_.Append(
      Instruction{k, std::move(inputs), std::move(attrs), std::move(outputs), std::move(decision)});
}

BlockRV Schedule::GetBlock(const std::string& name) {
  if (state_.FindBlock(name) == nullptr) {
    std::string names;
    for (const BlockRealizeNode* b : state_.AllBlocks()) {
      names += (names.empty() ? "" : ", ") + b->block->name;
    }
    throw SimpleScheduleError("BlockNotFoundError",
                              fmt::format("no block named '{}' (blocks: {})", name, names));
  }
  BlockRV rv = NewBlockRV(name);
  Record("GetBlock", {}, {{"name", name}}, {rv.ref()});
  return rv;
}

std::vector<LoopRV> Schedule::GetLoops(BlockRV block) {
  const BlockRealizeNode* realize = Get(block);
  std::vector<LoopRV> loops;
  std::vector<RVRef> outputs;
  for (const ForNode* loop : state_.LoopsAbove(realize)) {
    loops.push_back(NewLoopRV(loop->loop_var.get()));
    outputs.push_back(loops.back().ref());
  }
  Record("GetLoops", {block.ref()}, nlohmann::json::object(), outputs);
  return loops;
}

namespace {
std::vector<BlockRV> ChildBlockRVs(Schedule* sch, const StmtNode* scope,
                                   std::vector<RVRef>* outputs) {
  std::vector<BlockRV> blocks;
  for (const BlockRealizeNode* b : sch->state().ChildBlocks(scope)) {
    blocks.push_back(sch->NewBlockRV(b->block->name));
    outputs->push_back(blocks.back().ref());
  }
  return blocks;
}
}  // namespace

std::vector<BlockRV> Schedule::GetChildBlocks(BlockRV block) {
  std::vector<RVRef> outputs;
  std::vector<BlockRV> blocks = ChildBlockRVs(this, Get(block), &outputs);
  Record("GetChildBlocks", {block.ref()}, nlohmann::json::object(), outputs);
  return blocks;
}

std::vector<BlockRV> Schedule::GetChildBlocks(LoopRV loop) {
  std::vector<RVRef> outputs;
  std::vector<BlockRV> blocks = ChildBlockRVs(this, Get(loop), &outputs);
  Record("GetChildBlocks", {loop.ref()}, nlohmann::json::object(), outputs);
  return blocks;
}

void Schedule::EnterPostproc() { Record("EnterPostproc", {}, nlohmann::json::object(), {}); }

}  // namespace tirtune
