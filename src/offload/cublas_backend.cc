// The cuBLAS backend (library.h): a composite planned as one cuBLASLt product (cublas_plan.h),
// run on the GPU. Planning needs nothing of CUDA, so composites are matched, declined and
// compiled into artifacts on any host; the product's descriptors and algorithm are made where
// it runs: at Build when a GPU's scratch memory is given, else on the first run.
#include <fmt/format.h>

#include <memory>

#include "composite_body.h"
#include "tirtune/offload/cublas_plan.h"
#include "tirtune/offload/library.h"
#include "tirtune/support/error.h"

namespace tirtune::offload {
namespace {

using graph::Call;
using graph::Graph;

class CublasKernel : public LibraryKernel {
 public:
  CublasKernel(const Graph& graph, const Call& call, const LibraryOptions& options)
      : plan_(PlanCublas(graph, call)), options_(options), arity_(call.args.size()) {
    describe_ = fmt::format("cuBLASLt {} for %{}", plan_.summary, graph.value(call.output).name);
    // Built to run (a GPU's scratch memory given): the product is prepared now, not in the
    // first run, which is the one verified and may be timed.
    if (options.gpu_workspace != 0) Prepare();
  }

  void Run(const std::vector<const void*>& args, void* out) override {
    if (args.size() != arity_) {
      TT_USER_ERROR("{}: {} arguments, expected {}", describe_, args.size(), arity_);
    }
    Prepare();
    auto address = [&](int arg) {
      return arg < 0 ? uint64_t{0} : reinterpret_cast<uint64_t>(args[static_cast<size_t>(arg)]);
    };
    matmul_->Run(address(plan_.a), address(plan_.b), address(plan_.addend),
                 reinterpret_cast<uint64_t>(out), address(plan_.bias), options_.gpu_workspace);
  }

  std::string Describe() const override { return describe_; }

 private:
  void Prepare() {
    if (!matmul_) {
      matmul_ = std::make_unique<cuda::LtMatmul>(plan_.matmul, options_.gpu_workspace_bytes);
    }
  }

  CublasPlan plan_;
  LibraryOptions options_;
  size_t arity_;
  std::string describe_;
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
    return std::make_unique<CublasKernel>(graph, call, options);
  }
};

}  // namespace

const LibraryBackend* CublasBackend() {
  static const Cublas backend;
  return &backend;
}

}  // namespace tirtune::offload
