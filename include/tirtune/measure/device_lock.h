// One measurement on a device at a time across processes: tuners started side by side on one
// host (one per task, or a tuner beside an agent) share the GPU, and a kernel timed while another
// process's kernel runs is timed with the other's time slices in it. Each GPU worker therefore
// holds an exclusive lock (flock) on a file named after the device's PCI location while it runs
// kernels; everything else (loading, copies, verification on the CPU) stays concurrent.
#pragma once

#include <string>

namespace tirtune {

/// The lock file of the device at `pci_location` ("0000:1b:00"), in the system's temporary
/// directory: tirtune-device-0000-1b-00.lock.
std::string DeviceLockPath(const std::string& pci_location);

/// Holds the exclusive lock on `path` from construction to destruction (blocking until the
/// holder lets go). The lock goes with the process: one that dies releases it. Where the file
/// cannot be opened (a read-only temporary directory), nothing is locked and `held()` is false:
/// measurements go on, unserialized.
class DeviceLock {
 public:
  explicit DeviceLock(const std::string& path);
  /// Without blocking: `held()` says whether it was free.
  DeviceLock(const std::string& path, bool wait);
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

  bool held() const { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace tirtune
