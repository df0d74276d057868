// GpuProgram's wire form: "TTGP" 2, then the intermediates, the launches and the cubin, each
// length-prefixed in the runner protocol's byte encoding (byte_codec.h).
#include "tirtune/measure/gpu_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "byte_codec.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/ir/gpu_module.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

constexpr char kMagic[4] = {'T', 'T', 'G', 'P'};
constexpr uint32_t kVersion = 2;  // 2: dynamic shared memory per launch

}  // namespace

GpuProgram GpuProgram::Of(const GpuModule& module, const CudaBinary& binary) {
  GpuProgram p;
  p.cubin = binary.cubin;
  for (const Buffer& b : module.global_allocs) {
    p.intermediates.push_back({b->dtype, b.ConstNumElements()});
  }
  for (const GpuKernel& k : module.kernels) {
    Launch launch{k.name, k.grid, k.block, {}, k.DynamicSharedBytes()};
    for (const Buffer& b : k.params) {
      auto number = [&](const std::vector<Buffer>& list) {
        auto it = std::find_if(list.begin(), list.end(),
                               [&](const Buffer& x) { return x.same_as(b); });
        return it == list.end() ? -1 : static_cast<int>(it - list.begin());
      };
      int n = number(module.params);
      if (n < 0) {
        int i = number(module.global_allocs);
        TT_ICHECK(i >= 0, "kernel {} uses buffer {} the module lacks", k.name, b->name);
        n = static_cast<int>(module.params.size()) + i;
      }
      launch.args.push_back(n);
    }
    p.launches.push_back(std::move(launch));
  }
  return p;
}

std::string GpuProgram::Serialize() const {
  ByteWriter o;
  for (char c : kMagic) o.Pod(c);
  o.Pod(kVersion);
  o.Pod<uint32_t>(static_cast<uint32_t>(intermediates.size()));
  for (const Intermediate& i : intermediates) {
    o.String(i.dtype.str());
    o.Pod<int64_t>(i.elements);
  }
  o.Pod<uint32_t>(static_cast<uint32_t>(launches.size()));
  for (const Launch& l : launches) {
    o.String(l.kernel);
    for (int64_t v : l.grid) o.Pod(v);
    for (int64_t v : l.block) o.Pod(v);
    o.Pod<uint32_t>(static_cast<uint32_t>(l.args.size()));
    for (int a : l.args) o.Pod<int32_t>(a);
    o.Pod<int64_t>(l.dynamic_shared_bytes);
  }
  o.String(cubin);
  return o.Take();
}

GpuProgram GpuProgram::Deserialize(const std::string& payload) {
  ByteReader in(payload, "GPU program");
  for (char c : kMagic) {
    if (in.Pod<char>("the magic") != c) TT_USER_ERROR("GPU program: not a GPU program");
  }
  if (uint32_t v = in.Pod<uint32_t>("the version"); v != kVersion) {
    TT_USER_ERROR("GPU program: version {} (this build reads {})", v, kVersion);
  }
  GpuProgram p;
  uint32_t n = in.Pod<uint32_t>("the intermediates");
  for (uint32_t i = 0; i < n; ++i) {
    std::string type = in.String("an intermediate's type");
    std::optional<DataType> dtype = DataType::Parse(type);
    int64_t elements = in.Pod<int64_t>("an intermediate's size");
    if (!dtype || elements < 0) {
      TT_USER_ERROR("GPU program: intermediate {} is '{}' x {}", i, type, elements);
    }
    p.intermediates.push_back({*dtype, elements});
  }
  uint32_t launches = in.Pod<uint32_t>("the launches");
  for (uint32_t i = 0; i < launches; ++i) {
    Launch l;
    l.kernel = in.String("a kernel name");
    for (int64_t& v : l.grid) v = in.Pod<int64_t>("a grid extent");
    for (int64_t& v : l.block) v = in.Pod<int64_t>("a block extent");
    uint32_t args = in.Pod<uint32_t>("a launch's arguments");
    for (uint32_t a = 0; a < args; ++a) l.args.push_back(in.Pod<int32_t>("an argument"));
    l.dynamic_shared_bytes = in.Pod<int64_t>("a launch's dynamic shared memory");
    if (l.dynamic_shared_bytes < 0) {
      TT_USER_ERROR("GPU program: kernel {} has {} bytes of dynamic shared memory", l.kernel,
                    l.dynamic_shared_bytes);
    }
    for (int64_t v : l.grid) {
      if (v < 1) TT_USER_ERROR("GPU program: kernel {} has a grid extent {}", l.kernel, v);
    }
    for (int64_t v : l.block) {
      if (v < 1) TT_USER_ERROR("GPU program: kernel {} has a block extent {}", l.kernel, v);
    }
    p.launches.push_back(std::move(l));
  }
  p.cubin = in.String("the cubin");
  if (!in.done()) TT_USER_ERROR("GPU program: bytes after the cubin");
  return p;
}

}  // namespace tirtune
