// The cuDNN backend (library.h): a composite planned as one cuDNN convolution and the steps after
// it (cudnn_plan.h), run on the GPU. Planning needs nothing of CUDA, so composites are matched,
// declined and compiled into artifacts on any host; the descriptors are made where it runs: at
// Build when a GPU's scratch memory is given, else on the first run.
#include <fmt/format.h>

#include <memory>
#include <utility>

#include "composite_body.h"
#include "gpu_library_kernel.h"
#include "tirtune/offload/cudnn_plan.h"
#include "tirtune/offload/library.h"
#include "tirtune/runtime/cuda_driver.h"

namespace tirtune::offload {
namespace {

using graph::Call;
using graph::Graph;

class CudnnKernel : public GpuLibraryKernel {
 public:
  CudnnKernel(const Graph& graph, const Call& call, const LibraryOptions& options)
      : CudnnKernel(PlanCudnn(graph, call), graph, call, options) {}

  void Run(const std::vector<const void*>& args, void* out) override {
    CheckArity(args);
    Prepare();
    std::vector<uint64_t> operands;
    for (int arg : plan_.step_operands) {
      operands.push_back(arg == kFoldedBias ? folded_bias_.address() : Address(args, arg));
    }
    const uint64_t weight =
        folded_weight_.bytes() > 0 ? folded_weight_.address() : Address(args, plan_.weight);
    conv_->Run(Address(args, plan_.data), weight, operands, reinterpret_cast<uint64_t>(out),
               options().gpu_workspace);
  }

 private:
  CudnnKernel(CudnnPlan plan, const Graph& graph, const Call& call, const LibraryOptions& options)
      : GpuLibraryKernel(
            fmt::format("cuDNN {} for %{}", plan.summary, graph.value(call.output).name),
            call.args.size(), options),
        plan_(std::move(plan)) {
    if (BuiltToRun()) Prepare();
  }

  // The descriptors, and a folded weight and bias copied to the device (the host copies then
  // let go), on the context current now.
  void Prepare() {
    if (!conv_) {
      conv_ = std::make_unique<cuda::DnnConvolution>(plan_.conv, options().gpu_workspace_bytes);
    }
    if (plan_.folded_weight.defined()) {
      folded_weight_ = cuda::UploadOnCurrentContext(
          plan_.folded_weight.raw(), static_cast<size_t>(plan_.folded_weight.nbytes()));
      folded_bias_ = cuda::UploadOnCurrentContext(plan_.folded_bias.data(),
                                                  plan_.folded_bias.size() * sizeof(float));
      plan_.folded_weight = NDArray();
      plan_.folded_bias.clear();
    }
  }

  CudnnPlan plan_;
  std::unique_ptr<cuda::DnnConvolution> conv_;
  cuda::DeviceBuffer folded_weight_, folded_bias_;  // none when nothing folded
};

class Cudnn : public LibraryBackend {
 public:
  std::string Name() const override { return "cudnn"; }
  bool OnGpu() const override { return true; }

  std::vector<graph::FusionPattern> Patterns() const override {
    using graph::IsConstant;
    using graph::IsOp;
    using graph::Pattern;
    using graph::Wildcard;
    const DataType f32 = DataType::Float(32);
    // A convolution, then up to five of: a bias, a tensor added, a per-channel constant added or
    // multiplied, ReLU, clip. Which of them cuDNN runs is decided by the check (PlanCudnn).
    auto chain = [&](Pattern p) {
      for (int i = 0; i < 5; ++i) {
        p = IsOp("bias_add", {p, IsConstant()}) | IsOp("add", {p, Wildcard()}) |
            IsOp("add", {Wildcard(), p}) | IsOp("multiply", {p, IsConstant()}) |
            IsOp("multiply", {IsConstant(), p}) | IsOp("relu", {p}) | IsOp("clip", {p}) | p;
      }
      return p;
    };
    std::vector<graph::FusionPattern> patterns;
    for (const char* conv : {"conv1d", "conv2d", "conv3d"}) {
      patterns.push_back({fmt::format("cudnn.{}", conv),
                          chain(IsOp(conv, {Wildcard().HasDtype(f32), Wildcard().HasDtype(f32)}))});
    }
    body::CheckByBuilding(&patterns,
                          [](const Graph& g, const Call& probe) { PlanCudnn(g, probe); });
    return patterns;
  }

  std::unique_ptr<LibraryKernel> Build(const Graph& graph, const Call& call,
                                       const LibraryOptions& options) const override {
    if (call.attrs.Has(graph::kAlgorithmAttr)) {  // it offers none (Algorithms)
      throw LibraryDeclined(
          fmt::format("cuDNN has no algorithm '{}'", call.attrs.GetString(graph::kAlgorithmAttr)));
    }
    return std::make_unique<CudnnKernel>(graph, call, options);
  }
};

}  // namespace

const LibraryBackend* CudnnBackend() {
  static const Cudnn backend;
  return &backend;
}

}  // namespace tirtune::offload
