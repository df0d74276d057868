// The CUDA driver API, loaded with dlopen("libcuda.so.1") on first use: a tirtune binary starts on
// a host without an NVIDIA driver and says plainly that there is no GPU when it needs one. Only
// the calls a runner needs are wrapped: one device's primary context, device memory, modules from
// cubins, kernel launches and event timing. Every driver error names the call that failed.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tirtune::cuda {

/// There is no usable GPU here: no driver (libcuda.so.1 not found, or the toolkit's stub), no
/// device, or no device with the requested ordinal. The message says which.
class CudaUnavailable : public std::runtime_error {
 public:
  explicit CudaUnavailable(const std::string& what) : std::runtime_error(what) {}
};

/// A driver call failed: "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE (device kernel image is
/// invalid)". After a kernel fault (illegal address, launch failure) the context is unusable:
/// the process should report the error and exit.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// True when the driver loads and has at least one device; otherwise false with the reason
/// (what CudaUnavailable would say) in `why`.
bool CudaDriverAvailable(std::string* why = nullptr);

/// What a device is, for reports and device classes.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t clock_khz = 0;
  int64_t memory_clock_khz = 0;
  int64_t memory_bus_bits = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int64_t max_shared_optin_bytes = 0;
  /// The driver's CUDA version, e.g. 13000.
  int driver_version = 0;
  /// Where the device sits on the PCI bus: the same GPU whatever CUDA_VISIBLE_DEVICES says.
  int pci_domain = 0;
  int pci_bus = 0;
  int pci_device = 0;

  /// "sm_90" for compute capability 9.0.
  std::string Arch() const;
  /// "0000:1b:00": domain, bus and device of the PCI location.
  std::string PciLocation() const;
};

/// What device `ordinal` is, read without making a context (cheap: no GPU memory is taken).
/// CudaUnavailable when there is no driver or no such device.
DeviceInfo QueryDevice(int ordinal);

class Context;
class DeviceBuffer;

/// `bytes` of device memory on the context current on the calling thread (a Context's), freed
/// when the last owner lets go. CudaError when the driver refuses.
DeviceBuffer AllocateOnCurrentContext(size_t bytes);
/// `bytes` of device memory on the current context holding a copy of host memory `src`.
/// CudaError when the driver refuses.
DeviceBuffer UploadOnCurrentContext(const void* src, size_t bytes);

/// Device memory, freed when the last owner lets go.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  uint64_t address() const { return address_ ? *address_ : 0; }
  size_t bytes() const { return bytes_; }

 private:
  friend DeviceBuffer AllocateOnCurrentContext(size_t bytes);
  std::shared_ptr<uint64_t> address_;
  size_t bytes_ = 0;
};

/// A kernel of a loaded module, with what the driver says about it.
struct Kernel {
  void* handle = nullptr;
  std::string name;
  int registers = 0;
  int64_t local_bytes = 0;
  int64_t static_shared_bytes = 0;
};

/// A loaded cubin; unloaded when the last owner lets go.
class Module {
 public:
  Module() = default;
  /// The kernel `name` (an extern "C" function); CudaError naming it when the module has none.
  Kernel Function(const std::string& name) const;

 private:
  friend class Context;
  std::shared_ptr<void> handle_;
};

/// One device's primary context, current on the calling thread while this object lives. One per
/// process and device: a kernel that faults poisons it for good.
class Context {
 public:
  /// Throws CudaUnavailable when there is no driver or no device `ordinal`, CudaError when the
  /// driver refuses the context.
  explicit Context(int ordinal = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }

  DeviceBuffer Allocate(size_t bytes) { return AllocateOnCurrentContext(bytes); }
  void CopyToDevice(const DeviceBuffer& dst, const void* src, size_t bytes);
  void CopyToHost(void* dst, const DeviceBuffer& src, size_t bytes);
  /// Sets every byte of `buffer` to `value` (ordered with launches on the default stream).
  void Fill(const DeviceBuffer& buffer, uint8_t value);

  /// Loads a cubin (or PTX, which the driver compiles).
  Module Load(const std::string& image);
  /// Launches `kernel` on the default stream; `args` are the addresses of the arguments' values.
  /// Dynamic shared memory above 48 KiB is opted into first.
  void Launch(const Kernel& kernel, const std::array<int64_t, 3>& grid,
              const std::array<int64_t, 3>& block, int64_t dynamic_shared_bytes,
              std::vector<void*> args);
  /// Waits for everything launched; a fault of an earlier launch surfaces here as CudaError.
  void Synchronize();

  /// Milliseconds between two events recorded around `work` on the default stream, after
  /// `before` (not timed: an L2 flush) ran. Synchronizes.
  template <typename Before, typename Work>
  double TimeMs(Before&& before, Work&& work) {
    before();
    RecordStart();
    work();
    return RecordStopAndWait();
  }

 private:
  void RecordStart();
  double RecordStopAndWait();

  int device_ = 0;
  void* context_ = nullptr;
  void* start_ = nullptr;
  void* stop_ = nullptr;
  DeviceInfo info_;
};

}  // namespace tirtune::cuda
