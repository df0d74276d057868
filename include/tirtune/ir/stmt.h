// Statements of the loop-level IR: loops, blocks (the unit of scheduling), stores, sequences,
// conditionals, and the allocations that appear after lowering.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tirtune/ir/buffer.h"
#include "tirtune/ir/expr.h"

namespace tirtune {

/// Base of all statement nodes.
class StmtNode : public Object {
 public:
  static bool IsKind(NodeKind k) { return k >= NodeKind::kFor && k <= NodeKind::kBarrier; }

 protected:
  explicit StmtNode(NodeKind kind) : Object(kind) {}
};

/// Handle to a statement.
class Stmt : public ObjectRef {
 public:
  Stmt() = default;
  explicit Stmt(ObjectPtr<const StmtNode> p) : ObjectRef(std::move(p)) {}
  const StmtNode* get() const { return static_cast<const StmtNode*>(ObjectRef::get()); }
  const StmtNode* operator->() const { return get(); }
};

template <typename NodeT>
Stmt GetStmtRef(const NodeT* node) {
  return Stmt(ObjectPtr<const StmtNode>(node));
}

/// Annotations on loops and blocks, kept sorted by key so that printing is deterministic.
/// Values are immediates (int, float or string).
using Annotations = std::map<std::string, Expr>;

#define TT_STMT_KIND(Name)                             \
  static constexpr NodeKind kKind = NodeKind::k##Name; \
  static bool IsKind(NodeKind k) { return k == kKind; }

/// How a loop executes.
enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBinding };
const char* ForKindName(ForKind k);
bool ForKindFromName(const std::string& name, ForKind* out);

/// `for loop_var in [min, min + extent)`. A thread-bound loop names its thread axis
/// ("blockIdx.x", "threadIdx.x", ...) in `thread_tag`.
class ForNode : public StmtNode {
 public:
  Var loop_var;
  Expr min, extent;
  ForKind for_kind = ForKind::kSerial;
  std::string thread_tag;
  Stmt body;
  Annotations annotations;
  ForNode() : StmtNode(kKind) {}
  TT_STMT_KIND(For)
};

/// Whether a block iterator ranges over output elements or over a reduction.
enum class IterKind : uint8_t { kSpatial, kReduce };

/// A block iterator: a variable with its domain and kind.
struct IterVar {
  Var var;
  Range dom;
  IterKind kind = IterKind::kSpatial;
};

/// The block annotation storage_align writes: the requests for the strides of the buffers the
/// block writes ("[[write_index, axis, factor, offset], ...]"), which lowering applies.
inline constexpr const char* kAnnBufferDimAlign = "buffer_dim_align";

/// The unit of scheduling: a computation over iterators with declared read and write regions,
/// an optional reduction init, and buffers it allocates for its body.
class BlockNode : public StmtNode {
 public:
  std::string name;
  std::vector<IterVar> iter_vars;
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
  std::vector<Buffer> alloc_buffers;
  Stmt init;  // may be undefined
  Stmt body;
  Annotations annotations;
  BlockNode() : StmtNode(kKind) {}
  TT_STMT_KIND(Block)
};

/// Handle to a block.
class Block : public Stmt {
 public:
  Block() = default;
  explicit Block(ObjectPtr<const BlockNode> p) : Stmt(ObjectPtr<const StmtNode>(p)) {}
  const BlockNode* get() const { return static_cast<const BlockNode*>(ObjectRef::get()); }
  const BlockNode* operator->() const { return get(); }
};

/// A block instance: binds each block iterator to a value (usually an affine expression of the
/// enclosing loop variables) and runs the block when `predicate` holds.
class BlockRealizeNode : public StmtNode {
 public:
  std::vector<Expr> iter_values;
  Expr predicate;
  Block block;
  BlockRealizeNode() : StmtNode(kKind) {}
  TT_STMT_KIND(BlockRealize)
};

/// `buffer[indices] = value`.
class BufferStoreNode : public StmtNode {
 public:
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  BufferStoreNode() : StmtNode(kKind) {}
  TT_STMT_KIND(BufferStore)
};

/// Statements run in order.
class SeqStmtNode : public StmtNode {
 public:
  std::vector<Stmt> seq;
  SeqStmtNode() : StmtNode(kKind) {}
  TT_STMT_KIND(SeqStmt)
};

/// `if (condition) then_case else else_case`; `else_case` may be undefined.
class IfThenElseNode : public StmtNode {
 public:
  Expr condition;
  Stmt then_case, else_case;
  IfThenElseNode() : StmtNode(kKind) {}
  TT_STMT_KIND(IfThenElse)
};

/// Evaluates an expression for its effect (used as the empty statement: `evaluate(0)`).
class EvaluateNode : public StmtNode {
 public:
  Expr value;
  EvaluateNode() : StmtNode(kKind) {}
  TT_STMT_KIND(Evaluate)
};

/// `let var = value` in `body`.
class LetStmtNode : public StmtNode {
 public:
  Var var;
  Expr value;
  Stmt body;
  LetStmtNode() : StmtNode(kKind) {}
  TT_STMT_KIND(LetStmt)
};

/// Storage for `buffer` during `body`; produced by lowering from blocks' alloc_buffers.
class AllocateNode : public StmtNode {
 public:
  Buffer buffer;
  Stmt body;
  AllocateNode() : StmtNode(kKind) {}
  TT_STMT_KIND(Allocate)
};

/// `sync_threads()`: every thread of a GPU block waits here until all have arrived, and what any
/// of them wrote to shared memory before it is visible to all after it (CUDA's __syncthreads).
/// Only the lowered GPU form has barriers (InsertBarriers puts them there).
class BarrierNode : public StmtNode {
 public:
  BarrierNode() : StmtNode(kKind) {}
  TT_STMT_KIND(Barrier)
};

// ---- Factories. They check invariants and throw InternalError on misuse. ----

Stmt MakeFor(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body,
             std::string thread_tag = "", Annotations annotations = {});
Block MakeBlock(std::string name, std::vector<IterVar> iter_vars, std::vector<BufferRegion> reads,
                std::vector<BufferRegion> writes, Stmt body, Stmt init = Stmt(),
                std::vector<Buffer> alloc_buffers = {}, Annotations annotations = {});
Stmt MakeBlockRealize(std::vector<Expr> iter_values, Expr predicate, Block block);
Stmt MakeBufferStore(Buffer buffer, Expr value, std::vector<Expr> indices);
/// A sequence; nested sequences are flattened and a single statement is returned as is.
Stmt MakeSeq(std::vector<Stmt> seq);
Stmt MakeIfThenElse(Expr condition, Stmt then_case, Stmt else_case = Stmt());
Stmt MakeEvaluate(Expr value);
Stmt MakeLetStmt(Var var, Expr value, Stmt body);
Stmt MakeAllocate(Buffer buffer, Stmt body);
Stmt MakeBarrier();

/// Copy-and-modify helpers: each returns a new node differing only in the named field.
Stmt WithBody(const ForNode* loop, Stmt body);
Block WithBody(const BlockNode* block, Stmt body);
Block WithInit(const BlockNode* block, Stmt init);

}  // namespace tirtune
