// GraphExecutor: the artifact loaded into this process, with storage planned once by liveness
// (an intermediate takes the smallest free buffer that fits once the values before it are dead;
// a call's output never shares storage with its arguments) and kernel argument arrays built once.
#include "tirtune/model/executor.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tirtune/database/database.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/ir/parser.h"
#include "tirtune/measure/gpu_program.h"
#include "tirtune/runtime/cuda_driver.h"
#include "tirtune/runtime/thread_pool.h"
#include "tirtune/support/error.h"

namespace tirtune::model {
namespace {

namespace fs = std::filesystem;

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) TT_USER_ERROR("'{}' is missing (incomplete compiled model?)", path.string());
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every call of function `function` (`name`, taking `params`) passes values of the parameters'
// types and element counts (a count of -1 is not checked).
void CheckCalls(const Artifact& art, const std::string& dir, int function,
                const std::string& name, const std::vector<KernelParam>& params) {
  for (const ArtifactCall& call : art.calls) {
    if (call.function != function) continue;
    std::vector<int> values = call.args;
    values.push_back(call.output);
    if (params.size() != values.size()) {
      TT_USER_ERROR("{}: function '{}' takes {} parameters, a call passes {}", dir, name,
                    params.size(), values.size());
    }
    for (size_t i = 0; i < values.size(); ++i) {
      const ArtifactValue& v = art.values[values[i]];
      const KernelParam& p = params[i];
      if (p.dtype != v.dtype || (p.num_elements >= 0 && p.num_elements != v.NumElements())) {
        TT_USER_ERROR("{}: function '{}' parameter {} does not match value '{}' ({})", dir, name,
                      i, v.name, v.dtype.str());
      }
    }
  }
}

// The median of `repeats` calls of `timed` (seconds each).
template <typename F>
double MedianOfRepeats(int repeats, F&& timed) {
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) samples.push_back(timed());
  return MedianOf(std::move(samples)).value_or(0);
}

NDArray Blob(int64_t nbytes) {
  return NDArray::Empty({std::max<int64_t>(nbytes, 1)}, DataType::UInt(8));
}

}  // namespace

GraphExecutor::GraphExecutor(const std::string& dir) : artifact_(ReadArtifact(dir)) {
  target_ = Target::Parse(artifact_.target);
  const fs::path root(dir);
  if (target_.is_cuda()) {
    LoadGpu(dir);
    return;
  }
  if (std::vector<std::string> missing = TargetFeaturesMissingOnHost(target_); !missing.empty()) {
    TT_USER_ERROR(
        "{}: compiled for '{}', whose instructions this CPU ({}) lacks: {}; compile the model "
        "again on this machine",
        dir, artifact_.target, HostCpuName(), fmt::join(missing, ", "));
  }

  // Step 1. The kernels, each checked against the values it is called on (library functions
  // are built per call once the constants are loaded, step 4).
  for (const ArtifactFunction& f : artifact_.functions) {
    if (!f.library.empty()) {
      kernels_.push_back(nullptr);
      continue;
    }
    try {
      kernels_.push_back(LoadObject(ReadBytes(root / f.object_file), f.name, target_));
    } catch (const UserError& e) {
      TT_USER_ERROR("{}: cannot load '{}': {}", dir, f.object_file, e.what());
    }
    const Kernel& kernel = *kernels_.back();
    CheckCalls(artifact_, dir, static_cast<int>(kernels_.size()) - 1, kernel.name(),
               kernel.params());
  }

  // Step 2. Inputs and constants get their own storage.
  LoadInputsAndConstants(dir);

  // Step 3. Intermediates by liveness: a value dies after its last use unless it is an output.
  std::vector<int> last_use(artifact_.values.size(), -1);
  for (size_t c = 0; c < artifact_.calls.size(); ++c) {
    for (int arg : artifact_.calls[c].args) last_use[arg] = static_cast<int>(c);
  }
  for (int o : artifact_.outputs) last_use[o] = static_cast<int>(artifact_.calls.size());
  std::vector<std::pair<int64_t, void*>> free_list;  // (bytes, storage)
  std::vector<int64_t> value_bytes(artifact_.values.size(), 0);
  std::vector<std::pair<int64_t, void*>> owned(artifact_.values.size(), {0, nullptr});
  for (size_t c = 0; c < artifact_.calls.size(); ++c) {
    const ArtifactCall& call = artifact_.calls[c];
    const ArtifactValue& out = artifact_.values[call.output];
    int64_t bytes = out.NumElements() * out.dtype.bytes();
    intermediate_bytes_unshared_ += bytes;
    auto best = free_list.end();
    for (auto it = free_list.begin(); it != free_list.end(); ++it) {
      if (it->first >= bytes && (best == free_list.end() || it->first < best->first)) best = it;
    }
    if (best != free_list.end()) {
      owned[call.output] = *best;
      free_list.erase(best);
    } else {
      NDArray blob = Blob(bytes);
      owned[call.output] = {bytes, blob.raw()};
      intermediate_bytes_ += bytes;
      blobs_.push_back(std::move(blob));
    }
    data_[call.output] = owned[call.output].second;
    // Arguments whose last use is this call free their storage for the calls after it.
    for (int arg : call.args) {
      if (last_use[arg] == static_cast<int>(c) && owned[arg].second != nullptr) {
        free_list.push_back(owned[arg]);
        owned[arg] = {0, nullptr};
      }
    }
    // A result nobody reads is dead at once.
    if (last_use[call.output] < 0) {
      free_list.push_back(owned[call.output]);
      owned[call.output] = {0, nullptr};
    }
  }
  for (const ArtifactCall& call : artifact_.calls) {
    std::vector<void*> args;
    for (int arg : call.args) args.push_back(data_[arg]);
    args.push_back(data_[call.output]);
    call_args_.push_back(std::move(args));
  }

  // Step 4. A library's kernel for every call of a library function, with that call's constants
  // (weights reordered into the library's layout here, once).
  library_kernels_.resize(artifact_.calls.size());
  for (size_t c = 0; c < artifact_.calls.size(); ++c) {
    const ArtifactCall& call = artifact_.calls[c];
    const ArtifactFunction& f = artifact_.functions[call.function];
    if (f.library.empty()) continue;
    library_kernels_[c] = BuildLibraryKernel(dir, call, f, {.threads = target_.num_cores});
  }
  // Step 5. With library calls (oneDNN runs on OpenMP) the kernels' loops run on OpenMP's
  // threads too: one team of threads, not two taking turns on the cores.
  bool any_library = std::any_of(library_kernels_.begin(), library_kernels_.end(),
                                 [](const auto& k) { return k != nullptr; });
  runtime::SetParallelRuntime(any_library ? runtime::ParallelRuntime::kOpenMp
                                          : runtime::ParallelRuntime::kPool);
}

