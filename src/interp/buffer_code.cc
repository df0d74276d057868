// Buffer access in the interpreter: bounds-checked loads and stores (scalar or vector), and the
// storage of buffers allocated by Allocate statements and blocks' alloc_buffers.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "code.h"
#include "tirtune/interp/interpreter.h"

namespace tirtune::interp {

std::vector<int64_t> CompactStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

int64_t RequiredCapacity(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t last = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return 0;
    last += (shape[d] - 1) * strides[d];
  }
  return last + 1;
}

namespace {

std::string Join(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ", ")); }

// The indices of one lane of an access, for messages.
std::vector<int64_t> LaneIndices(const ExprCode* const* indices, size_t ndim, int lane) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < ndim; ++d) {
    out.push_back(indices[d]->result[indices[d]->lanes == 1 ? 0 : lane].i);
  }
  return out;
}

[[noreturn]] void ThrowNotLive(const BufferSlot& b, const char* what, Machine& m) {
  throw InterpError(
      fmt::format("{} of buffer {} outside of its allocation{}", what, b.ir->name, m.Where()));
}

[[noreturn]] void ThrowOutOfBounds(const BufferSlot& b, const ExprCode* const* indices, size_t ndim,
                                   int lane, int lanes, const char* what, Machine& m) {
  std::string lane_note = lanes > 1 ? fmt::format(" (lane {} of {})", lane, lanes) : "";
  throw InterpError(fmt::format("out-of-bounds {} {}[{}]{}: {} has shape ({}){}", what, b.ir->name,
                                Join(LaneIndices(indices, ndim, lane)), lane_note, b.ir->name,
                                Join(b.shape), m.Where()));
}

// The element offset of one lane of an access, after checking every index against the shape
// (and, for strided buffers, the flat offset against the storage). Raw pointers rather than
// vector accessors keep Debug builds fast.
int64_t ElementOffset(const BufferSlot& b, const ExprCode* const* indices, size_t ndim, int lane,
                      int lanes, const char* what, Machine& m) {
  const int64_t* shape = b.shape.data();
  const int64_t* strides = b.strides.data();
  int64_t offset = 0;
  for (size_t d = 0; d < ndim; ++d) {
    const ExprCode* e = indices[d];
    int64_t i = e->result[e->lanes == 1 ? 0 : lane].i;
    if (i < 0 || i >= shape[d]) ThrowOutOfBounds(b, indices, ndim, lane, lanes, what, m);
    offset += i * strides[d];
  }
  if (offset < 0 || offset >= b.capacity) {
    throw InterpError(
        fmt::format("{} {}[{}] reaches element {} through strides ({}), but its "
                    "storage holds {} elements{}",
                    what, b.ir->name, Join(LaneIndices(indices, ndim, lane)), offset,
                    Join(b.strides), b.capacity, m.Where()));
  }
  return offset;
}

int AccessLanes(const std::vector<const ExprCode*>& indices) {
  int lanes = 1;
  for (const ExprCode* e : indices) lanes = std::max(lanes, e->lanes);
  return lanes;
}

class LoadCode final : public ExprCode {
 public:
  LoadCode(DataType dtype, BufferSlot* buffer, std::vector<const ExprCode*> indices, Scalar* result)
      : ExprCode(dtype, result), buffer_(buffer), indices_(std::move(indices)) {}
  void Eval(Machine& m) const override {
    const ExprCode* const* idx = indices_.data();
    size_t ndim = indices_.size();
    for (size_t d = 0; d < ndim; ++d) idx[d]->Eval(m);
    const BufferSlot& b = *buffer_;
    if (b.data == nullptr) ThrowNotLive(b, "load", m);
    for (int l = 0; l < lanes; ++l) {
      int64_t offset = ElementOffset(b, idx, ndim, l, lanes, "load", m);
      if (b.observer != nullptr) b.observer->OnLoad(offset, m);
      result[l] = ReadElement(b.data, b.kind, offset);
    }
  }

 private:
  BufferSlot* buffer_;
  std::vector<const ExprCode*> indices_;
};

