// The interpreter's executable form. Before running, a PrimFunc is translated once into a tree of
// ExprCode / StmtCode objects in which variables are resolved to fixed value slots and buffers to
// BufferSlots, so the hot path does no map lookups and no per-element allocation: every
// expression node owns a small result area and writes its lanes there.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tirtune/ir/buffer.h"
#include "tirtune/ir/expr.h"
#include "tirtune/support/ndarray.h"
#include "value.h"

namespace tirtune::interp {

/// Hands out zeroed runs of Scalars whose addresses never change, so codes can keep raw pointers
/// to their result areas and to variable slots.
class ScalarArena {
 public:
  Scalar* Allocate(int lanes);

 private:
  static constexpr size_t kBlockSize = 1024;
  std::vector<std::unique_ptr<Scalar[]>> blocks_;
  std::vector<std::unique_ptr<Scalar[]>> wide_;  // runs longer than a block
  size_t used_ = kBlockSize;  // in the last block; full until the first block exists
};

class StmtCode;
struct Machine;

/// What `sync_threads()` does. Only the GPU executor gives a machine one: it suspends the thread
/// until every thread of its block has arrived.
class BarrierHandler {
 public:
  virtual ~BarrierHandler() = default;
  /// `barrier` numbers the barrier arrived at in the order the program was translated, so that
  /// the programs of different threads name the same barrier by the same number.
  virtual void Arrive(int barrier, Machine& m) = 0;
  /// warp_shuffle_xor number `shuffle` (numbered like barriers): suspends the thread until every
  /// thread of its warp has reached the same shuffle, then returns the `value` of the thread whose
  /// lane is this one's lane xor `lane_mask`.
  virtual Scalar Shuffle(int shuffle, Scalar value, int64_t lane_mask, Machine& m) = 0;
};

/// Watches the accesses of one buffer (the GPU executor's race detection on shared memory).
class AccessObserver {
 public:
  virtual ~AccessObserver() = default;
  /// `offset` is the element accessed (one call per lane).
  virtual void OnLoad(int64_t offset, Machine& m) = 0;
  virtual void OnStore(int64_t offset, Machine& m) = 0;
};

/// State shared by all codes during a run: what error messages need, and the GPU executor's
/// barrier handler.
struct Machine {
  /// Name of the innermost running block (null outside blocks).
  const std::string* block = nullptr;
  /// Null outside the GPU executor, where a barrier is an error.
  BarrierHandler* barrier = nullptr;
  /// " (in block "NAME")", or "" outside blocks.
  std::string Where() const;
};

class ExprCode;

/// Runtime view of one buffer: where its elements are and how indices map to them.
struct BufferSlot {
  const BufferNode* ir = nullptr;
  ElemKind kind = ElemKind::kF32;
  /// Null outside the buffer's allocation (or before its argument is bound).
  void* data = nullptr;
  /// Number of elements addressable at `data`.
  int64_t capacity = 0;
  std::vector<int64_t> shape;
  /// In elements; row-major compact unless the buffer declares strides.
  std::vector<int64_t> strides;
  /// For allocated buffers: the extents and strides to evaluate at allocation time (empty
  /// strides: compact), and whether they are constants already folded into shape/strides.
  std::vector<const ExprCode*> shape_code;
  std::vector<const ExprCode*> stride_code;
  bool constant_layout = false;
  /// Owns the storage of an allocated buffer while it is live.
  NDArray storage;
  /// Told of every access when set (null: nobody watches).
  AccessObserver* observer = nullptr;
};

/// A compiled expression. After Eval(), `result` holds `lanes` Scalars of type `dtype`. The
/// fields are public and constant: the hot path reads them directly, which matters in Debug builds
/// where accessors are real calls.
class ExprCode {
 public:
  ExprCode(DataType dtype, Scalar* result) : dtype(dtype), lanes(dtype.lanes()), result(result) {}
  virtual ~ExprCode() = default;
  ExprCode(const ExprCode&) = delete;
  ExprCode& operator=(const ExprCode&) = delete;

  /// Computes the value into `result`. Immediates and variables keep their value in place, so
  /// the default does nothing.
  virtual void Eval(Machine& /*m*/) const {}

