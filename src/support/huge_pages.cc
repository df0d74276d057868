// AdviseHugePages: madvise(MADV_HUGEPAGE) over the page-aligned inside of a block.
#include "tirtune/support/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace tirtune {

void AdviseHugePages(void* p, size_t bytes) {
  if (bytes < kHugePageBytes) return;
  constexpr uintptr_t kPage = 4096;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace tirtune
