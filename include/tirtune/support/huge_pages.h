// Transparent huge pages for large host buffers (arrays, kernel workspaces).
#pragma once

#include <cstddef>

namespace tirtune {

/// Blocks of at least this many bytes are advised onto huge pages.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

/// Advises the kernel to back the whole pages inside [p, p + bytes) with transparent huge pages
/// when the block holds at least kHugePageBytes (Debian's default THP mode, madvise, gives them
/// only on request): a kernel walking a large matrix along a column otherwise misses the TLB on
/// nearly every row. Advice only: where it is refused, nothing changes.
void AdviseHugePages(void* p, size_t bytes);

}  // namespace tirtune
