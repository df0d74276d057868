// The cuBLAS backend (library.h): a composite planned as one cuBLASLt product (cublas_plan.h),
// run on the GPU. Planning needs nothing of CUDA, so composites are matched, declined and
// compiled into artifacts on any host; the product's descriptors and algorithm are made where
// it runs: at Build when a GPU's scratch memory is given, else on the first run.
#include <fmt/format.h>

#include <memory>
#include <utility>

#include "composite_body.h"
#include "gpu_library_kernel.h"
#include "tirtune/offload/cublas_plan.h"
#include "tirtune/offload/library.h"

namespace tirtune::offload {
namespace {

using graph::Call;
using graph::Graph;

class CublasKernel : public GpuLibraryKernel {
 public:
  CublasKernel(const Graph& graph, const Call& call, const LibraryOptions& options)
      : CublasKernel(PlanCublas(graph, call), graph, call, options) {}

  void Run(const std::vector<const void*>& args, void* out) override {
    CheckArity(args);
    Prepare();
    matmul_->Run(Address(args, plan_.a), Address(args, plan_.b), Address(args, plan_.addend),
                 reinterpret_cast<uint64_t>(out), Address(args, plan_.bias),
                 options().gpu_workspace);
  }

 private:
  CublasKernel(CublasPlan plan, const Graph& graph, const Call& call, const LibraryOptions& options)
      : GpuLibraryKernel(
            fmt::format("cuBLASLt {} for %{}", plan.summary, graph.value(call.output).name),
            call.args.size(), options),
        plan_(std::move(plan)) {
    if (BuiltToRun()) Prepare();
  }

  void Prepare() {
    if (!matmul_) {
      matmul_ = std::make_unique<cuda::LtMatmul>(plan_.matmul, options().gpu_workspace_bytes);
    }
  }

  CublasPlan plan_;
  std::unique_ptr<cuda::LtMatmul> matmul_;
};

class Cublas : public LibraryBackend {
 public:
  std::string Name() const override { return "cublas"; }
  bool OnGpu() const override { return true; }

  std::vector<graph::FusionPattern> Patterns() const override {
    using graph::IsOp;
    using graph::Pattern;
    using graph::Wildcard;
    const DataType f32 = DataType::Float(32);
    // A product, then up to four of: a bias, a tensor added, ReLU or tanh-GELU, a reshape that
    // keeps the channels last. Which orders cuBLASLt's epilogue can run is decided by the check
    // (PlanCublas).
    auto chain = [&](Pattern p) {
      for (int i = 0; i < 4; ++i) {
        p = IsOp("bias_add", {p, graph::IsConstant()}) | IsOp("add", {p, Wildcard()}) |
            IsOp("add", {Wildcard(), p}) | IsOp("relu", {p}) | IsOp("gelu_tanh", {p}) |
            IsOp("reshape", {p}) | p;
      }
      return p;
    };
    std::vector<graph::FusionPattern> patterns;
    const Pattern x = Wildcard().HasDtype(f32);
    patterns.push_back({"cublas.dense", chain(IsOp("dense", {x, x}))});
    // Operands transposed or reshaped first, read in place: before the plain products.
    for (const char* mm : {"matmul", "batch_matmul"}) {
      patterns.push_back({fmt::format("cublas.{}_of_views", mm),
                          chain(IsOp(mm, {body::ViewedOperand(x), body::ViewedOperand(x) | x}) |
                                IsOp(mm, {x, body::ViewedOperand(x)}))});
    }
    for (const char* mm : {"matmul", "batch_matmul"}) {
      patterns.push_back({fmt::format("cublas.{}", mm), chain(IsOp(mm, {x, x}))});
    }
    body::CheckByBuilding(&patterns,
                          [](const Graph& g, const Call& probe) { PlanCublas(g, probe); });
    return patterns;
  }

  std::unique_ptr<LibraryKernel> Build(const Graph& graph, const Call& call,
                                       const LibraryOptions& options) const override {
    if (call.attrs.Has(graph::kAlgorithmAttr)) {  // it offers none (Algorithms)
      throw LibraryDeclined(
          fmt::format("cuBLAS has no algorithm '{}'", call.attrs.GetString(graph::kAlgorithmAttr)));
    }
    return std::make_unique<CublasKernel>(graph, call, options);
  }
};

}  // namespace

const LibraryBackend* CublasBackend() {
  static const Cublas backend;
  return &backend;
}

}  // namespace tirtune::offload
