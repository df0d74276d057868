// Buffers (typed, shaped, scoped memory) and the expressions and regions that refer to them.
#pragma once

#include <string>
#include <vector>

#include "tirtune/ir/expr.h"

namespace tirtune {

/// Where a buffer lives. `global` is ordinary memory; `shared` and `local` are the GPU scopes
/// (on the CPU `local` means a small stack-allocated scratch buffer).
enum class StorageScope : uint8_t { kGlobal, kShared, kLocal };
const char* StorageScopeName(StorageScope s);
bool StorageScopeFromName(const std::string& name, StorageScope* out);

/// A multi-dimensional array. Identity is the node itself; `name` is a hint for printing.
/// Empty `strides` means compact row-major.
class BufferNode : public Object {
 public:
  std::string name;
  DataType dtype;
  std::vector<Expr> shape;
  std::vector<Expr> strides;
  StorageScope scope = StorageScope::kGlobal;
  /// Alignment of the first element in bytes.
  int64_t align = 64;

  BufferNode() : Object(kKind) {}
  static constexpr NodeKind kKind = NodeKind::kBuffer;
  static bool IsKind(NodeKind k) { return k == kKind; }
  int ndim() const { return static_cast<int>(shape.size()); }
};

/// Handle to a buffer.
class Buffer : public ObjectRef {
 public:
  Buffer() = default;
  explicit Buffer(ObjectPtr<const BufferNode> p) : ObjectRef(std::move(p)) {}
  /// A new compact buffer.
  Buffer(std::string name, DataType dtype, std::vector<Expr> shape,
         StorageScope scope = StorageScope::kGlobal);
  const BufferNode* get() const { return static_cast<const BufferNode*>(ObjectRef::get()); }
  const BufferNode* operator->() const { return get(); }

  /// A fresh buffer with the same fields and a new identity; `name` replaces the name when given.
  Buffer WithName(const std::string& name) const;
  Buffer WithScope(StorageScope scope) const;
  Buffer WithShape(std::vector<Expr> shape) const;
  Buffer WithStrides(std::vector<Expr> strides) const;
  /// Number of elements (product of the shape); the buffer's shape must be constant.
  int64_t ConstNumElements() const;
};

/// A read of one element (or a vector, with a Ramp index) of a buffer.
class BufferLoadNode : public ExprNode {
 public:
  Buffer buffer;
  std::vector<Expr> indices;
  BufferLoadNode(DataType t, Buffer b, std::vector<Expr> idx)
      : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(idx)) {}
  static constexpr NodeKind kKind = NodeKind::kBufferLoad;
  static bool IsKind(NodeKind k) { return k == kKind; }
};

/// A load of `buffer[indices]`; the type is the buffer's element type, widened by a vector index.
Expr MakeBufferLoad(Buffer buffer, std::vector<Expr> indices);

/// A half-open range [min, min + extent).
struct Range {
  Expr min;
  Expr extent;
  static Range FromMinExtent(Expr min, Expr extent) { return {std::move(min), std::move(extent)}; }
};

/// A rectangular region of a buffer, one range per dimension.
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
  /// The region covering the whole buffer.
  static BufferRegion Full(const Buffer& buffer);
  /// The single element at `indices`.
  static BufferRegion Point(const Buffer& buffer, const std::vector<Expr>& indices);
};

}  // namespace tirtune
