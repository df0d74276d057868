// Buffer construction and regions.
#include "tirtune/ir/buffer.h"

#include "tirtune/support/error.h"

namespace tirtune {

const char* StorageScopeName(StorageScope s) {
  switch (s) {
    case StorageScope::kGlobal:
      return "global";
    case StorageScope::kShared:
      return "shared";
    case StorageScope::kLocal:
      return "local";
  }
  return "?";
}

bool StorageScopeFromName(const std::string& name, StorageScope* out) {
  for (StorageScope s : {StorageScope::kGlobal, StorageScope::kShared, StorageScope::kLocal}) {
    if (name == StorageScopeName(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

Buffer::Buffer(std::string name, DataType dtype, std::vector<Expr> shape, StorageScope scope) {
  TT_ICHECK(dtype.is_scalar(), "buffer element type {} is a vector", dtype.str());
  for (const Expr& e : shape) {
    TT_ICHECK(e.defined() && e.dtype().is_int(), "buffer {} has a non-integer extent", name);
  }
  auto n = MakeObject<BufferNode>();
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->scope = scope;
  data_ = ObjectPtr<const Object>(n);
}

namespace {
ObjectPtr<BufferNode> CopyNode(const BufferNode* b) {
  auto n = MakeObject<BufferNode>();
  n->name = b->name;
  n->dtype = b->dtype;
  n->shape = b->shape;
  n->strides = b->strides;
  n->scope = b->scope;
  n->align = b->align;
  return n;
}
}  // namespace

Buffer Buffer::WithName(const std::string& name) const {
  auto n = CopyNode(get());
  n->name = name;
  return Buffer(ObjectPtr<const BufferNode>(n));
}

Buffer Buffer::WithScope(StorageScope scope) const {
  auto n = CopyNode(get());
  n->scope = scope;
  return Buffer(ObjectPtr<const BufferNode>(n));
}

Buffer Buffer::WithShape(std::vector<Expr> shape) const {
  auto n = CopyNode(get());
  n->shape = std::move(shape);
  n->strides.clear();
  return Buffer(ObjectPtr<const BufferNode>(n));
}

Buffer Buffer::WithStrides(std::vector<Expr> strides) const {
  auto n = CopyNode(get());
  TT_ICHECK(strides.empty() || strides.size() == n->shape.size(), "strides rank mismatch");
  n->strides = std::move(strides);
  return Buffer(ObjectPtr<const BufferNode>(n));
}

int64_t Buffer::ConstNumElements() const {
  int64_t n = 1;
  for (const Expr& e : get()->shape) {
    const int64_t* v = AsConstInt(e);
    TT_ICHECK(v != nullptr, "buffer {} has a symbolic shape", get()->name);
    n *= *v;
  }
  return n;
}

Expr MakeBufferLoad(Buffer buffer, std::vector<Expr> indices) {
  TT_ICHECK(static_cast<int>(indices.size()) == buffer->ndim(),
            "load of {} with {} indices, buffer has rank {}", buffer->name, indices.size(),
            buffer->ndim());
  int lanes = 1;
  for (const Expr& i : indices) {
    TT_ICHECK(i.defined() && i.dtype().is_int(), "load of {} with a non-integer index",
              buffer->name);
    lanes = std::max(lanes, i.dtype().lanes());
  }
  DataType t = buffer->dtype.with_lanes(lanes);
  return Expr(ObjectPtr<const ExprNode>(
      MakeObject<BufferLoadNode>(t, std::move(buffer), std::move(indices))));
}

BufferRegion BufferRegion::Full(const Buffer& buffer) {
  BufferRegion r{buffer, {}};
  for (const Expr& e : buffer->shape) r.region.push_back(Range{Expr(0), e});
  return r;
}

BufferRegion BufferRegion::Point(const Buffer& buffer, const std::vector<Expr>& indices) {
  BufferRegion r{buffer, {}};
  for (const Expr& i : indices) r.region.push_back(Range{i, Expr(1)});
  return r;
}

}  // namespace tirtune
