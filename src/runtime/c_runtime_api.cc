// The C functions compiled kernels call (runtime/c_runtime_api.h) and their symbol table.
#include "tirtune/runtime/c_runtime_api.h"

#include <algorithm>
#include <cstdlib>

#include "tirtune/runtime/thread_pool.h"

extern "C" int32_t tirtune_parallel_for(TirtuneParallelBody body, void* closure, int64_t extent,
                                        int32_t max_tasks) {
  return tirtune::runtime::GlobalThreadPool().Launch(body, closure, extent, max_tasks);
}

extern "C" void* tirtune_workspace_alloc(int64_t nbytes, int64_t alignment) {
  if (nbytes < 0 || alignment <= 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment < static_cast<int64_t>(sizeof(void*))) alignment = sizeof(void*);
  // aligned_alloc wants a non-zero size that is a multiple of the alignment.
  int64_t padded = (std::max<int64_t>(nbytes, 1) + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(static_cast<size_t>(alignment), static_cast<size_t>(padded));
}

extern "C" void tirtune_workspace_free(void* ptr) { std::free(ptr); }

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