std::unique_ptr<offload::LibraryKernel> GraphExecutor::BuildLibraryKernel(
    const std::string& dir, const ArtifactCall& call, const ArtifactFunction& f,
    const offload::LibraryOptions& options) const {
  std::map<int, NDArray> constants;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const ArtifactValue& v = artifact_.values[call.args[i]];
    if (v.kind != ArtifactValueKind::kConstant) continue;
    NDArray data = NDArray::Empty(v.shape, v.dtype);
    std::memcpy(data.raw(), data_[call.args[i]], data.nbytes());
    constants[static_cast<int>(i)] = std::move(data);
  }
  try {
    graph::Graph composite = offload::CompositeFromJson(f.library, constants);
    const graph::Call& g = composite.call(0);
    if (g.args.size() != call.args.size()) {
      TT_USER_ERROR("it takes {} arguments, a call passes {}", g.args.size(), call.args.size());
    }
    for (size_t i = 0; i < call.args.size(); ++i) {
      const ArtifactValue& v = artifact_.values[call.args[i]];
      if (composite.value(g.args[i]).type != graph::TensorType{v.shape, v.dtype}) {
        TT_USER_ERROR("argument {} is {}, the call passes '{}' of another type", i,
                      composite.value(g.args[i]).type.str(), v.name);
      }
    }
    const std::string backend = g.attrs.GetString(graph::kCodegenAttr);
    const offload::LibraryBackend* library = offload::FindBackend(backend);
    if (library == nullptr) {
      TT_USER_ERROR("{} (compile the model again with --offload never to run it without)",
                    offload::BackendUnavailable(backend));
    }
    if (library->OnGpu() != target_.is_cuda()) {
      TT_USER_ERROR("'{}' runs on {}, but the artifact is for '{}'", backend,
                    library->OnGpu() ? "a GPU" : "the CPU", artifact_.target);
    }
    return library->Build(composite, g, options);
  } catch (const InternalError&) {
    throw;
  } catch (const std::runtime_error& e) {  // a UserError, or a GPU library failing to start
    TT_USER_ERROR("{}: function '{}' (run by a library): {}", dir, f.name, e.what());
  }
}

