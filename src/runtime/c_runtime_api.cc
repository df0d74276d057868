// The C functions compiled kernels call (runtime/c_runtime_api.h) and their symbol table.
#include "tirtune/runtime/c_runtime_api.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <vector>

#include "tirtune/runtime/thread_pool.h"
#include "tirtune/support/huge_pages.h"

extern "C" int32_t tirtune_parallel_for(TirtuneParallelBody body, void* closure, int64_t extent,
                                        int32_t max_tasks) {
  using namespace tirtune::runtime;
  if (CurrentParallelRuntime() == ParallelRuntime::kOpenMp) {
    return OpenMpLaunch(body, closure, extent, max_tasks, GlobalThreadPool().num_threads());
  }
  return GlobalThreadPool().Launch(body, closure, extent, max_tasks);
}

namespace {

// Heap workspaces are kept per thread for reuse: a kernel that allocates a workspace inside a
// parallel loop does so on every call, and a block of 128 KiB or more from malloc is an mmap
// whose pages fault in on every call (or not, depending on malloc's history in the process),
// which made such kernels 5-15% slower and their times depend on the process timing them.
// Every block carries a header just below the pointer handed out.
struct BlockHeader {
  void* base;        // what aligned_alloc returned
  size_t capacity;   // usable bytes from the pointer handed out
  size_t alignment;  // of the pointer handed out
};

constexpr size_t kMaxCachedBlocks = 8;
constexpr size_t kMaxCachedBytes = size_t{256} << 20;

BlockHeader* HeaderOf(void* ptr) { return static_cast<BlockHeader*>(ptr) - 1; }

void ReleaseBlock(void* ptr) { std::free(HeaderOf(ptr)->base); }

// The free blocks of one thread, most recently freed last.
class WorkspaceCache {
 public:
  ~WorkspaceCache() {
    for (void* ptr : blocks_) ReleaseBlock(ptr);
  }
  // A cached block of at least `bytes` (but not more than four times that) with `alignment`.
  void* Take(size_t bytes, size_t alignment) {
    for (size_t i = blocks_.size(); i-- > 0;) {
      BlockHeader* h = HeaderOf(blocks_[i]);
      if (h->alignment == alignment && h->capacity >= bytes && h->capacity / 4 <= bytes) {
        void* ptr = blocks_[i];
        cached_bytes_ -= h->capacity;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        return ptr;
      }
    }
    return nullptr;
  }
  void Put(void* ptr) {
    blocks_.push_back(ptr);
    cached_bytes_ += HeaderOf(ptr)->capacity;
    while (blocks_.size() > kMaxCachedBlocks || cached_bytes_ > kMaxCachedBytes) {
      cached_bytes_ -= HeaderOf(blocks_.front())->capacity;
      ReleaseBlock(blocks_.front());
      blocks_.erase(blocks_.begin());
    }
  }

 private:
  std::vector<void*> blocks_;
  size_t cached_bytes_ = 0;
};

thread_local WorkspaceCache workspace_cache;

}  // namespace

extern "C" void* tirtune_workspace_alloc(int64_t nbytes, int64_t alignment) {
  if (nbytes < 0 || alignment <= 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  // The header sits in the first `align` bytes of the block, below the pointer handed out.
  size_t align = std::max(static_cast<size_t>(alignment), alignof(std::max_align_t));
  while (align < sizeof(BlockHeader)) align *= 2;
  size_t capacity = (std::max<size_t>(static_cast<size_t>(nbytes), 1) + align - 1) / align * align;
  if (void* cached = workspace_cache.Take(capacity, align)) return cached;
  // aligned_alloc wants a size that is a multiple of the alignment.
  void* base = std::aligned_alloc(align, align + capacity);
  if (base == nullptr) return nullptr;
  void* ptr = static_cast<char*>(base) + align;
  tirtune::AdviseHugePages(ptr, capacity);  // a large workspace, e.g. a packed matrix
  *HeaderOf(ptr) = BlockHeader{base, capacity, align};
  return ptr;
}

extern "C" void tirtune_workspace_free(void* ptr) {
  if (ptr != nullptr) workspace_cache.Put(ptr);
}

namespace tirtune::runtime {

const std::vector<RuntimeSymbol>& RuntimeSymbols() {
  static const std::vector<RuntimeSymbol> symbols = {
      {"tirtune_parallel_for", reinterpret_cast<void*>(&tirtune_parallel_for)},
      {"tirtune_workspace_alloc", reinterpret_cast<void*>(&tirtune_workspace_alloc)},
      {"tirtune_workspace_free", reinterpret_cast<void*>(&tirtune_workspace_free)},
  };
  return symbols;
}

}  // namespace tirtune::runtime
