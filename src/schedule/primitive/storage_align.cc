// storage_align: asks lowering to pad a buffer's strides so that stride[axis] % factor == offset,
// which spreads the rows of a shared-memory tile over the memory banks. Nothing moves now: the
// request is recorded on the block that writes the buffer, as the annotation
//   "buffer_dim_align": "[[write_index, axis, factor, offset], ...]"
// (JSON text, one entry per buffer and axis; a later request for the same buffer and axis
// replaces the earlier one).
//
// Preconditions:
//  1. the block has a `write_index`-th write buffer, allocated by a block (a parameter's layout
//     belongs to the caller);
//  2. -ndim <= axis < ndim (a negative axis counts from the end);
//  3. factor > 0 and 0 <= offset < factor.
//
// Before:                             After StorageAlign(block "S", 0, axis=0, factor=32,
// offset=8):
//   with block("S"):                    with block("S"):
//     ...                                 ...
//     S[vi, vj] = A[vi, vj]               block_attr({"buffer_dim_align": "[[0,0,32,8]]"})
//                                         S[vi, vj] = A[vi, vj]
#include <fmt/format.h>

#include "buffer_access.h"
#include "tirtune/ir/expr.h"
#include "tirtune/schedule/schedule.h"

namespace tirtune {
namespace {

class StorageAlignAxisOutOfRangeError : public ScheduleError {
 public:
  StorageAlignAxisOutOfRangeError(const BlockRealizeNode* block, std::string buffer, int axis,
                                  int ndim)
      : block_(block), buffer_(std::move(buffer)), axis_(axis), ndim_(ndim) {}
  const char* Kind() const override { return "StorageAlignAxisOutOfRangeError"; }
  std::string ShortMessage() const override {
    return fmt::format("storage_align of axis {} of buffer '{}', which has {} dimension(s)", axis_,
                       buffer_, ndim_);
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
  std::string buffer_;
  int axis_;
  int ndim_;
};

class StorageAlignInvalidFactorError : public ScheduleError {
 public:
  StorageAlignInvalidFactorError(const BlockRealizeNode* block, int factor, int offset)
      : block_(block), factor_(factor), offset_(offset) {}
  const char* Kind() const override { return "StorageAlignInvalidFactorError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "storage_align with factor {} and offset {}; needs factor > 0 and 0 <= offset < factor",
        factor_, offset_);
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  HeldNode<BlockRealizeNode> block_;
  int factor_;
  int offset_;
};

// The entries already requested on the block.
nlohmann::json ExistingEntries(const BlockRealizeNode* realize) {
  auto it = realize->block->annotations.find(kAnnBufferDimAlign);
  if (it == realize->block->annotations.end()) return nlohmann::json::array();
  const auto* text = it->second.as<StringImmNode>();
  nlohmann::json entries =
      text == nullptr ? nlohmann::json() : nlohmann::json::parse(text->value, nullptr, false);
  if (!entries.is_array()) {
    throw SimpleScheduleError(
        "MalformedAnnotationError",
        fmt::format("block '{}' has a '{}' annotation that is not a JSON list of "
                    "[buffer, axis, factor, offset] entries",
                    realize->block->name, kAnnBufferDimAlign),
        {realize});
  }
  return entries;
}

}  // namespace

void Schedule::StorageAlign(BlockRV block_rv, int write_index, int axis, int factor, int offset) {
  const BlockRealizeNode* realize = Get(block_rv);
  // Step 1. Check the buffer and the alignment.
  Buffer buffer = NthAccessBuffer(realize, write_index, BufferAccess::kWrite, "storage_align");
  AllocSiteOrThrow(state_, buffer, realize, "storage_align");
  int ndim = buffer->ndim();
  if (axis < -ndim || axis >= ndim) {
    throw StorageAlignAxisOutOfRangeError(realize, buffer->name, axis, ndim);
  }
  int normalized_axis = axis < 0 ? axis + ndim : axis;
  if (factor <= 0 || offset < 0 || offset >= factor) {
    throw StorageAlignInvalidFactorError(realize, factor, offset);
  }
  nlohmann::json entries = ExistingEntries(realize);
  if (check_only_) return;

  // Step 2. Add the entry, replacing one for the same buffer and axis.
  nlohmann::json entry = {write_index, normalized_axis, factor, offset};
  bool replaced = false;
  for (nlohmann::json& e : entries) {
    if (e.is_array() && e.size() == 4 && e[0] == write_index && e[1] == normalized_axis) {
      e = entry;
      replaced = true;
    }
  }
  if (!replaced) entries.push_back(entry);

  // Step 3. Rebuild the block with the annotation.
  const BlockNode* b = realize->block.get();
  Annotations annotations = b->annotations;
  annotations[kAnnBufferDimAlign] = StringImm(entries.dump());
  Block block = MakeBlock(b->name, b->iter_vars, b->reads, b->writes, b->body, b->init,
                          b->alloc_buffers, std::move(annotations));
  state_.Replace(realize, MakeBlockRealize(realize->iter_values, realize->predicate, block));
  Record("StorageAlign", {block_rv.ref()},
         {{"write_index", write_index}, {"axis", axis}, {"factor", factor}, {"offset", offset}},
         {});
}

}  // namespace tirtune
