// Loading one of the CUDA toolkit's libraries (cuBLASLt, cuDNN) with dlopen and binding the
// calls a wrapper declares by hand. Private to src/runtime/.
#pragma once

#include <dlfcn.h>
#include <fmt/format.h>

#include <initializer_list>
#include <string>

namespace tirtune::cuda::detail {

/// The first of `names` that loads, by the loader's search (LD_LIBRARY_PATH, the cache) and then
/// from /usr/local/cuda/lib64; nullptr with `error` saying "LIBRARY (NAME) not found (WHY):
/// install the CUDA toolkit or put its lib64 folder on LD_LIBRARY_PATH".
inline void* OpenCudaLibrary(const char* library, std::initializer_list<const char*> names,
                             std::string* error) {
  std::string why = "not found";
  for (const char* name : names) {
    for (const std::string& path :
         {std::string(name), "/usr/local/cuda/lib64/" + std::string(name)}) {
      if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
      if (const char* e = dlerror()) why = e;
    }
  }
  *error = fmt::format(
      "{} ({}) not found ({}): install the CUDA toolkit or put its lib64 folder on "
      "LD_LIBRARY_PATH",
      library, *names.begin(), why);
  return nullptr;
}

/// Points `*fn` at symbol `name` of `lib`; when it is missing, sets `error` (if still empty) to
/// "LIBRARY lacks NAME".
template <typename Fn>
void BindSymbol(void* lib, const char* library, const char* name, Fn* fn, std::string* error) {
  *reinterpret_cast<void**>(fn) = dlsym(lib, name);
  if (*reinterpret_cast<void**>(fn) == nullptr && error->empty()) {
    *error = fmt::format("{} lacks {}", library, name);
  }
}

}  // namespace tirtune::cuda::detail
