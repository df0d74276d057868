// The lowered GPU form's helpers: shared memory per block and the text form of a module.
#include "tirtune/ir/gpu_module.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tirtune/ir/printer.h"

namespace tirtune {

int64_t GpuKernel::SharedBytes() const {
  int64_t bytes = 0;
  for (const Buffer& b : shared) bytes += b.ConstNumElements() * b->dtype.bytes();
  return bytes;
}

int64_t GpuKernel::SharedOffset(size_t i) const {
  int64_t offset = 0;
  for (size_t j = 0; j < i && j < shared.size(); ++j) {
    offset += (shared[j].ConstNumElements() * shared[j]->dtype.bytes() + 15) / 16 * 16;
  }
  return offset;
}

int64_t GpuKernel::DynamicSharedBytes() const {
  return dynamic_shared ? SharedOffset(shared.size()) : 0;
}

namespace {

std::string BufferList(const std::vector<Buffer>& buffers) {
  std::vector<std::string> parts;
  for (const Buffer& b : buffers) {
    parts.push_back(fmt::format("{}: ({},) {}", b->name, b.ConstNumElements(), b->dtype.str()));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string Indented(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += prefix + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string PrintGpuModule(const GpuModule& module) {
  std::string out = fmt::format("# module {}\n", module.name);
  if (!module.global_allocs.empty()) {
    out += fmt::format("# global {}\n", BufferList(module.global_allocs));
  }
  for (const GpuKernel& k : module.kernels) {
    out += fmt::format("kernel {}(grid=({}), block=({})):\n", k.name, fmt::join(k.grid, ", "),
                       fmt::join(k.block, ", "));
    std::vector<std::string> params;
    for (const Buffer& b : k.params) params.push_back(b->name);
    out += fmt::format("  # params: {}\n", fmt::join(params, ", "));
    if (!k.shared.empty()) {
      out += fmt::format("  # shared{} {}\n", k.dynamic_shared ? " (dynamic)" : "",
                         BufferList(k.shared));
    }
    out += Indented(ToString(k.body), "  ");
  }
  return out;
}

}  // namespace tirtune