void GraphExecutor::LoadInputsAndConstants(const std::string& dir) {
  const fs::path root(dir);
  data_.assign(artifact_.values.size(), nullptr);
  std::string weights = ReadBytes(root / artifact_.weights_file);
  for (size_t i = 0; i < artifact_.values.size(); ++i) {
    const ArtifactValue& v = artifact_.values[i];
    if (v.kind == ArtifactValueKind::kCall) continue;
    NDArray blob = Blob(v.NumElements() * v.dtype.bytes());
    if (v.kind == ArtifactValueKind::kConstant) {
      const auto size = static_cast<int64_t>(weights.size());
      if (v.offset > size || v.nbytes > size - v.offset) {
        TT_USER_ERROR("{}: '{}' is truncated (constant '{}' lies past its end)", dir,
                      artifact_.weights_file, v.name);
      }
      std::memcpy(blob.raw(), weights.data() + v.offset, v.nbytes);
    }
    data_[i] = blob.raw();
    blobs_.push_back(std::move(blob));
  }
}

std::vector<graph::TensorType> GraphExecutor::InputTypes() const {
  std::vector<graph::TensorType> types;
  for (int i : artifact_.inputs) {
    types.push_back(graph::TensorType{artifact_.values[i].shape, artifact_.values[i].dtype});
  }
  return types;
}

std::vector<graph::TensorType> GraphExecutor::OutputTypes() const {
  std::vector<graph::TensorType> types;
  for (int o : artifact_.outputs) {
    types.push_back(graph::TensorType{artifact_.values[o].shape, artifact_.values[o].dtype});
  }
  return types;
}

void GraphExecutor::RunCall(size_t c) {
  if (library_kernels_[c]) {
    const std::vector<void*>& args = call_args_[c];
    library_kernels_[c]->Run(std::vector<const void*>(args.begin(), args.end() - 1), args.back());
    return;
  }
  const Kernel& kernel = *kernels_[artifact_.calls[c].function];
  int32_t status = kernel.RunRaw(call_args_[c].data());
  if (status != 0) {
    TT_USER_ERROR("function '{}' (call {}) returned status {}", kernel.name(), c, status);
  }
}

