// Intrusive reference counting for immutable IR nodes: `Object` carries the count and a kind tag
// (no RTTI), `ObjectPtr` owns one reference, and `ObjectRef` is the base of every typed handle.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace tirtune {

/// Every node kind in the program. The IR's own kinds come from ir/node_kinds.def so that the
/// visitor, the mutator, the printer and structural equality are all driven by one list.
enum class NodeKind : uint16_t {
#define TT_NODE(Name, Base) k##Name,
#include "tirtune/ir/node_kinds.def"
#undef TT_NODE
  kCount,
};

/// Base of every reference-counted node. Nodes are immutable after construction, so the count is
/// the only mutable state and it is atomic: handles may be shared across threads.
class Object {
 public:
  explicit Object(NodeKind kind) : kind_(kind) {}
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  NodeKind kind() const { return kind_; }

  /// This node as `T` when its kind matches `T` (or one of T's sub-kinds), else null.
  template <typename T>
  const T* as() const {
    return T::IsKind(kind_) ? static_cast<const T*>(this) : nullptr;
  }

  void IncRef() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void DecRef() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int32_t use_count() const { return refs_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int32_t> refs_{0};
  NodeKind kind_;
};

/// An owning pointer to a node of type T.
template <typename T>
class ObjectPtr {
 public:
  ObjectPtr() = default;
  explicit ObjectPtr(T* p) : p_(p) {
    if (p_) p_->IncRef();
  }
  ObjectPtr(const ObjectPtr& o) : p_(o.p_) {
    if (p_) p_->IncRef();
  }
  ObjectPtr(ObjectPtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <typename U>
  ObjectPtr(const ObjectPtr<U>& o) : ObjectPtr(o.get()) {}  // NOLINT: implicit upcast
  ~ObjectPtr() {
    if (p_) p_->DecRef();
  }
  ObjectPtr& operator=(ObjectPtr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  T* p_ = nullptr;
};

template <typename T, typename... Args>
ObjectPtr<T> MakeObject(Args&&... args) {
  return ObjectPtr<T>(new T(std::forward<Args>(args)...));
}

/// Base of typed handles (`Expr`, `Stmt`, `Buffer`, ...). A handle may be null; `defined()` says.
class ObjectRef {
 public:
  ObjectRef() = default;
  explicit ObjectRef(ObjectPtr<const Object> p) : data_(std::move(p)) {}

  bool defined() const { return static_cast<bool>(data_); }
  const Object* get() const { return data_.get(); }
  bool same_as(const ObjectRef& other) const { return data_.get() == other.data_.get(); }
  NodeKind kind() const { return data_->kind(); }

  /// Returns the node as `T` when its kind matches `T` (or one of T's sub-kinds), else null.
  template <typename T>
  const T* as() const {
    if (data_ && T::IsKind(data_->kind())) return static_cast<const T*>(data_.get());
    return nullptr;
  }

 protected:
  ObjectPtr<const Object> data_;
};

struct ObjectPtrHash {
  size_t operator()(const ObjectRef& r) const { return std::hash<const void*>()(r.get()); }
};
struct ObjectPtrEqual {
  bool operator()(const ObjectRef& a, const ObjectRef& b) const { return a.same_as(b); }
};

}  // namespace tirtune
