#include "tirtune/measure/device_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

namespace tirtune {

std::string DeviceLockPath(const std::string& pci_location) {
  std::string name = pci_location;
  std::replace(name.begin(), name.end(), ':', '-');
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  return (dir / ("tirtune-device-" + name + ".lock")).string();
}

DeviceLock::DeviceLock(const std::string& path) : DeviceLock(path, /*wait=*/true) {}

DeviceLock::DeviceLock(const std::string& path, bool wait) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) return;
  // Other users' tuners share the device too: the file stays writable for them whatever the umask.
  (void)::fchmod(fd_, 0666);
  int result;
  do {
    result = ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB));
  } while (result != 0 && errno == EINTR);
  held_ = result == 0;
}

DeviceLock::~DeviceLock() {
  if (fd_ < 0) return;
  if (held_) ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace tirtune
