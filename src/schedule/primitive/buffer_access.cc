// Buffer lookups and buffer replacement for the storage primitives.
#include "buffer_access.h"

#include <fmt/format.h>

#include "tirtune/ir/functor.h"

namespace tirtune {
namespace {

class BufferIndexOutOfRangeError : public ScheduleError {
 public:
  BufferIndexOutOfRangeError(const char* primitive, const BlockRealizeNode* block, int index,
                             BufferAccess access)
      : primitive_(primitive), block_(block), index_(index), access_(access) {}
  const char* Kind() const override { return "BufferIndexOutOfRangeError"; }
  std::string ShortMessage() const override {
    const BlockNode* b = block_->block.get();
    bool read = access_ == BufferAccess::kRead;
    return fmt::format("{} of {} buffer {} of block '{}', which has {} {} buffer(s)", primitive_,
                       read ? "read" : "write", index_, b->name,
                       read ? b->reads.size() : b->writes.size(), read ? "read" : "write");
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  const char* primitive_;
  HeldNode<BlockRealizeNode> block_;
  int index_;
  BufferAccess access_;
};

class NonAllocatedBufferError : public ScheduleError {
 public:
  NonAllocatedBufferError(const char* primitive, const BlockRealizeNode* block, std::string buffer)
      : primitive_(primitive), block_(block), buffer_(std::move(buffer)) {}
  const char* Kind() const override { return "NonAllocatedBufferError"; }
  std::string ShortMessage() const override {
    return fmt::format(
        "{} of buffer '{}' written by block '{}': it is a function parameter, not "
        "a buffer allocated by a block",
        primitive_, buffer_, block_->block->name);
  }
  std::string Explanation() const override {
    return ShortMessage() +
           ". A parameter's storage belongs to the caller; cache_write it into a new buffer and "
           "change that one instead";
  }
  std::vector<const Object*> Locations() const override { return {block_}; }

 private:
  const char* primitive_;
  HeldNode<BlockRealizeNode> block_;
  std::string buffer_;
};

class BufferReplacer : public StmtMutator {
 public:
  explicit BufferReplacer(const BufferMap& map) : map_(map) {}
  Buffer VisitBuffer(const Buffer& buffer) override {
    auto it = map_.find(buffer.get());
    return it == map_.end() ? buffer : it->second;
  }

 private:
  const BufferMap& map_;
};

}  // namespace

Buffer NthAccessBuffer(const BlockRealizeNode* realize, int index, BufferAccess access,
                       const char* primitive) {
  const std::vector<BufferRegion>& regions =
      access == BufferAccess::kRead ? realize->block->reads : realize->block->writes;
  if (index < 0 || static_cast<size_t>(index) >= regions.size()) {
    throw BufferIndexOutOfRangeError(primitive, realize, index, access);
  }
  return regions[index].buffer;
}

const BlockRealizeNode* AllocSite(const ScheduleState& state, const Buffer& buffer) {
  for (const BlockRealizeNode* realize : state.AllBlocks()) {
    for (const Buffer& b : realize->block->alloc_buffers) {
      if (b.same_as(buffer)) return realize;
    }
  }
  return nullptr;
}

const BlockRealizeNode* AllocSiteOrThrow(const ScheduleState& state, const Buffer& buffer,
                                         const BlockRealizeNode* block, const char* primitive) {
  const BlockRealizeNode* site = AllocSite(state, buffer);
  if (site == nullptr) throw NonAllocatedBufferError(primitive, block, buffer->name);
  return site;
}

bool HasRegionOf(const std::vector<BufferRegion>& regions, const Buffer& buffer) {
  for (const BufferRegion& r : regions) {
    if (r.buffer.same_as(buffer)) return true;
  }
  return false;
}

Stmt ReplaceBuffers(const Stmt& stmt, const BufferMap& map) {
  BufferReplacer replacer(map);
  return replacer.VisitStmt(stmt);
}

}  // namespace tirtune
