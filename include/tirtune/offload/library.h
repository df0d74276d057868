// Library backends: composites of FuseOpsByPattern (graph/pattern.h) run by a vendor library
// instead of a tuned kernel. A backend names the patterns it takes and builds, for one
// composite, a LibraryKernel: the library's primitives created and constant weights reordered
// into the library's preferred layout once, then run on the call's arguments any number of times.
//
//   const LibraryBackend* dnnl = DnnlBackend();
//   PatternFusionResult r = FuseOpsByPattern(graph, dnnl->Patterns());
//   std::unique_ptr<LibraryKernel> k = dnnl->Build(r.graph, r.graph.call(0), {.threads = 2});
//   k->Run({x.raw(), w.raw()}, out.raw());
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/graph/graph.h"
#include "tirtune/graph/pattern.h"
#include "tirtune/support/byte_range.h"
#include "tirtune/support/error.h"

namespace tirtune::offload {

/// A library declined a composite (a shape, dtype or attribute it does not take); the message
/// says what. The function falls back to a tuned kernel.
class LibraryDeclined : public UserError {
 public:
  using UserError::UserError;
};

/// One composite, ready to run.
class LibraryKernel {
 public:
  virtual ~LibraryKernel() = default;
  /// Runs on `args` (the elements of the composite call's arguments, in order, of the types
  /// Build saw; constants included) and writes `out`, the call's result. Not thread-safe: one
  /// caller at a time.
  virtual void Run(const std::vector<const void*>& args, void* out) = 0;
  /// What the library runs, for messages: "oneDNN convolution (NHWC, weights reordered to
  /// Acdb16a) + sum + eltwise_relu".
  virtual std::string Describe() const = 0;
  /// Host memory holding the kernel's own copies of constant operands (weights reordered at
  /// Build), which a timer with cold constants evicts before every call; none by default.
  virtual std::vector<ByteRange> ConstantMemory() const { return {}; }
};

/// The scratch memory a GPU library's kernels are given (cuBLASLt's algorithms take up to a few
/// MiB); one buffer per process, shared by its calls, which run one after another.
inline constexpr size_t kGpuLibraryWorkspaceBytes = size_t{32} << 20;

struct LibraryOptions {
  /// Threads the library may use (the target's cores).
  int threads = 1;
  /// A GPU backend's scratch memory on the device (an address and its bytes), which its kernels
  /// may use while they run; none when 0.
  uint64_t gpu_workspace = 0;
  size_t gpu_workspace_bytes = 0;
};

class LibraryBackend {
 public:
  virtual ~LibraryBackend() = default;
  /// "dnnl": the Codegen attribute of its composites.
  virtual std::string Name() const = 0;
  /// A GPU backend's kernels run on the CUDA context current on the calling thread, in order
  /// with its default stream: Run takes device addresses (as pointers) and returns once the
  /// work is enqueued. A CPU backend's take host memory and return when done.
  virtual bool OnGpu() const { return false; }
  /// Its patterns for FuseOpsByPattern, in priority order; each pattern's check already refuses
  /// what Build would decline where that is known from the graph alone.
  virtual std::vector<graph::FusionPattern> Patterns() const = 0;
  /// The kernel of composite call `call` (CallKind::kGraph with the Composite attribute) of
  /// `graph`; `constants[i]` holds argument i's data when it is a constant. Throws
  /// LibraryDeclined when the library cannot run it.
  virtual std::unique_ptr<LibraryKernel> Build(const graph::Graph& graph, const graph::Call& call,
                                               const LibraryOptions& options) const = 0;
  /// The algorithms besides its default that the backend can run composite call `call` of
  /// `graph` with (the call's kAlgorithmAttr chooses one in Build); none by default. The tuner
  /// measures each as a library candidate of its own.
  virtual std::vector<std::string> Algorithms(const graph::Graph& graph,
                                              const graph::Call& call) const {
    (void)graph;
    (void)call;
    return {};
  }
};

/// oneDNN runs on libgomp, whose idle threads spin at a barrier for about 300,000 iterations
/// before they sleep. On a busy machine a spinning thread then holds the core that a descheduled
/// member of its team needs, and a call of microseconds takes a scheduler tick or three (4-12 ms,
/// seen while tuning). With a spin of 10,000 iterations the stalls end and an idle machine keeps
/// the fast path (a passive wait made a small model 3-5x slower). libgomp reads its environment when
/// it is loaded, before main, so this sets GOMP_SPINCOUNT and executes the program again, once;
/// a user's GOMP_SPINCOUNT or OMP_WAIT_POLICY is left alone. Call first thing in main.
void BoundOpenMpSpinning(char** argv);

/// The backend named `name` ("dnnl", "cublas", "cudnn"), or nullptr when there is none or it cannot
/// be loaded (BackendUnavailable says why).
const LibraryBackend* FindBackend(const std::string& name);
/// Why FindBackend(name) is null ("oneDNN could not be loaded (libdnnl.so.2: cannot open shared
/// object file ...)", "no library backend 'x'"); empty when the backend is there.
std::string BackendUnavailable(const std::string& name);

/// The composite call `call` of `graph` standing alone, as a backend reads it: a graph whose
/// values are the call's arguments (constants with their data, the others inputs, names kept)
/// and whose one call is the composite (CallKind::kGraph, attributes Composite and Codegen, a body
/// of operator calls), with the call's output name. `call` is a composite of FuseOpsByPattern or
/// a composite's PrimFunc call after the pipeline, whose legalized body still names each
/// operator and its attributes.
graph::Graph StandaloneComposite(const graph::Graph& graph, const graph::Call& call);

/// A standalone composite as JSON text, for an artifact: its attributes, the types of its
/// arguments (which are constants), its operators with their attributes and arguments. The
/// constants' data is not in it, except, with `state_values`, the values of constants of at most
/// 16 finite elements ("value": what MakeMeasureTask measures the composite with; off for
/// composites whose constants are placeholders, as a workload's zero weights): CompositeFromJson
/// takes the data back as `constants` (argument index -> data; every argument that was a constant
/// must have it, of its type or reshaped: as many elements of its dtype).
/// UserError naming the field for a damaged text.
std::string CompositeToJson(const graph::Graph& standalone, bool state_values = true);
graph::Graph CompositeFromJson(const std::string& json, const std::map<int, NDArray>& constants);
/// The description `json` with the backend's algorithm `algorithm` (LibraryBackend::Algorithms;
/// "algorithm" in the JSON, kAlgorithmAttr on the composite call), or without one when empty.
std::string CompositeWithAlgorithm(const std::string& json, const std::string& algorithm);
/// The algorithms besides the default that the composite's backend (its "codegen") offers for
/// the composite `json` describes (LibraryBackend::Algorithms, its constants read as zeros);
/// none when the backend cannot be loaded.
std::vector<std::string> LibraryAlgorithms(const std::string& json);

/// The oneDNN backend (CPU): conv1d/2d/3d (grouped, depthwise, strided, dilated), dense, matmul
/// and batch_matmul, each with a bias and the post-ops oneDNN fuses (sum, relu, clip, gelu) in
/// the composite's order; max and average pooling; a 3x3 stride-1 conv2d also as Winograd
/// F(4x4, 3x3) and F(2x2, 3x3) (Algorithms "winograd4", "winograd2"). It is the module
/// libtirtune_dnnl.so, loaded on first use ($TIRTUNE_DNNL_MODULE, else the one the build made,
/// else next to the program); nullptr when it cannot be loaded (oneDNN missing):
/// BackendUnavailable("dnnl") says why.
const LibraryBackend* DnnlBackend();

/// The cuBLAS backend (GPU, cuBLASLt): dense, matmul and batch_matmul, their operands read in
/// place through transposes and reshapes where one stride per matrix says them, with a bias, a
/// sum and ReLU or tanh-GELU after it in the order cuBLASLt applies them (cublas_plan.h says
/// how). Always present: planning needs nothing of CUDA; running loads cuBLASLt (cublas_lt.h).
const LibraryBackend* CublasBackend();

/// The cuDNN backend (GPU): conv1d/2d/3d (grouped, depthwise, strided, dilated; the same padding
/// on both sides), with a bias, a per-channel constant added or multiplied, a sum, ReLU and
/// clip(0, c) after it in the composite's order (cudnn_plan.h says how). Always present: planning
/// needs nothing of CUDA; running loads cuDNN (runtime/cudnn.h).
const LibraryBackend* CudnnBackend();

}  // namespace tirtune::offload
