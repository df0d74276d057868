// The CUDA backend's compile side: CUDA C for the kernels of a lowered GPU module, compiled
// through NVRTC to PTX and by nvJitLink to a cubin for the target's arch, with the resource
// report (registers, spills, shared memory) that gates a kernel before any GPU sees it. NVRTC and
// nvJitLink are loaded with dlopen, so nothing here needs the CUDA toolkit to start.
#pragma once

#include <string>
#include <vector>

#include "tirtune/codegen/target.h"
#include "tirtune/ir/gpu_module.h"

namespace tirtune {

/// How the CUDA C is printed.
struct CudaOptions {
  /// Index arithmetic as `int` in each kernel whose int64 values provably fit in 32 bits (else
  /// `long long`, the lowered form's int64). Off by default: on an H100-class GPU it made a plain
  /// GEMM 1.47x faster and a tiled conv2d 1.75x slower (docs/BENCHMARKS.md), so it is a choice
  /// per kernel, for the search to make.
  bool int32_indices = false;
};

/// CUDA C for every kernel of `module`: `extern "C" __global__` functions named like the
/// kernels, one pointer parameter per kernel param, `__shared__` arrays, `__launch_bounds__` of
/// the block size. Throws UserError for what the generator cannot print yet (vector
/// expressions, float16/bfloat16, expression lets), naming it.
std::string EmitCudaSource(const GpuModule& module, const CudaOptions& options = {});

/// What ptxas reports for one kernel.
struct KernelResources {
  std::string kernel;
  int64_t registers = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t stack_bytes = 0;
  /// Static shared memory, in bytes.
  int64_t shared_bytes = 0;
};

/// A compiled module.
struct CudaBinary {
  std::string source;
  std::string ptx;
  std::string cubin;
  /// nvJitLink's info log (ptxas's report).
  std::string log;
  std::vector<KernelResources> resources;
  /// Milliseconds in NVRTC (source to PTX) and in nvJitLink (PTX to cubin).
  double nvrtc_ms = 0;
  double link_ms = 0;
};

/// Compiles `module` for `target` (a cuda target): CUDA C → NVRTC (compute_XX PTX) → nvJitLink
/// (sm_XX cubin). Throws UserError when NVRTC or nvJitLink cannot be loaded (saying how to make
/// them found) or reject the code (with their log).
CudaBinary CompileCuda(const GpuModule& module, const Target& target,
                       const CudaOptions& options = {});

/// The static gates a compiled kernel must pass before it may run, one message per failure
/// (empty: all pass): no spills; registers per thread within the limit; registers (rounded up
/// to 8 per thread, as the GPU allocates them) times threads per block within the limit; static
/// shared memory within the limit.
std::vector<std::string> CheckResourceGates(const GpuModule& module, const CudaBinary& binary,
                                            const GpuLimits& limits);

/// CompileCuda, then CheckResourceGates: UserError "the kernels cannot run on TARGET: GATE;
/// GATE..." when a kernel fails one. What every kernel goes through before anything runs it.
CudaBinary CompileCudaGated(const GpuModule& module, const Target& target,
                            const CudaOptions& options = {});

/// Parses nvJitLink's -verbose info log (ptxas's lines) into one entry per kernel.
std::vector<KernelResources> ParsePtxasReport(const std::string& log);

/// True when NVRTC and nvJitLink can be loaded here; otherwise false with the reason in `why`.
bool CudaCompilerAvailable(std::string* why = nullptr);

}  // namespace tirtune
