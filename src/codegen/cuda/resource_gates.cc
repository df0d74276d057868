// ptxas's resource report, as nvJitLink's -verbose log gives it, and the static gates a kernel
// must pass before it may run (gpu-and-pools-notes §2): no spills, registers per thread and per
// block, shared memory, local memory (the stack frame).
//
//   ptxas info    : Compiling entry function 'k' for 'sm_90'
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>

#include "tirtune/codegen/cuda.h"
#include "tirtune/support/error.h"

namespace tirtune {

std::vector<KernelResources> ParsePtxasReport(const std::string& log) {
  static const std::regex kEntry(R"(ptxas info\s*: Compiling entry function '([^']+)')");
  static const std::regex kFrame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex kUsed(R"(ptxas info\s*: Used (\d+) registers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  std::vector<KernelResources> out;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(start, end - start);
    start = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      out.push_back(KernelResources{.kernel = m[1]});
      continue;
    }
    if (out.empty() || line.rfind("ptxas", 0) != 0) continue;  // nvJitLink's own summary lines
    KernelResources& k = out.back();
    if (std::regex_search(line, m, kFrame)) {
      k.stack_bytes = std::stoll(m[1]);
      k.spill_store_bytes = std::stoll(m[2]);
      k.spill_load_bytes = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, kUsed)) {
      k.registers = std::stoll(m[1]);
      if (std::regex_search(line, m, kSmem)) k.shared_bytes = std::stoll(m[1]);
    }
  }
  return out;
}

std::vector<std::string> CheckResourceGates(const GpuModule& module, const CudaBinary& binary,
                                            const GpuLimits& limits) {
  std::vector<std::string> failures;
  for (const GpuKernel& kernel : module.kernels) {
    const KernelResources* r = nullptr;
    for (const KernelResources& k : binary.resources) {
      if (k.kernel == kernel.name) r = &k;
    }
    if (r == nullptr) {
      failures.push_back(fmt::format(
          "{}: ptxas reported nothing for it (a cubin from the driver's compute cache? "
          "CUDA_CACHE_DISABLE=1 makes nvJitLink compile and report)",
          kernel.name));
      continue;
    }
    if (r->spill_store_bytes > 0 || r->spill_load_bytes > 0) {
      failures.push_back(fmt::format("{}: spills registers ({} bytes stored, {} loaded)",
                                     kernel.name, r->spill_store_bytes, r->spill_load_bytes));
    }
    if (r->stack_bytes > limits.max_local_memory_per_thread) {
      failures.push_back(fmt::format("{}: a stack frame of {} bytes per thread; the target allows {}",
                                     kernel.name, r->stack_bytes,
                                     limits.max_local_memory_per_thread));
    }
    if (r->registers > limits.max_registers_per_thread) {
      failures.push_back(fmt::format("{}: {} registers per thread; the target allows {}",
                                     kernel.name, r->registers, limits.max_registers_per_thread));
    }
    int64_t per_block = (r->registers + 7) / 8 * 8 * kernel.ThreadsPerBlock();
    if (per_block > limits.max_registers_per_block) {
      failures.push_back(fmt::format(
          "{}: {} registers per block ({} per thread, rounded up to 8, times {} threads); the "
          "target allows {}",
          kernel.name, per_block, r->registers, kernel.ThreadsPerBlock(),
          limits.max_registers_per_block));
    }
    if (r->shared_bytes > limits.max_shared_memory_per_block) {
      failures.push_back(fmt::format("{}: {} bytes of shared memory; the target allows {}",
                                     kernel.name, r->shared_bytes,
                                     limits.max_shared_memory_per_block));
    }
  }
  return failures;
}

CudaBinary CompileCudaGated(const GpuModule& module, const Target& target,
                            const CudaOptions& options) {
  CudaBinary binary = CompileCuda(module, target, options);
  std::vector<std::string> gates = CheckResourceGates(module, binary, target.gpu);
  if (!gates.empty()) {
    TT_USER_ERROR("the kernels cannot run on {}: {}", target.str(), fmt::join(gates, "; "));
  }
  return binary;
}

}  // namespace tirtune