// A scalar value stored through a vector index is written to every lane's element.
class StoreCode final : public StmtCode {
 public:
  StoreCode(BufferSlot* buffer, const ExprCode* value, std::vector<const ExprCode*> indices)
      : buffer_(buffer),
        value_(value),
        indices_(std::move(indices)),
        lanes_(AccessLanes(indices_)) {}
  void Exec(Machine& m) const override {
    value_->Eval(m);
    const ExprCode* const* idx = indices_.data();
    size_t ndim = indices_.size();
    for (size_t d = 0; d < ndim; ++d) idx[d]->Eval(m);
    BufferSlot& b = *buffer_;
    if (b.data == nullptr) ThrowNotLive(b, "store", m);
    const Scalar* v = value_->result;
    int value_step = value_->lanes == 1 ? 0 : 1;
    for (int l = 0; l < lanes_; ++l) {
      int64_t offset = ElementOffset(b, idx, ndim, l, lanes_, "store", m);
      if (b.observer != nullptr) b.observer->OnStore(offset, m);
      WriteElement(b.data, b.kind, offset, v[l * value_step]);
    }
  }

 private:
  BufferSlot* buffer_;
  const ExprCode* value_;
  std::vector<const ExprCode*> indices_;
  int lanes_;
};

class AllocateCode final : public StmtCode {
 public:
  AllocateCode(BufferSlot* buffer, const StmtCode* body) : buffer_(buffer), body_(body) {}
  void Exec(Machine& m) const override {
    AllocateBuffer(buffer_, m);
    body_->Exec(m);
    ReleaseBuffer(buffer_);
  }

 private:
  BufferSlot* buffer_;
  const StmtCode* body_;
};

}  // namespace

void AllocateBuffer(BufferSlot* b, Machine& m) {
  if (b->data != nullptr) {
    throw InterpError(
        fmt::format("buffer {} is allocated again while it is live{}", b->ir->name, m.Where()));
  }
  if (!b->constant_layout) {
    for (size_t d = 0; d < b->shape_code.size(); ++d) {
      b->shape_code[d]->Eval(m);
      b->shape[d] = b->shape_code[d]->result[0].i;
      if (b->shape[d] < 0) {
        throw InterpError(
            fmt::format("buffer {} allocated with negative extent {} in dimension "
                        "{}{}",
                        b->ir->name, b->shape[d], d, m.Where()));
      }
    }
    if (b->stride_code.empty()) {
      b->strides = CompactStrides(b->shape);
    } else {
      for (size_t d = 0; d < b->stride_code.size(); ++d) {
        b->stride_code[d]->Eval(m);
        b->strides[d] = b->stride_code[d]->result[0].i;
      }
    }
    b->capacity = RequiredCapacity(b->shape, b->strides);
  }
  b->storage = NDArray::Empty({b->capacity}, b->ir->dtype);
  b->data = b->storage.raw();
}

void ReleaseBuffer(BufferSlot* b) {
  b->data = nullptr;
  b->storage = NDArray();
}

ExprCodePtr MakeLoadCode(DataType dtype, BufferSlot* buffer, std::vector<const ExprCode*> indices,
                         ScalarArena* arena) {
  return std::make_unique<LoadCode>(dtype, buffer, std::move(indices),
                                    arena->Allocate(dtype.lanes()));
}

StmtCodePtr MakeStoreCode(BufferSlot* buffer, const ExprCode* value,
                          std::vector<const ExprCode*> indices) {
  int lanes = AccessLanes(indices);
  if (value->lanes != 1 && value->lanes != lanes) {
    throw InterpError(fmt::format("store of a {}-lane value into {} through a {}-lane index",
                                  value->lanes, buffer->ir->name, lanes));
  }
  return std::make_unique<StoreCode>(buffer, value, std::move(indices));
}

StmtCodePtr MakeAllocateCode(BufferSlot* buffer, const StmtCode* body) {
  return std::make_unique<AllocateCode>(buffer, body);
}

}  // namespace tirtune::interp
