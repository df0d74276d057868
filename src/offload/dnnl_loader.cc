// DnnlBackend: the oneDNN backend lives in a module of its own (libtirtune_dnnl.so, built from
// src/offload/dnnl/ and linked to libdnnl), loaded on first use. Without oneDNN (the library not
// installed, or the module not shipped, as in the GPU-host bundle) tirtune still runs: the
// backend is unavailable, and whatever needs it says why. The module takes the tirtune code it
// calls (graph, support) from the program that loads it, which exports its symbols.
//
// Where the module is looked for: $TIRTUNE_DNNL_MODULE when set; else the one this build made;
// else libtirtune_dnnl.so next to the running program.
//
// A program links only the objects of tirtune's static libraries it calls itself; the module's
// calls into tirtune (`nm -uC libtirtune_dnnl.so | grep tirtune`) must be among them, or dlopen
// names the missing symbol. kModuleNeeds below takes the address of those a program that loads
// the backend might not call on its own (the pattern builders: tirtune-runner only builds
// kernels; the composite body reader, which tirtune's own backends share), so every program
// linking this file has them.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "composite_body.h"
#include "tirtune/graph/pattern.h"
#include "tirtune/offload/library.h"

#ifndef TIRTUNE_DNNL_MODULE_PATH
#define TIRTUNE_DNNL_MODULE_PATH ""
#endif

namespace tirtune::offload {
namespace {

using graph::Pattern;
[[gnu::used]] const void* const kModuleNeeds[] = {
    reinterpret_cast<const void*>(&graph::Wildcard),
    reinterpret_cast<const void*>(&graph::IsConstant),
    reinterpret_cast<const void*>(&graph::MatchedSubgraph),
    reinterpret_cast<const void*>(
        static_cast<Pattern (*)(const std::string&, std::vector<Pattern>)>(&graph::IsOp)),
    reinterpret_cast<const void*>(
        static_cast<Pattern (*)(const Pattern&, const Pattern&)>(&graph::operator|)),
    reinterpret_cast<const void*>(&body::ReadBody),
    reinterpret_cast<const void*>(&body::Decline),
    reinterpret_cast<const void*>(&body::Reshaped),
    reinterpret_cast<const void*>(&body::RowMajorStrides),
    reinterpret_cast<const void*>(&body::ViewedOperand),
    reinterpret_cast<const void*>(&body::ViewOrRowMajor),
    reinterpret_cast<const void*>(&body::CheckByBuilding),
};

struct LoadedBackend {
  const LibraryBackend* backend = nullptr;
  std::string error;  // why backend is null
};

std::vector<std::string> ModuleCandidates() {
  if (const char* given = std::getenv("TIRTUNE_DNNL_MODULE"); given != nullptr) return {given};
  std::vector<std::string> paths;
  if (std::string built = TIRTUNE_DNNL_MODULE_PATH; !built.empty()) paths.push_back(built);
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) paths.push_back((self.parent_path() / "libtirtune_dnnl.so").string());
  return paths;
}

LoadedBackend Load() {
  std::vector<std::string> errors;
  for (const std::string& path : ModuleCandidates()) {
    if (!std::filesystem::exists(path)) {
      errors.push_back(fmt::format("{}: no such file", path));
      continue;
    }
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (module == nullptr) {
      const char* why = dlerror();
      errors.push_back(why != nullptr ? why : path + ": cannot be loaded");
      continue;
    }
    using Entry = const LibraryBackend* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(module, "tirtune_dnnl_backend"));
    if (entry == nullptr) {
      errors.push_back(fmt::format("{}: no entry point tirtune_dnnl_backend", path));
      continue;
    }
    return {entry(), ""};
  }
  std::string error = "oneDNN could not be loaded";
  for (size_t i = 0; i < errors.size(); ++i) error += (i == 0 ? " (" : "; ") + errors[i];
  return {nullptr, errors.empty() ? error : error + ")"};
}

const LoadedBackend& Loaded() {
  static const LoadedBackend loaded = Load();
  return loaded;
}

}  // namespace

const LibraryBackend* DnnlBackend() { return Loaded().backend; }

std::string BackendUnavailable(const std::string& name) {
  if (name == "dnnl") {
    return Loaded().backend != nullptr ? "" : Loaded().error;
  }
  // Planning needs nothing of CUDA; running loads cuBLASLt or cuDNN.
  if (name == "cublas" || name == "cudnn") return "";
  return fmt::format("no library backend '{}'", name);
}

}  // namespace tirtune::offload
