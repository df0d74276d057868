// A compiled GPU candidate as the runner protocol carries it (RunRequest::object for a cuda
// target): the cubin and how to run it: the global intermediates to allocate and the kernels to
// launch in order, each with its grid, block and arguments.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tirtune/support/dtype.h"

namespace tirtune {

struct CudaBinary;
struct GpuModule;

struct GpuProgram {
  struct Launch {
    std::string kernel;
    std::array<int64_t, 3> grid = {1, 1, 1};
    std::array<int64_t, 3> block = {1, 1, 1};
    /// Buffer numbers: the function's parameters are 0 .. P-1, its intermediates P, P+1, ...
    std::vector<int> args;
    /// Bytes of dynamic shared memory (GpuKernel::DynamicSharedBytes).
    int64_t dynamic_shared_bytes = 0;
  };
  struct Intermediate {
    DataType dtype;
    int64_t elements = 0;
  };
  std::string cubin;
  std::vector<Intermediate> intermediates;
  std::vector<Launch> launches;

  /// The program of `module` compiled to `binary`.
  static GpuProgram Of(const GpuModule& module, const CudaBinary& binary);

  std::string Serialize() const;
  /// Throws UserError naming what is wrong with a malformed payload.
  static GpuProgram Deserialize(const std::string& payload);
};

}  // namespace tirtune