  const DataType dtype;
  const int lanes;
  Scalar* const result;
};

/// A compiled statement.
class StmtCode {
 public:
  virtual ~StmtCode() = default;
  virtual void Exec(Machine& m) const = 0;
};

using ExprCodePtr = std::unique_ptr<ExprCode>;
using StmtCodePtr = std::unique_ptr<StmtCode>;

// ---- Expression codes (arith_code.cc, expr_code.cc, buffer_code.cc). ----

/// Add ... Or: `kind` is a binary node kind; a and b have the same dtype.
ExprCodePtr MakeBinaryCode(NodeKind kind, DataType dtype, const ExprCode* a, const ExprCode* b,
                           ScalarArena* arena);
ExprCodePtr MakeNotCode(const ExprCode* a, ScalarArena* arena);
ExprCodePtr MakeSelectCode(const ExprCode* cond, const ExprCode* t, const ExprCode* f,
                           ScalarArena* arena);
ExprCodePtr MakeCastCode(DataType to, const ExprCode* value, ScalarArena* arena);
ExprCodePtr MakeCallCode(Intrinsic op, DataType dtype, std::vector<const ExprCode*> args,
                         ScalarArena* arena);
/// warp_shuffle_xor(value, lane_mask) number `id`: the machine's barrier handler exchanges the
/// value within the warp; InterpError without one.
ExprCodePtr MakeShuffleCode(int id, const ExprCode* value, int64_t lane_mask, ScalarArena* arena);
ExprCodePtr MakeRampCode(const ExprCode* base, const ExprCode* stride, int lanes,
                         ScalarArena* arena);
ExprCodePtr MakeBroadcastCode(const ExprCode* value, int lanes, ScalarArena* arena);
/// `let` binds `slot` (the variable's lanes) to value, then evaluates body.
ExprCodePtr MakeLetCode(Scalar* slot, const ExprCode* value, const ExprCode* body);
/// An immediate or a variable: the value already sits at `where`.
ExprCodePtr MakeInPlaceCode(DataType dtype, Scalar* where);
ExprCodePtr MakeLoadCode(DataType dtype, BufferSlot* buffer, std::vector<const ExprCode*> indices,
                         ScalarArena* arena);

// ---- Statement codes (buffer_code.cc, stmt_code.cc, block_code.cc). ----

StmtCodePtr MakeStoreCode(BufferSlot* buffer, const ExprCode* value,
                          std::vector<const ExprCode*> indices);
/// Gives `buffer` fresh zeroed storage while `body` runs.
StmtCodePtr MakeAllocateCode(BufferSlot* buffer, const StmtCode* body);
StmtCodePtr MakeSeqCode(std::vector<const StmtCode*> seq);
StmtCodePtr MakeForCode(Scalar* loop_var, const ExprCode* min, const ExprCode* extent,
                        const StmtCode* body);
StmtCodePtr MakeIfCode(const ExprCode* cond, const StmtCode* then_case, const StmtCode* else_case);
StmtCodePtr MakeEvaluateCode(const ExprCode* value);
StmtCodePtr MakeLetStmtCode(Scalar* slot, const ExprCode* value, const StmtCode* body);
/// `sync_threads()` number `id`: calls the machine's barrier handler; InterpError without one.
StmtCodePtr MakeBarrierCode(int id);

/// One block iterator of a BlockRealize.
struct IterCode {
  const VarNode* var = nullptr;
  Scalar* slot = nullptr;
  const ExprCode* binding = nullptr;
  const ExprCode* dom_min = nullptr;
  const ExprCode* dom_extent = nullptr;
  bool is_reduce = false;
  /// When the domain is constant (the usual case) it is checked without evaluating dom_*.
  bool constant_domain = false;
  int64_t dom_lo = 0;
  int64_t dom_size = 0;
};

/// A block instance: bindings and predicate are evaluated in the enclosing scope; when the
/// predicate holds, the iterators are checked against their domains and bound, the block's
/// buffers allocated, `init` run when every reduce iterator is at its domain min, then `body`.
/// A bare Block is a realize without iterators whose predicate is null (always true).
struct BlockRealizeParts {
  const std::string* name = nullptr;
  std::vector<IterCode> iters;
  const ExprCode* predicate = nullptr;
  std::vector<BufferSlot*> alloc_buffers;
  const StmtCode* init = nullptr;
  const StmtCode* body = nullptr;
};
StmtCodePtr MakeBlockRealizeCode(BlockRealizeParts parts);

// ---- Buffer storage (buffer_code.cc). ----

/// Allocates zeroed storage for `buffer` (evaluating a symbolic shape first); throws when the
/// buffer is already live.
void AllocateBuffer(BufferSlot* buffer, Machine& m);
void ReleaseBuffer(BufferSlot* buffer);
/// Elements needed to address every index of `shape` through `strides`.
int64_t RequiredCapacity(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);
/// Row-major compact strides of `shape`.
std::vector<int64_t> CompactStrides(const std::vector<int64_t>& shape);

}  // namespace tirtune::interp
