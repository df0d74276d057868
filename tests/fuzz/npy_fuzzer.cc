// libFuzzer target for .npy files (built by scripts/fuzz.sh npy, and replayed over its committed
// corpus by the fuzz_replay tests): the input is written as a .npy file and read as `tirtune run`
// reads a model input. ReadNpy may only refuse with a UserError naming the file; what it reads
// is written back and read again, and must come back the same.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "tirtune/model/npy.h"
#include "tirtune/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tirtune;
  static const std::string path = "/tmp/tirtune_npy_fuzz_" + std::to_string(getpid()) + ".npy";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  NDArray array;
  try {
    array = model::ReadNpy(path);
  } catch (const UserError&) {
    return 0;  // refused with a message
  }
  model::WriteNpy(path, array);
  NDArray again = model::ReadNpy(path);
  if (again.shape() != array.shape() || again.dtype() != array.dtype() ||
      again.nbytes() != array.nbytes() ||
      (array.nbytes() > 0 &&
       std::memcmp(again.raw(), array.raw(), static_cast<size_t>(array.nbytes())) != 0)) {
    __builtin_trap();  // a round trip that changed the array
  }
  return 0;
}
