// The CUDA driver API through dlopen (see cuda_driver.h). The handful of declarations used are
// written here, so that neither the CUDA headers nor the stub library enter the build; the
// versioned entry points (_v2) are the ones the CUDA 12/13 headers map the plain names to.
#include "tirtune/runtime/cuda_driver.h"

#include <dlfcn.h>
#include <fmt/format.h>


namespace tirtune::cuda {
namespace {

using CuResult = int;
using CuDevice = int;
using CuDevicePtr = unsigned long long;  // NOLINT(runtime/int): the driver's type
constexpr CuResult kSuccess = 0;
constexpr CuResult kStubLibrary = 34;
constexpr CuResult kNoDevice = 100;

// cuda.h's enumerators used here.
constexpr int kAttrClockRate = 13;
constexpr int kAttrSmCount = 16;
constexpr int kAttrMemoryClockRate = 36;
constexpr int kAttrMemoryBusWidth = 37;
constexpr int kAttrL2Size = 38;
constexpr int kAttrCcMajor = 75;
constexpr int kAttrCcMinor = 76;
constexpr int kAttrMaxSharedOptin = 97;
constexpr int kAttrPciBusId = 33;
constexpr int kAttrPciDeviceId = 34;
constexpr int kAttrPciDomainId = 50;
constexpr int kFuncSharedBytes = 1;
constexpr int kFuncLocalBytes = 3;
constexpr int kFuncNumRegs = 4;
constexpr int kFuncMaxDynamicShared = 8;
constexpr int64_t kDefaultDynamicSharedLimit = 48 * 1024;

struct DriverApi {
  CuResult (*cuInit)(unsigned);
  CuResult (*cuDriverGetVersion)(int*);
  CuResult (*cuDeviceGetCount)(int*);
  CuResult (*cuDeviceGet)(CuDevice*, int);
  CuResult (*cuDeviceGetName)(char*, int, CuDevice);
  CuResult (*cuDeviceGetAttribute)(int*, int, CuDevice);
  CuResult (*cuDeviceTotalMem)(size_t*, CuDevice);
  CuResult (*cuDevicePrimaryCtxRetain)(void**, CuDevice);
  CuResult (*cuDevicePrimaryCtxRelease)(CuDevice);
  CuResult (*cuCtxSetCurrent)(void*);
  CuResult (*cuCtxSynchronize)();
  CuResult (*cuMemAlloc)(CuDevicePtr*, size_t);
  CuResult (*cuMemFree)(CuDevicePtr);
  CuResult (*cuMemcpyHtoD)(CuDevicePtr, const void*, size_t);
  CuResult (*cuMemcpyDtoH)(void*, CuDevicePtr, size_t);
  CuResult (*cuMemsetD8)(CuDevicePtr, unsigned char, size_t);
  CuResult (*cuModuleLoadData)(void**, const void*);
  CuResult (*cuModuleUnload)(void*);
  CuResult (*cuModuleGetFunction)(void**, void*, const char*);
  CuResult (*cuFuncGetAttribute)(int*, int, void*);
  CuResult (*cuFuncSetAttribute)(void*, int, int);
  CuResult (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, void*, void**, void**);
  CuResult (*cuEventCreate)(void**, unsigned);
  CuResult (*cuEventDestroy)(void*);
  CuResult (*cuEventRecord)(void*, void*);
  CuResult (*cuEventSynchronize)(void*);
  CuResult (*cuEventElapsedTime)(float*, void*, void*);
  CuResult (*cuGetErrorName)(CuResult, const char**);
  CuResult (*cuGetErrorString)(CuResult, const char**);
};

struct LoadedDriver {
  DriverApi api{};
  int device_count = 0;
  std::string error;  // why there is no usable driver; empty when there is
};

const LoadedDriver& Driver() {
  static const LoadedDriver loaded = [] {
    LoadedDriver d;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      d.error = fmt::format("no NVIDIA driver on this host ({})",
                            why ? why : "libcuda.so.1 not found");
      return d;
    }
    // Each entry: the names to try, newest first.
    auto bind = [&](auto* fn, std::initializer_list<const char*> names) {
      for (const char* name : names) {
        if (void* sym = dlsym(lib, name)) {
          *reinterpret_cast<void**>(fn) = sym;
          return;
        }
      }
      if (d.error.empty()) {
        d.error = fmt::format("the NVIDIA driver library lacks {}", *names.begin());
      }
    };
    DriverApi& a = d.api;
    bind(&a.cuInit, {"cuInit"});
    bind(&a.cuDriverGetVersion, {"cuDriverGetVersion"});
    bind(&a.cuDeviceGetCount, {"cuDeviceGetCount"});
    bind(&a.cuDeviceGet, {"cuDeviceGet"});
    bind(&a.cuDeviceGetName, {"cuDeviceGetName"});
    bind(&a.cuDeviceGetAttribute, {"cuDeviceGetAttribute"});
    bind(&a.cuDeviceTotalMem, {"cuDeviceTotalMem_v2"});
    bind(&a.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
    bind(&a.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2"});
    bind(&a.cuCtxSetCurrent, {"cuCtxSetCurrent"});
    bind(&a.cuCtxSynchronize, {"cuCtxSynchronize"});
    bind(&a.cuMemAlloc, {"cuMemAlloc_v2"});
    bind(&a.cuMemFree, {"cuMemFree_v2"});
    bind(&a.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"});
    bind(&a.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"});
    bind(&a.cuMemsetD8, {"cuMemsetD8_v2"});
    bind(&a.cuModuleLoadData, {"cuModuleLoadData"});
    bind(&a.cuModuleUnload, {"cuModuleUnload"});
    bind(&a.cuModuleGetFunction, {"cuModuleGetFunction"});
    bind(&a.cuFuncGetAttribute, {"cuFuncGetAttribute"});
    bind(&a.cuFuncSetAttribute, {"cuFuncSetAttribute"});
    bind(&a.cuLaunchKernel, {"cuLaunchKernel"});
    bind(&a.cuEventCreate, {"cuEventCreate"});
    bind(&a.cuEventDestroy, {"cuEventDestroy_v2"});
    bind(&a.cuEventRecord, {"cuEventRecord"});
    bind(&a.cuEventSynchronize, {"cuEventSynchronize"});
    bind(&a.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
    bind(&a.cuGetErrorName, {"cuGetErrorName"});
    bind(&a.cuGetErrorString, {"cuGetErrorString"});
    if (!d.error.empty()) return d;
    CuResult init = a.cuInit(0);
    if (init == kStubLibrary) {
      d.error = "no NVIDIA driver on this host (libcuda.so.1 is the CUDA toolkit's stub library)";
    } else if (init == kNoDevice) {
      d.error = "no CUDA device on this host (cuInit: CUDA_ERROR_NO_DEVICE)";
    } else if (init != kSuccess) {
      d.error = fmt::format("the NVIDIA driver does not start (cuInit returned {})", init);
    } else if (a.cuDeviceGetCount(&d.device_count) != kSuccess || d.device_count == 0) {
      d.error = "no CUDA device on this host";
    }
    return d;
  }();
  return loaded;
}

const DriverApi& Api() {
  const LoadedDriver& d = Driver();
  if (!d.error.empty()) throw CudaUnavailable(d.error);
  return d.api;
}

// Throws CudaError naming `call` when `result` is not success.
void Check(CuResult result, const char* call) {
  if (result == kSuccess) return;
  const DriverApi& a = Driver().api;
  const char* name = nullptr;
  const char* text = nullptr;
  if (a.cuGetErrorName == nullptr || a.cuGetErrorName(result, &name) != kSuccess) name = nullptr;
  if (a.cuGetErrorString == nullptr || a.cuGetErrorString(result, &text) != kSuccess) {
    text = nullptr;
  }
  throw CudaError(fmt::format("{}: {} ({})", call, name ? name : fmt::format("error {}", result),
                              text ? text : "no description"),
                  result);
}

int Attribute(const DriverApi& a, int attribute, CuDevice device) {
  int value = 0;
  Check(a.cuDeviceGetAttribute(&value, attribute, device), "cuDeviceGetAttribute");
  return value;
}

}  // namespace

bool CudaDriverAvailable(std::string* why) {
  const LoadedDriver& d = Driver();
  if (why != nullptr) *why = d.error;
  return d.error.empty();
}

std::string DeviceInfo::Arch() const { return fmt::format("sm_{}{}", cc_major, cc_minor); }

std::string DeviceInfo::PciLocation() const {
  return fmt::format("{:04x}:{:02x}:{:02x}", pci_domain, pci_bus, pci_device);
}

Kernel Module::Function(const std::string& name) const {
  const DriverApi& a = Api();
  Kernel k;
  k.name = name;
  Check(a.cuModuleGetFunction(&k.handle, handle_.get(), name.c_str()),
        fmt::format("cuModuleGetFunction({})", name).c_str());
  int value = 0;
  Check(a.cuFuncGetAttribute(&value, kFuncNumRegs, k.handle), "cuFuncGetAttribute");
  k.registers = value;
  Check(a.cuFuncGetAttribute(&value, kFuncLocalBytes, k.handle), "cuFuncGetAttribute");
  k.local_bytes = value;
  Check(a.cuFuncGetAttribute(&value, kFuncSharedBytes, k.handle), "cuFuncGetAttribute");
  k.static_shared_bytes = value;
  return k;
}

DeviceInfo QueryDevice(int ordinal) {
  const DriverApi& a = Api();
  if (ordinal < 0 || ordinal >= Driver().device_count) {
    throw CudaUnavailable(fmt::format("no CUDA device {} on this host ({} device{})", ordinal,
                                      Driver().device_count,
                                      Driver().device_count == 1 ? "" : "s"));
  }
  CuDevice device = 0;
  Check(a.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  Check(a.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
  info.name = name;
  info.cc_major = Attribute(a, kAttrCcMajor, device);
  info.cc_minor = Attribute(a, kAttrCcMinor, device);
  info.sm_count = Attribute(a, kAttrSmCount, device);
  info.clock_khz = Attribute(a, kAttrClockRate, device);
  info.memory_clock_khz = Attribute(a, kAttrMemoryClockRate, device);
  info.memory_bus_bits = Attribute(a, kAttrMemoryBusWidth, device);
  info.l2_bytes = Attribute(a, kAttrL2Size, device);
  info.max_shared_optin_bytes = Attribute(a, kAttrMaxSharedOptin, device);
  info.pci_domain = Attribute(a, kAttrPciDomainId, device);
  info.pci_bus = Attribute(a, kAttrPciBusId, device);
  info.pci_device = Attribute(a, kAttrPciDeviceId, device);
  size_t memory = 0;
  Check(a.cuDeviceTotalMem(&memory, device), "cuDeviceTotalMem");
  info.memory_bytes = static_cast<int64_t>(memory);
  Check(a.cuDriverGetVersion(&info.driver_version), "cuDriverGetVersion");
  return info;
}

Context::Context(int ordinal) {
  const DriverApi& a = Api();
  info_ = QueryDevice(ordinal);
  Check(a.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  Check(a.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  Check(a.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  Check(a.cuEventCreate(&start_, 0), "cuEventCreate");
  Check(a.cuEventCreate(&stop_, 0), "cuEventCreate");
}

Context::~Context() {
  const DriverApi& a = Driver().api;
  if (start_ != nullptr) a.cuEventDestroy(start_);
  if (stop_ != nullptr) a.cuEventDestroy(stop_);
  if (context_ != nullptr) a.cuDevicePrimaryCtxRelease(device_);
}

DeviceBuffer AllocateOnCurrentContext(size_t bytes) {
  const DriverApi& a = Api();
  CuDevicePtr ptr = 0;
  Check(a.cuMemAlloc(&ptr, bytes == 0 ? 1 : bytes),
        fmt::format("cuMemAlloc({} bytes)", bytes).c_str());
  DeviceBuffer buffer;
  buffer.bytes_ = bytes;
  buffer.address_ = std::shared_ptr<uint64_t>(new uint64_t(ptr), [](uint64_t* p) {
    Driver().api.cuMemFree(*p);
    delete p;
  });
  return buffer;
}

DeviceBuffer UploadOnCurrentContext(const void* src, size_t bytes) {
  DeviceBuffer buffer = AllocateOnCurrentContext(bytes);
  if (bytes > 0) Check(Api().cuMemcpyHtoD(buffer.address(), src, bytes), "cuMemcpyHtoD");
  return buffer;
}

void Context::CopyToDevice(const DeviceBuffer& dst, const void* src, size_t bytes) {
  if (bytes > dst.bytes()) {
    throw CudaError(fmt::format("cuMemcpyHtoD: {} bytes into a buffer of {}", bytes, dst.bytes()),
                    1);
  }
  Check(Api().cuMemcpyHtoD(dst.address(), src, bytes), "cuMemcpyHtoD");
}

void Context::CopyToHost(void* dst, const DeviceBuffer& src, size_t bytes) {
  if (bytes > src.bytes()) {
    throw CudaError(fmt::format("cuMemcpyDtoH: {} bytes from a buffer of {}", bytes, src.bytes()),
                    1);
  }
  Check(Api().cuMemcpyDtoH(dst, src.address(), bytes), "cuMemcpyDtoH");
}

void Context::Fill(const DeviceBuffer& buffer, uint8_t value) {
  Check(Api().cuMemsetD8(buffer.address(), value, buffer.bytes()), "cuMemsetD8");
}

Module Context::Load(const std::string& image) {
  const DriverApi& a = Api();
  void* handle = nullptr;
  Check(a.cuModuleLoadData(&handle, image.c_str()), "cuModuleLoadData");
  Module module;
  module.handle_ = std::shared_ptr<void>(handle, [](void* h) { Driver().api.cuModuleUnload(h); });
  return module;
}

void Context::Launch(const Kernel& kernel, const std::array<int64_t, 3>& grid,
                     const std::array<int64_t, 3>& block, int64_t dynamic_shared_bytes,
                     std::vector<void*> args) {
  const DriverApi& a = Api();
  if (dynamic_shared_bytes > kDefaultDynamicSharedLimit) {
    Check(a.cuFuncSetAttribute(kernel.handle, kFuncMaxDynamicShared,
                               static_cast<int>(dynamic_shared_bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }
  Check(a.cuLaunchKernel(kernel.handle, static_cast<unsigned>(grid[0]),
                         static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
                         static_cast<unsigned>(block[0]), static_cast<unsigned>(block[1]),
                         static_cast<unsigned>(block[2]),
                         static_cast<unsigned>(dynamic_shared_bytes), nullptr, args.data(),
                         nullptr),
        fmt::format("cuLaunchKernel({})", kernel.name).c_str());
}

void Context::Synchronize() { Check(Api().cuCtxSynchronize(), "cuCtxSynchronize"); }

void Context::RecordStart() { Check(Api().cuEventRecord(start_, nullptr), "cuEventRecord"); }

double Context::RecordStopAndWait() {
  const DriverApi& a = Api();
  Check(a.cuEventRecord(stop_, nullptr), "cuEventRecord");
  Check(a.cuEventSynchronize(stop_), "cuEventSynchronize");
  float ms = 0;
  Check(a.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
  return ms;
}

}  // namespace tirtune::cuda
