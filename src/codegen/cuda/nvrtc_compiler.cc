// Compiling CUDA C without linking the CUDA toolkit: NVRTC (source → PTX) and nvJitLink (PTX →
// cubin, with ptxas's report) are loaded with dlopen on first use, so a tirtune binary starts on
// a host without them and only a cuda build asks for them. Their C interfaces are declared here
// (the handful of calls used), which keeps the CUDA headers out of the build as well.
#include <dlfcn.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <mutex>

#include "tirtune/codegen/cuda.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// nvrtc.h and nvJitLink.h (CUDA 12/13): results are ints, 0 meaning success; handles are opaque.
using NvrtcProgram = void*;
using NvJitLinkHandle = void*;
constexpr int kNvJitLinkInputPtx = 2;

struct CudaCompilerApi {
  int (*nvrtcCreateProgram)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                            const char* const*);
  int (*nvrtcCompileProgram)(NvrtcProgram, int, const char* const*);
  int (*nvrtcGetPTXSize)(NvrtcProgram, size_t*);
  int (*nvrtcGetPTX)(NvrtcProgram, char*);
  int (*nvrtcGetProgramLogSize)(NvrtcProgram, size_t*);
  int (*nvrtcGetProgramLog)(NvrtcProgram, char*);
  int (*nvrtcDestroyProgram)(NvrtcProgram*);
  const char* (*nvrtcGetErrorString)(int);
  int (*nvJitLinkCreate)(NvJitLinkHandle*, uint32_t, const char**);
  int (*nvJitLinkDestroy)(NvJitLinkHandle*);
  int (*nvJitLinkAddData)(NvJitLinkHandle, int, const void*, size_t, const char*);
  int (*nvJitLinkComplete)(NvJitLinkHandle);
  int (*nvJitLinkGetLinkedCubinSize)(NvJitLinkHandle, size_t*);
  int (*nvJitLinkGetLinkedCubin)(NvJitLinkHandle, void*);
  int (*nvJitLinkGetErrorLogSize)(NvJitLinkHandle, size_t*);
  int (*nvJitLinkGetErrorLog)(NvJitLinkHandle, char*);
  int (*nvJitLinkGetInfoLogSize)(NvJitLinkHandle, size_t*);
  int (*nvJitLinkGetInfoLog)(NvJitLinkHandle, char*);
};

// The first of `names` that dlopen finds (by the loader's search, then in the toolkit's default
// place); null with what dlopen said in `why`.
void* OpenFirst(std::initializer_list<const char*> names, std::string* why) {
  for (const char* name : names) {
    for (std::string path : {std::string(name), "/usr/local/cuda/lib64/" + std::string(name)}) {
      if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
      if (const char* error = dlerror()) *why = error;
    }
  }
  return nullptr;
}

// The API, loaded once; `error` says why it could not be.
struct LoadedApi {
  CudaCompilerApi api{};
  std::string error;
};

