// tirtune-gpu-runner runs on GPU hosts whose C library may be older than the build host's. The
// static libstdc++ it links refers to arc4random (glibc 2.36, for std::random_device), which it
// never calls here; defining it in the program keeps the binary loadable with glibc 2.34 and 2.35.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>

extern "C" uint32_t arc4random(void) {
  uint32_t value = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (read(fd, &value, sizeof(value)) != static_cast<ssize_t>(sizeof(value))) value = 0;
    close(fd);
  }
  return value;
}
