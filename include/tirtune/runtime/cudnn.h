// cuDNN, NVIDIA's neural-network library, loaded with dlopen on first use (libcudnn.so.9, by the
// loader's search or from /usr/local/cuda/lib64), like the driver (cuda_driver.h) and cuBLASLt
// (cublas_lt.h): a tirtune binary starts without it and says why when a GPU library call needs
// it. One call is wrapped: a float32 convolution (grouped, strided, dilated; 1-D and 2-D as 4-D
// tensors, 3-D as 5-D) and the steps after it, run in place on its output, on the default stream
// of the context current on the calling thread.
//
// Tensors are described by their dimensions in cuDNN's order (N, C, spatial...) and a stride for
// each, so channels-last activations are read where they lie. The filter must be packed in one of
// cuDNN's formats; the weight is transformed into the channels-last one (K, spatial..., C), from
// whatever strides it is stored with: once, into device memory the convolution owns, for a
// constant weight; in the workspace before each convolution for any other. How a graph's
// composite maps onto this is the caller's (offload/cudnn_plan.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tirtune::cuda {

/// A tensor as cuDNN sees it: its dimensions in cuDNN's order (N, C, then the spatial ones; 4 or
/// 5 of them) and each one's stride, in elements.
struct DnnTensor {
  std::vector<int64_t> dims, strides;
};

/// What runs after the convolution, in place on its output y, in order.
struct DnnStep {
  enum Kind {
    kAdd,          // y += operand (cudnnAddTensor; the operand broadcast where its dims are 1)
    kMultiply,     // y *= operand (cudnnOpTensor, likewise broadcast)
    kRelu,         // y = max(y, 0)
    kClippedRelu,  // y = min(max(y, 0), ceiling)
  } kind;
  DnnTensor operand;  // kAdd, kMultiply
  double ceiling = 0;
};

/// y = steps(conv(x, weight)): a cross-correlation (no filter flip), as deep-learning frameworks
/// define convolution, in float32 with FMA arithmetic only (no TF32 tensor cores).
struct DnnConvDesc {
  DnnTensor x, y;
  /// The weight as stored: dimensions (K, C / groups, spatial...) and its own strides.
  DnnTensor weight;
  /// The weight is a constant: its values at one address never change, so it is packed on the
  /// first run into memory the convolution owns and again only when run with another address.
  /// Otherwise it is packed into the workspace on every run.
  bool weight_constant = false;
  /// Per spatial dimension; the padding is the same on both sides.
  std::vector<int64_t> pad, stride, dilation;
  int64_t groups = 1;
  std::vector<DnnStep> steps;
};

/// The strides of `dims` (K, C, spatial...) packed channels last: K, spatial..., C in memory (the
/// filter format cuDNN calls NHWC).
std::vector<int64_t> PackedFilterStrides(const std::vector<int64_t>& dims);

/// Bytes of a convolution's packed filter (rounded up to 256): the start of the workspace holds
/// it unless the weight is constant.
size_t PackedFilterBytes(const DnnConvDesc& desc);

/// Where `desc`'s steps are a bias (one value per output channel), maybe a tensor of the output's
/// shape added, in either order, then ReLU: the indices of those steps {bias, sum (-1 when
/// none), relu}, which run in the convolution's own call (cudnnConvolutionBiasActivationForward);
/// nullopt for any other steps.
std::optional<std::array<int, 3>> FusedBiasSumRelu(const DnnConvDesc& desc);

/// True when cuDNN loads; otherwise false with the reason in `why`.
bool CudnnAvailable(std::string* why = nullptr);

/// A prepared convolution: its descriptors made once. The fastest FMA algorithm within the
/// workspace is found by cuDNN (cudnnFindConvolutionForwardAlgorithmEx) on the first run, on the
/// run's own buffers, once per process for convolutions of the same descriptors. Steps that are a
/// bias, maybe a tensor added, then ReLU run in the convolution's own call
/// (cudnnConvolutionBiasActivationForward) where cuDNN has a kernel for it, else one by one. Needs
/// a current CUDA context (cuda::Context) when made and run.
class DnnConvolution {
 public:
  /// CudaUnavailable when there is no driver or cuDNN cannot be loaded; CudaError naming the
  /// call that failed (cuDNN refusing a descriptor), or when the packed filter of a weight that
  /// is not constant does not fit `workspace_bytes`.
  DnnConvolution(const DnnConvDesc& desc, size_t workspace_bytes);
  ~DnnConvolution();
  DnnConvolution(const DnnConvolution&) = delete;
  DnnConvolution& operator=(const DnnConvolution&) = delete;

  /// Enqueues the convolution and its steps on the default stream: device addresses of x, the
  /// weight, each step's operand (`operands[i]` for steps[i]; 0 for an activation), y and a
  /// workspace of the bytes given at construction. CudaError naming the cuDNN call that refused,
  /// or when cuDNN has no FMA algorithm for it, or when the device has no memory for a constant
  /// weight's packed filter. One caller at a time.
  void Run(uint64_t x, uint64_t weight, const std::vector<uint64_t>& operands, uint64_t y,
           uint64_t workspace);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tirtune::cuda