void GraphExecutor::RunCalls(std::vector<double>* seconds, int alone_repeats) {
  for (size_t c = 0; c < artifact_.calls.size(); ++c) {
    auto timed = [&] {
      auto start = std::chrono::steady_clock::now();
      RunCall(c);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    if (seconds == nullptr) {
      RunCall(c);
      continue;
    }
    double first = timed();
    seconds->push_back(alone_repeats > 0 ? MedianOfRepeats(alone_repeats, timed) : first);
  }
}

std::vector<NDArray> GraphExecutor::Run(const std::vector<NDArray>& inputs) {
  if (inputs.size() != artifact_.inputs.size()) {
    TT_USER_ERROR("the model takes {} input(s), {} given", artifact_.inputs.size(), inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ArtifactValue& v = artifact_.values[artifact_.inputs[i]];
    graph::TensorType expected{v.shape, v.dtype};
    if (inputs[i].shape() != v.shape || inputs[i].dtype() != v.dtype) {
      graph::TensorType given{inputs[i].shape(), inputs[i].dtype()};
      TT_USER_ERROR("input {} '{}' must be {}, not {}", i, v.name, expected.str(), given.str());
    }
    std::memcpy(data_[artifact_.inputs[i]], inputs[i].raw(), inputs[i].nbytes());
  }
  if (gpu_) {
    RunGpu();
  } else {
    RunCalls(nullptr, 0);
  }
  return Outputs();
}

std::vector<double> GraphExecutor::RunTimedCalls(int alone_repeats) {
  std::vector<double> seconds;
  if (gpu_) {
    RunGpuCalls(&seconds, alone_repeats);
  } else {
    RunCalls(&seconds, alone_repeats);
  }
  return seconds;
}

// ---- The GPU side of a cuda artifact.

struct GraphExecutor::GpuState {
  // The functions' programs: the cubin loaded, a kernel per launch, their own intermediates.
  struct Program {
    GpuProgram program;
    cuda::Module module;
    std::vector<cuda::Kernel> kernels;
    std::vector<cuda::DeviceBuffer> intermediates;
  };
  cuda::Context context;
  std::vector<Program> programs;           // a library function's is empty
  std::vector<cuda::DeviceBuffer> values;  // one per graph value
  cuda::DeviceBuffer workspace;            // the GPU library's scratch memory, when a call has one
};

GraphExecutor::~GraphExecutor() {
  // A GPU library's kernel may own device memory of the context gpu_ holds: freed first.
  library_kernels_.clear();
}

void GraphExecutor::LoadGpu(const std::string& dir) {
  const fs::path root(dir);
  try {
    gpu_ = std::make_unique<GpuState>();
  } catch (const std::exception& e) {
    TT_USER_ERROR("{}: compiled for '{}', which needs this host's GPU: {}", dir, artifact_.target,
                  e.what());
  }
  GpuState& g = *gpu_;
  const std::string arch = g.context.info().Arch();
  if (arch != target_.arch) {
    TT_USER_ERROR("{}: compiled for {}, but this host's GPU ({}) is {}; compile the model again "
                  "with --target \"cuda -arch={}\"",
                  dir, target_.arch, g.context.info().name, arch, arch);
  }
  // Step 1. The programs, each checked against the function it was compiled from and the values
  // it is called on.
  for (const ArtifactFunction& f : artifact_.functions) {
    GpuState::Program p;
    if (!f.library.empty()) {  // built per call, once the constants are on the device (step 3)
      g.programs.push_back(std::move(p));
      continue;
    }
    try {
      p.program = GpuProgram::Deserialize(ReadBytes(root / f.object_file));
      p.module = g.context.Load(p.program.cubin);
      for (const GpuProgram::Launch& l : p.program.launches) {
        p.kernels.push_back(p.module.Function(l.kernel));
      }
      for (const GpuProgram::Intermediate& i : p.program.intermediates) {
        p.intermediates.push_back(
            g.context.Allocate(static_cast<size_t>(std::max<int64_t>(i.elements, 1)) *
                               i.dtype.bytes()));
      }
    } catch (const std::exception& e) {
      TT_USER_ERROR("{}: cannot load '{}': {}", dir, f.object_file, e.what());
    }
    // The parameters come from the function the program was compiled from.
    PrimFunc func = ParsePrimFunc(ReadBytes(root / f.ir_file), (root / f.ir_file).string());
    std::vector<KernelParam> params;
    for (const Buffer& b : func->params) params.push_back({b->dtype, b.ConstNumElements()});
    CheckCalls(artifact_, dir, static_cast<int>(g.programs.size()), f.name, params);
    const size_t buffers = params.size() + p.intermediates.size();
    for (const GpuProgram::Launch& l : p.program.launches) {
      for (int a : l.args) {
        if (a < 0 || static_cast<size_t>(a) >= buffers) {
          TT_USER_ERROR("{}: '{}' launches {} with buffer {} of {}", dir, f.object_file, l.kernel,
                        a, buffers);
        }
      }
    }
    g.programs.push_back(std::move(p));
  }
  // Step 2. Device memory for every value, the constants uploaded once.
  LoadInputsAndConstants(dir);
  for (size_t i = 0; i < artifact_.values.size(); ++i) {
    const ArtifactValue& v = artifact_.values[i];
    const int64_t bytes = v.NumElements() * v.dtype.bytes();
    g.values.push_back(g.context.Allocate(static_cast<size_t>(std::max<int64_t>(bytes, 1))));
    if (v.kind == ArtifactValueKind::kConstant) {
      g.context.CopyToDevice(g.values.back(), data_[i], static_cast<size_t>(bytes));
    }
    if (v.kind == ArtifactValueKind::kCall) {
      intermediate_bytes_ += bytes;
      intermediate_bytes_unshared_ += bytes;
    }
  }
  // Step 3. A GPU library's kernel for every call of a library function.
  library_kernels_.resize(artifact_.calls.size());
  for (size_t c = 0; c < artifact_.calls.size(); ++c) {
    const ArtifactCall& call = artifact_.calls[c];
    const ArtifactFunction& f = artifact_.functions[call.function];
    if (f.library.empty()) continue;
    if (g.workspace.bytes() == 0)
      g.workspace = g.context.Allocate(offload::kGpuLibraryWorkspaceBytes);
    library_kernels_[c] = BuildLibraryKernel(
        dir, call, f,
        {.gpu_workspace = g.workspace.address(), .gpu_workspace_bytes = g.workspace.bytes()});
  }
}

void GraphExecutor::RunGpuCalls(std::vector<double>* seconds, int alone_repeats) {
  GpuState& g = *gpu_;
  for (size_t c = 0; c < artifact_.calls.size(); ++c) {
    const ArtifactCall& call = artifact_.calls[c];
    GpuState::Program& p = g.programs[call.function];
    std::vector<int> params = call.args;
    params.push_back(call.output);
    auto launch = [&] {
      if (library_kernels_[c]) {
        std::vector<const void*> args;
        for (int a : call.args)
          args.push_back(reinterpret_cast<const void*>(g.values[a].address()));
        library_kernels_[c]->Run(args, reinterpret_cast<void*>(g.values[call.output].address()));
        return;
      }
      for (size_t k = 0; k < p.program.launches.size(); ++k) {
        const GpuProgram::Launch& l = p.program.launches[k];
        std::vector<uint64_t> addresses;
        for (int a : l.args) {
          addresses.push_back(static_cast<size_t>(a) < params.size()
                                  ? g.values[params[a]].address()
                                  : p.intermediates[a - params.size()].address());
        }
        std::vector<void*> args;
        for (uint64_t& address : addresses) args.push_back(&address);
        g.context.Launch(p.kernels[k], l.grid, l.block, l.dynamic_shared_bytes, std::move(args));
      }
    };
    try {
      if (seconds == nullptr) {
        launch();
        continue;
      }
      auto timed = [&] { return g.context.TimeMs([] {}, launch) / 1e3; };
      double first = timed();
      seconds->push_back(alone_repeats > 0 ? MedianOfRepeats(alone_repeats, timed) : first);
    } catch (const std::runtime_error& e) {  // cuda::CudaError, cuda::CudaUnavailable
      TT_USER_ERROR("function '{}' (call {}) failed on the GPU: {}",
                    artifact_.functions[call.function].name, c, e.what());
    }
  }
  try {
    g.context.Synchronize();
  } catch (const cuda::CudaError& e) {
    TT_USER_ERROR("the model failed on the GPU: {}", e.what());
  }
}

void GraphExecutor::RunGpu() {
  GpuState& g = *gpu_;
  for (int i : artifact_.inputs) {
    const ArtifactValue& v = artifact_.values[i];
    g.context.CopyToDevice(g.values[i], data_[i],
                           static_cast<size_t>(v.NumElements() * v.dtype.bytes()));
  }
  RunGpuCalls(nullptr, 0);
}

std::vector<NDArray> GraphExecutor::Outputs() {
  std::vector<NDArray> outputs;
  for (int o : artifact_.outputs) {
    const ArtifactValue& v = artifact_.values[o];
    NDArray out = NDArray::Empty(v.shape, v.dtype);
    if (gpu_) {
      gpu_->context.CopyToHost(out.raw(), gpu_->values[o], static_cast<size_t>(out.nbytes()));
    } else {
      std::memcpy(out.raw(), data_[o], out.nbytes());
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

graph::Graph GraphExecutor::ReferenceGraph() const {
  graph::Graph g;
  std::vector<graph::ValueId> ids(artifact_.values.size(), -1);
  auto copy_of = [&](int index) {
    const ArtifactValue& v = artifact_.values[index];
    NDArray a = NDArray::Empty(v.shape, v.dtype);
    std::memcpy(a.raw(), data_[index], a.nbytes());
    return a;
  };
  for (int i : artifact_.inputs) {
    ids[i] = g.AddInput(artifact_.values[i].name,
                        graph::TensorType{artifact_.values[i].shape, artifact_.values[i].dtype});
  }
  for (size_t i = 0; i < artifact_.values.size(); ++i) {
    const ArtifactValue& v = artifact_.values[i];
    if (v.kind != ArtifactValueKind::kConstant) continue;
    NDArray data = copy_of(static_cast<int>(i));
    // The functions as written read the constant as it was before packing.
    if (!v.layout.empty()) data = PackedLayout::FromJson(v.layout, v.name).Unpack(data);
    ids[i] = g.AddConstant(v.name, std::move(data));
  }
  std::vector<PrimFunc> funcs;
  for (const ArtifactFunction& f : artifact_.functions) {
    fs::path path = fs::path(artifact_.dir) / f.ir_file;
    funcs.push_back(ParsePrimFunc(ReadBytes(path), path.string()));
  }
  for (const ArtifactCall& call : artifact_.calls) {
    graph::Call c;
    c.kind = graph::CallKind::kPrimFunc;
    c.op = artifact_.functions[call.function].name;
    c.func = funcs[call.function];
    for (int arg : call.args) c.args.push_back(ids[arg]);
    const ArtifactValue& out = artifact_.values[call.output];
    ids[call.output] = g.AddCall(out.name, std::move(c), graph::TensorType{out.shape, out.dtype});
  }
  for (int o : artifact_.outputs) g.AddOutput(ids[o]);
  return g;
}

}  // namespace tirtune::model