const LoadedApi& Api() {
  static const LoadedApi loaded = [] {
    LoadedApi l;
    // Where a driver is installed, nvJitLink takes a cubin it made before from the driver's
    // compute cache (~/.nv/ComputeCache) and then prints no ptxas report, which the resource
    // gates need for every kernel: measured on an H200 host, the second build of a kernel failed
    // with "ptxas reported nothing". `tirtune` sets this at startup, before any thread; this is
    // for other programs of the library.
    if (const char* v = std::getenv("CUDA_CACHE_DISABLE"); v == nullptr || std::string(v) != "1") {
      setenv("CUDA_CACHE_DISABLE", "1", 1);
    }
    std::string why;
    void* nvrtc = OpenFirst({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, &why);
    void* link = OpenFirst({"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"}, &why);
    if (nvrtc == nullptr || link == nullptr) {
      l.error = fmt::format(
          "{} not found ({}): install the CUDA toolkit or put its lib64 folder on "
          "LD_LIBRARY_PATH",
          nvrtc == nullptr ? "NVRTC (libnvrtc.so)" : "nvJitLink (libnvJitLink.so)", why);
      return l;
    }
    auto bind = [&](void* lib, const char* name, auto* fn) {
      *reinterpret_cast<void**>(fn) = dlsym(lib, name);
      if (*reinterpret_cast<void**>(fn) == nullptr && l.error.empty()) {
        l.error = fmt::format("the CUDA compiler libraries lack {}", name);
      }
    };
    CudaCompilerApi& a = l.api;
    bind(nvrtc, "nvrtcCreateProgram", &a.nvrtcCreateProgram);
    bind(nvrtc, "nvrtcCompileProgram", &a.nvrtcCompileProgram);
    bind(nvrtc, "nvrtcGetPTXSize", &a.nvrtcGetPTXSize);
    bind(nvrtc, "nvrtcGetPTX", &a.nvrtcGetPTX);
    bind(nvrtc, "nvrtcGetProgramLogSize", &a.nvrtcGetProgramLogSize);
    bind(nvrtc, "nvrtcGetProgramLog", &a.nvrtcGetProgramLog);
    bind(nvrtc, "nvrtcDestroyProgram", &a.nvrtcDestroyProgram);
    bind(nvrtc, "nvrtcGetErrorString", &a.nvrtcGetErrorString);
    bind(link, "nvJitLinkCreate", &a.nvJitLinkCreate);
    bind(link, "nvJitLinkDestroy", &a.nvJitLinkDestroy);
    bind(link, "nvJitLinkAddData", &a.nvJitLinkAddData);
    bind(link, "nvJitLinkComplete", &a.nvJitLinkComplete);
    bind(link, "nvJitLinkGetLinkedCubinSize", &a.nvJitLinkGetLinkedCubinSize);
    bind(link, "nvJitLinkGetLinkedCubin", &a.nvJitLinkGetLinkedCubin);
    bind(link, "nvJitLinkGetErrorLogSize", &a.nvJitLinkGetErrorLogSize);
    bind(link, "nvJitLinkGetErrorLog", &a.nvJitLinkGetErrorLog);
    bind(link, "nvJitLinkGetInfoLogSize", &a.nvJitLinkGetInfoLogSize);
    bind(link, "nvJitLinkGetInfoLog", &a.nvJitLinkGetInfoLog);
    return l;
  }();
  return loaded;
}

const CudaCompilerApi& RequireApi() {
  const LoadedApi& l = Api();
  if (!l.error.empty()) TT_USER_ERROR("cannot compile CUDA: {}", l.error);
  return l.api;
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string ProgramLog(const CudaCompilerApi& a, NvrtcProgram p) {
  size_t n = 0;
  a.nvrtcGetProgramLogSize(p, &n);
  std::string log(n, '\0');
  if (n > 0) a.nvrtcGetProgramLog(p, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

std::string LinkLog(int (*size_fn)(NvJitLinkHandle, size_t*), int (*log_fn)(NvJitLinkHandle, char*),
                    NvJitLinkHandle h) {
  size_t n = 0;
  size_fn(h, &n);
  std::string log(n, '\0');
  if (n > 0) log_fn(h, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// Source → PTX for the virtual arch of `sm` ("sm_90" → compute_90).
std::string CompileToPtx(const CudaCompilerApi& a, const std::string& source, const std::string& sm,
                         const std::string& name) {
  NvrtcProgram p = nullptr;
  int r = a.nvrtcCreateProgram(&p, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (r != 0) TT_USER_ERROR("NVRTC could not create a program: {}", a.nvrtcGetErrorString(r));
  std::string arch = "--gpu-architecture=compute_" + sm.substr(3);
  const char* options[] = {arch.c_str(), "-default-device", "--std=c++17"};
  r = a.nvrtcCompileProgram(p, 3, options);
  std::string log = ProgramLog(a, p);
  if (r != 0) {
    a.nvrtcDestroyProgram(&p);
    TT_USER_ERROR("NVRTC rejected the CUDA C of {} ({}):\n{}", name, a.nvrtcGetErrorString(r), log);
  }
  size_t n = 0;
  a.nvrtcGetPTXSize(p, &n);
  std::string ptx(n, '\0');
  a.nvrtcGetPTX(p, ptx.data());
  a.nvrtcDestroyProgram(&p);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

}  // namespace

bool CudaCompilerAvailable(std::string* why) {
  const LoadedApi& l = Api();
  if (why != nullptr) *why = l.error;
  return l.error.empty();
}

CudaBinary CompileCuda(const GpuModule& module, const Target& target,
                       const CudaOptions& print_options) {
  TT_ICHECK(target.is_cuda(), "CompileCuda for the non-cuda target {}", target.str());
  const CudaCompilerApi& a = RequireApi();
  CudaBinary out;
  out.source = EmitCudaSource(module, print_options);
  auto start = std::chrono::steady_clock::now();
  out.ptx = CompileToPtx(a, out.source, target.arch, module.name);
  out.nvrtc_ms = MsSince(start);

  start = std::chrono::steady_clock::now();
  std::string arch = "-arch=" + target.arch;
  const char* options[] = {arch.c_str(), "-verbose"};
  NvJitLinkHandle h = nullptr;
  int r = a.nvJitLinkCreate(&h, 2, options);
  if (r != 0) TT_USER_ERROR("nvJitLink could not start for {} (error {})", target.arch, r);
  r = a.nvJitLinkAddData(h, kNvJitLinkInputPtx, out.ptx.data(), out.ptx.size(),
                         (module.name + ".ptx").c_str());
  if (r == 0) r = a.nvJitLinkComplete(h);
  if (r != 0) {
    std::string log = LinkLog(a.nvJitLinkGetErrorLogSize, a.nvJitLinkGetErrorLog, h);
    a.nvJitLinkDestroy(&h);
    TT_USER_ERROR("nvJitLink rejected the PTX of {} for {} (error {}):\n{}", module.name,
                  target.arch, r, log);
  }
  out.log = LinkLog(a.nvJitLinkGetInfoLogSize, a.nvJitLinkGetInfoLog, h);
  size_t n = 0;
  a.nvJitLinkGetLinkedCubinSize(h, &n);
  out.cubin.resize(n);
  a.nvJitLinkGetLinkedCubin(h, out.cubin.data());
  a.nvJitLinkDestroy(&h);
  out.link_ms = MsSince(start);
  out.resources = ParsePtxasReport(out.log);
  return out;
}

}  // namespace tirtune
