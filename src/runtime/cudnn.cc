// cuDNN through dlopen (see cudnn.h). The handful of declarations used are written here, as for
// the driver and cuBLASLt: the CUDA headers stay out of the build. Status codes are ints (0
// success); descriptors and the handle are opaque pointers. These are cuDNN's "legacy" calls,
// which cuDNN 9 keeps (libcudnn.so.9 loads its convolution and operation libraries by name).
#include "tirtune/runtime/cudnn.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <climits>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>

#ifdef TIRTUNE_CHECK_CUDNN_H
#include <cudnn.h>
#endif

#include "cuda_library.h"
#include "tirtune/runtime/cuda_driver.h"

namespace tirtune::cuda {
namespace {

using Status = int;
using Handle = void*;
using TensorDesc = void*;
using FilterDesc = void*;
using ConvDesc = void*;
using ActivationDesc = void*;
using OpTensorDesc = void*;
constexpr Status kSuccess = 0;
constexpr Status kNotSupported = 3000;  // CUDNN_STATUS_NOT_SUPPORTED; 3001-3999 say why
// cudnn_graph.h / cudnn_ops.h / cudnn_cnn.h enumerators.
constexpr int kFloat = 0;                   // CUDNN_DATA_FLOAT
constexpr int kFormatNhwc = 1;              // CUDNN_TENSOR_NHWC
constexpr int kCrossCorrelation = 1;        // CUDNN_CROSS_CORRELATION
constexpr int kFmaMath = 3;                 // CUDNN_FMA_MATH: no tensor cores, no TF32
constexpr int kTensorOpMath = 1;            // CUDNN_TENSOR_OP_MATH
constexpr int kTensorOpConversion = 2;      // CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
constexpr int kRelu = 1, kClippedRelu = 3;  // CUDNN_ACTIVATION_*
constexpr int kNoNan = 0;                   // CUDNN_NOT_PROPAGATE_NAN
constexpr int kOpTensorMul = 1;             // CUDNN_OP_TENSOR_MUL
constexpr int kMaxAlgorithms = 16;

struct AlgoPerf {
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

#ifdef TIRTUNE_CHECK_CUDNN_H
// Where the CUDA toolkit's headers hold cuDNN, the build checks these declarations against them
// (src/CMakeLists.txt).
static_assert(kSuccess == CUDNN_STATUS_SUCCESS && kNotSupported == CUDNN_STATUS_NOT_SUPPORTED &&
              kFloat == CUDNN_DATA_FLOAT && kFormatNhwc == CUDNN_TENSOR_NHWC &&
              kCrossCorrelation == CUDNN_CROSS_CORRELATION);
static_assert(kFmaMath == CUDNN_FMA_MATH && kTensorOpMath == CUDNN_TENSOR_OP_MATH &&
              kTensorOpConversion == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
static_assert(kRelu == CUDNN_ACTIVATION_RELU && kClippedRelu == CUDNN_ACTIVATION_CLIPPED_RELU &&
              kNoNan == CUDNN_NOT_PROPAGATE_NAN && kOpTensorMul == CUDNN_OP_TENSOR_MUL);
static_assert(sizeof(AlgoPerf) == sizeof(cudnnConvolutionFwdAlgoPerf_t) &&
              offsetof(AlgoPerf, status) == offsetof(cudnnConvolutionFwdAlgoPerf_t, status) &&
              offsetof(AlgoPerf, memory) == offsetof(cudnnConvolutionFwdAlgoPerf_t, memory) &&
              offsetof(AlgoPerf, math_type) == offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType));
#endif

struct DnnApi {
  Status (*cudnnCreate)(Handle*);
  const char* (*cudnnGetErrorString)(Status);
  Status (*cudnnCreateTensorDescriptor)(TensorDesc*);
  Status (*cudnnSetTensorNdDescriptor)(TensorDesc, int, int, const int*, const int*);
  Status (*cudnnDestroyTensorDescriptor)(TensorDesc);
  Status (*cudnnCreateFilterDescriptor)(FilterDesc*);
  Status (*cudnnSetFilterNdDescriptor)(FilterDesc, int, int, int, const int*);
  Status (*cudnnDestroyFilterDescriptor)(FilterDesc);
  Status (*cudnnCreateConvolutionDescriptor)(ConvDesc*);
  Status (*cudnnSetConvolutionNdDescriptor)(ConvDesc, int, const int*, const int*, const int*, int,
                                            int);
  Status (*cudnnSetConvolutionGroupCount)(ConvDesc, int);
  Status (*cudnnSetConvolutionMathType)(ConvDesc, int);
  Status (*cudnnDestroyConvolutionDescriptor)(ConvDesc);
  Status (*cudnnGetConvolutionNdForwardOutputDim)(ConvDesc, TensorDesc, FilterDesc, int, int*);
  Status (*cudnnFindConvolutionForwardAlgorithmEx)(Handle, TensorDesc, const void*, FilterDesc,
                                                   const void*, ConvDesc, TensorDesc, void*, int,
                                                   int*, AlgoPerf*, void*, size_t);
  Status (*cudnnConvolutionForward)(Handle, const void*, TensorDesc, const void*, FilterDesc,
                                    const void*, ConvDesc, int, void*, size_t, const void*,
                                    TensorDesc, void*);
  Status (*cudnnConvolutionBiasActivationForward)(Handle, const void*, TensorDesc, const void*,
                                                  FilterDesc, const void*, ConvDesc, int, void*,
                                                  size_t, const void*, TensorDesc, const void*,
                                                  TensorDesc, const void*, ActivationDesc,
                                                  TensorDesc, void*);
  Status (*cudnnTransformTensor)(Handle, const void*, TensorDesc, const void*, const void*,
                                 TensorDesc, void*);
  Status (*cudnnAddTensor)(Handle, const void*, TensorDesc, const void*, const void*, TensorDesc,
                           void*);
  Status (*cudnnCreateOpTensorDescriptor)(OpTensorDesc*);
  Status (*cudnnSetOpTensorDescriptor)(OpTensorDesc, int, int, int);
  Status (*cudnnDestroyOpTensorDescriptor)(OpTensorDesc);
  Status (*cudnnOpTensor)(Handle, OpTensorDesc, const void*, TensorDesc, const void*, const void*,
                          TensorDesc, const void*, const void*, TensorDesc, void*);
  Status (*cudnnCreateActivationDescriptor)(ActivationDesc*);
  Status (*cudnnSetActivationDescriptor)(ActivationDesc, int, int, double);
  Status (*cudnnDestroyActivationDescriptor)(ActivationDesc);
  Status (*cudnnActivationForward)(Handle, ActivationDesc, const void*, TensorDesc, const void*,
                                   const void*, TensorDesc, void*);
};

struct LoadedDnn {
  DnnApi api{};
  std::string error;  // why cuDNN cannot be used; empty when it can
};

const LoadedDnn& Dnn() {
  static const LoadedDnn loaded = [] {
    LoadedDnn l;
    void* lib = detail::OpenCudaLibrary("cuDNN", {"libcudnn.so.9", "libcudnn.so"}, &l.error);
    if (lib == nullptr) return l;
    auto bind = [&](const char* name, auto* fn) {
      detail::BindSymbol(lib, "cuDNN", name, fn, &l.error);
    };
    DnnApi& a = l.api;
    bind("cudnnCreate", &a.cudnnCreate);
    bind("cudnnGetErrorString", &a.cudnnGetErrorString);
    bind("cudnnCreateTensorDescriptor", &a.cudnnCreateTensorDescriptor);
    bind("cudnnSetTensorNdDescriptor", &a.cudnnSetTensorNdDescriptor);
    bind("cudnnDestroyTensorDescriptor", &a.cudnnDestroyTensorDescriptor);
    bind("cudnnCreateFilterDescriptor", &a.cudnnCreateFilterDescriptor);
    bind("cudnnSetFilterNdDescriptor", &a.cudnnSetFilterNdDescriptor);
    bind("cudnnDestroyFilterDescriptor", &a.cudnnDestroyFilterDescriptor);
    bind("cudnnCreateConvolutionDescriptor", &a.cudnnCreateConvolutionDescriptor);
    bind("cudnnSetConvolutionNdDescriptor", &a.cudnnSetConvolutionNdDescriptor);
    bind("cudnnSetConvolutionGroupCount", &a.cudnnSetConvolutionGroupCount);
    bind("cudnnSetConvolutionMathType", &a.cudnnSetConvolutionMathType);
    bind("cudnnDestroyConvolutionDescriptor", &a.cudnnDestroyConvolutionDescriptor);
    bind("cudnnGetConvolutionNdForwardOutputDim", &a.cudnnGetConvolutionNdForwardOutputDim);
    bind("cudnnFindConvolutionForwardAlgorithmEx", &a.cudnnFindConvolutionForwardAlgorithmEx);
    bind("cudnnConvolutionForward", &a.cudnnConvolutionForward);
    bind("cudnnConvolutionBiasActivationForward", &a.cudnnConvolutionBiasActivationForward);
    bind("cudnnTransformTensor", &a.cudnnTransformTensor);
    bind("cudnnAddTensor", &a.cudnnAddTensor);
    bind("cudnnCreateOpTensorDescriptor", &a.cudnnCreateOpTensorDescriptor);
    bind("cudnnSetOpTensorDescriptor", &a.cudnnSetOpTensorDescriptor);
    bind("cudnnDestroyOpTensorDescriptor", &a.cudnnDestroyOpTensorDescriptor);
    bind("cudnnOpTensor", &a.cudnnOpTensor);
    bind("cudnnCreateActivationDescriptor", &a.cudnnCreateActivationDescriptor);
    bind("cudnnSetActivationDescriptor", &a.cudnnSetActivationDescriptor);
    bind("cudnnDestroyActivationDescriptor", &a.cudnnDestroyActivationDescriptor);
    bind("cudnnActivationForward", &a.cudnnActivationForward);
    return l;
  }();
  return loaded;
}

const DnnApi& Api() {
  const LoadedDnn& l = Dnn();
  if (!l.error.empty()) throw CudaUnavailable(l.error);
  return l.api;
}

// Throws CudaError naming `call` when `status` is not success.
void Check(Status status, const std::string& call) {
  if (status == kSuccess) return;
  const char* text =
      Dnn().api.cudnnGetErrorString != nullptr ? Dnn().api.cudnnGetErrorString(status) : nullptr;
  throw CudaError(fmt::format("{}: {} (status {})", call, text ? text : "cuDNN error", status),
                  status);
}

// One cuDNN handle per process, made on first use (it belongs to the device current then: a
// process measures and runs on one device, one call at a time); it runs on the default stream.
Handle SharedHandle() {
  static std::once_flag once;
  static Handle handle = nullptr;
  static Status status = kSuccess;
  std::call_once(once, [] { status = Api().cudnnCreate(&handle); });
  Check(status, "cudnnCreate");
  return handle;
}

std::vector<int> Ints(const std::vector<int64_t>& values, const char* what) {
  std::vector<int> out;
  for (int64_t v : values) {
    if (v < 0 || v > INT_MAX) {
      throw CudaError(fmt::format("cuDNN takes {} up to {}, not {}", what, INT_MAX, v), 0);
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// The algorithms found in this process, by convolution (AlgorithmKey): a runner builds a new
// kernel for every measurement of a library candidate, and cuDNN's search runs every algorithm.
std::mutex algorithms_mutex;
std::map<std::string, int>& Algorithms() {
  static std::map<std::string, int> algorithms;
  return algorithms;
}

std::string AlgorithmKey(const DnnConvDesc& d, size_t scratch_bytes) {
  auto t = [](const DnnTensor& x) {
    return fmt::format("{}/{}", fmt::join(x.dims, ","), fmt::join(x.strides, ","));
  };
  return fmt::format("x {} y {} w {} pad {} stride {} dilation {} groups {} scratch {}", t(d.x),
                     t(d.y), fmt::join(d.weight.dims, ","), fmt::join(d.pad, ","),
                     fmt::join(d.stride, ","), fmt::join(d.dilation, ","), d.groups, scratch_bytes);
}

std::optional<int> CachedAlgorithm(const std::string& key) {
  std::lock_guard<std::mutex> lock(algorithms_mutex);
  auto it = Algorithms().find(key);
  if (it == Algorithms().end()) return std::nullopt;
  return it->second;
}

void CacheAlgorithm(const std::string& key, int algo) {
  std::lock_guard<std::mutex> lock(algorithms_mutex);
  Algorithms()[key] = algo;
}

}  // namespace

std::vector<int64_t> PackedFilterStrides(const std::vector<int64_t>& dims) {
  // Memory order K, spatial..., C: C innermost, then the spatial dimensions last to first.
  std::vector<int64_t> strides(dims.size(), 1);
  int64_t step = dims.size() > 1 ? dims[1] : 1;
  for (size_t d = dims.size(); d-- > 2;) {
    strides[d] = step;
    step *= dims[d];
  }
  if (!dims.empty()) strides[0] = step;
  return strides;
}

std::optional<std::array<int, 3>> FusedBiasSumRelu(const DnnConvDesc& desc) {
  const size_t n = desc.steps.size();
  if (n < 2 || n > 3 || desc.steps.back().kind != DnnStep::kRelu) return std::nullopt;
  std::vector<int64_t> per_channel(desc.y.dims.size(), 1);
  per_channel[1] = desc.y.dims[1];
  int bias = -1, sum = -1;
  for (size_t i = 0; i + 1 < n; ++i) {
    const DnnStep& step = desc.steps[i];
    // The fused call reads the bias as (1, K, 1, ...) with K contiguous, and the tensor added
    // (z) with y's descriptor.
    const DnnTensor& o = step.operand;
    int* slot = step.kind != DnnStep::kAdd                             ? nullptr
                : o.dims == per_channel && o.strides[1] == 1           ? &bias
                : o.dims == desc.y.dims && o.strides == desc.y.strides ? &sum
                                                                       : nullptr;
    if (slot == nullptr || *slot >= 0) return std::nullopt;
    *slot = static_cast<int>(i);
  }
  if (bias < 0) return std::nullopt;
  return std::array<int, 3>{bias, sum, static_cast<int>(n - 1)};
}

size_t PackedFilterBytes(const DnnConvDesc& desc) {
  size_t elements = 1;
  for (int64_t d : desc.weight.dims) elements *= static_cast<size_t>(d);
  return (elements * sizeof(float) + 255) / 256 * 256;
}

bool CudnnAvailable(std::string* why) {
  if (why != nullptr) *why = Dnn().error;
  return Dnn().error.empty();
}

struct DnnConvolution::State {
  DnnConvDesc desc;
  TensorDesc x = nullptr, y = nullptr, weight = nullptr, packed = nullptr;
  FilterDesc filter = nullptr;
  ConvDesc conv = nullptr;
  OpTensorDesc multiply = nullptr;
  std::vector<TensorDesc> operands;         // per step; nullptr for activations
  std::vector<ActivationDesc> activations;  // per step; nullptr for the others
  // The packed filter takes the start of the workspace (packed_bytes) unless the weight is
  // constant; then it is kept in `owned_filter`, packed from the weight at `packed_from`.
  size_t workspace_bytes = 0, packed_bytes = 0;
  DeviceBuffer owned_filter;
  uint64_t packed_from = 0;
  std::optional<int> algo;  // found on the first run
  std::string key;  // the convolution's descriptors, for the algorithms found in this process
  // Steps that are a bias, maybe a tensor added, then ReLU run in the convolution's own call
  // (cudnnConvolutionBiasActivationForward): FusedBiasSumRelu's indices of those steps.
  std::optional<std::array<int, 3>> fused;

  ~State() {  // also when the constructor threw halfway
    if (x == nullptr) return;  // nothing made (x is made first): cuDNN need not be loaded
    const DnnApi& api = Dnn().api;
    for (TensorDesc t : {x, y, weight, packed}) {
      if (t != nullptr) api.cudnnDestroyTensorDescriptor(t);
    }
    for (TensorDesc t : operands) {
      if (t != nullptr) api.cudnnDestroyTensorDescriptor(t);
    }
    for (ActivationDesc a : activations) {
      if (a != nullptr) api.cudnnDestroyActivationDescriptor(a);
    }
    if (multiply != nullptr) api.cudnnDestroyOpTensorDescriptor(multiply);
    if (filter != nullptr) api.cudnnDestroyFilterDescriptor(filter);
    if (conv != nullptr) api.cudnnDestroyConvolutionDescriptor(conv);
  }
};

DnnConvolution::DnnConvolution(const DnnConvDesc& desc, size_t workspace_bytes)
    : state_(std::make_unique<State>()) {
  // Without a driver cuDNN cannot start; say so before loading it.
  if (std::string why; !CudaDriverAvailable(&why)) throw CudaUnavailable(why);
  const DnnApi& api = Api();
  State& s = *state_;
  s.desc = desc;
  s.workspace_bytes = workspace_bytes;
  s.packed_bytes = desc.weight_constant ? 0 : PackedFilterBytes(desc);
  if (s.packed_bytes > workspace_bytes) {
    throw CudaError(fmt::format("the convolution's filter ({} bytes packed) does not fit the "
                                "library workspace ({} bytes)",
                                s.packed_bytes, workspace_bytes),
                    0);
  }
  SharedHandle();
  s.key = AlgorithmKey(desc, s.workspace_bytes - s.packed_bytes);
  auto tensor = [&](TensorDesc* out, const DnnTensor& t, const char* name) {
    Check(api.cudnnCreateTensorDescriptor(out), "cudnnCreateTensorDescriptor");
    std::vector<int> dims = Ints(t.dims, "dimensions"), strides = Ints(t.strides, "strides");
    Check(api.cudnnSetTensorNdDescriptor(*out, kFloat, static_cast<int>(dims.size()), dims.data(),
                                         strides.data()),
          fmt::format("cudnnSetTensorNdDescriptor({} {} strides {})", name, fmt::join(t.dims, "x"),
                      fmt::join(t.strides, ",")));
  };
  tensor(&s.x, desc.x, "x");
  tensor(&s.y, desc.y, "y");
  tensor(&s.weight, desc.weight, "weight");
  tensor(&s.packed, {desc.weight.dims, PackedFilterStrides(desc.weight.dims)}, "packed filter");
  std::vector<int> filter_dims = Ints(desc.weight.dims, "filter dimensions");
  Check(api.cudnnCreateFilterDescriptor(&s.filter), "cudnnCreateFilterDescriptor");
  Check(api.cudnnSetFilterNdDescriptor(s.filter, kFloat, kFormatNhwc,
                                       static_cast<int>(filter_dims.size()), filter_dims.data()),
        "cudnnSetFilterNdDescriptor");
  std::vector<int> pad = Ints(desc.pad, "paddings"), stride = Ints(desc.stride, "strides");
  std::vector<int> dilation = Ints(desc.dilation, "dilations");
  Check(api.cudnnCreateConvolutionDescriptor(&s.conv), "cudnnCreateConvolutionDescriptor");
  Check(api.cudnnSetConvolutionNdDescriptor(s.conv, static_cast<int>(pad.size()), pad.data(),
                                            stride.data(), dilation.data(), kCrossCorrelation,
                                            kFloat),
        "cudnnSetConvolutionNdDescriptor");
  Check(api.cudnnSetConvolutionGroupCount(s.conv, static_cast<int>(desc.groups)),
        "cudnnSetConvolutionGroupCount");
  Check(api.cudnnSetConvolutionMathType(s.conv, kFmaMath), "cudnnSetConvolutionMathType");
  // cuDNN's output for these descriptors must be the graph's.
  std::vector<int> out(desc.y.dims.size());
  Check(api.cudnnGetConvolutionNdForwardOutputDim(s.conv, s.x, s.filter,
                                                  static_cast<int>(out.size()), out.data()),
        "cudnnGetConvolutionNdForwardOutputDim");
  if (std::vector<int64_t>(out.begin(), out.end()) != desc.y.dims) {
    throw CudaError(fmt::format("cuDNN's convolution gives {}, not the expected {}",
                                fmt::join(out, "x"), fmt::join(desc.y.dims, "x")),
                    0);
  }
  s.fused = FusedBiasSumRelu(desc);
  s.operands.assign(desc.steps.size(), nullptr);
  s.activations.assign(desc.steps.size(), nullptr);
  for (size_t i = 0; i < desc.steps.size(); ++i) {
    const DnnStep& step = desc.steps[i];
    if (step.kind == DnnStep::kAdd || step.kind == DnnStep::kMultiply) {
      tensor(&s.operands[i], step.operand, "step operand");
    } else {
      Check(api.cudnnCreateActivationDescriptor(&s.activations[i]),
            "cudnnCreateActivationDescriptor");
      Check(api.cudnnSetActivationDescriptor(
                s.activations[i], step.kind == DnnStep::kRelu ? kRelu : kClippedRelu, kNoNan,
                step.kind == DnnStep::kRelu ? 0.0 : step.ceiling),
            "cudnnSetActivationDescriptor");
    }
    if (step.kind == DnnStep::kMultiply && s.multiply == nullptr) {
      Check(api.cudnnCreateOpTensorDescriptor(&s.multiply), "cudnnCreateOpTensorDescriptor");
      Check(api.cudnnSetOpTensorDescriptor(s.multiply, kOpTensorMul, kFloat, kNoNan),
            "cudnnSetOpTensorDescriptor");
    }
  }
}

DnnConvolution::~DnnConvolution() = default;

void DnnConvolution::Run(uint64_t x, uint64_t weight, const std::vector<uint64_t>& operands,
                         uint64_t y, uint64_t workspace) {
  const DnnApi& api = Api();
  State& s = *state_;
  if (operands.size() != s.desc.steps.size()) {
    throw CudaError(fmt::format("the convolution has {} steps after it, given {} operands",
                                s.desc.steps.size(), operands.size()),
                    0);
  }
  Handle handle = SharedHandle();
  auto pointer = [](uint64_t address) { return reinterpret_cast<void*>(address); };
  void* scratch = pointer(workspace + s.packed_bytes);
  const size_t scratch_bytes = s.workspace_bytes - s.packed_bytes;
  const float one = 1.0f, zero = 0.0f;
  void* packed = pointer(workspace);
  if (s.desc.weight_constant) {
    if (s.owned_filter.bytes() == 0) {
      s.owned_filter = AllocateOnCurrentContext(PackedFilterBytes(s.desc));
    }
    packed = pointer(s.owned_filter.address());
  }
  if (!s.desc.weight_constant || s.packed_from != weight) {
    Check(
        api.cudnnTransformTensor(handle, &one, s.weight, pointer(weight), &zero, s.packed, packed),
        "cudnnTransformTensor(weight to the packed filter)");
    s.packed_from = weight;
  }
  if (!s.algo) s.algo = CachedAlgorithm(s.key);
  if (!s.algo) {
    // cuDNN times its algorithms on these buffers (y is written, then overwritten below) and
    // ranks them fastest first; the first that succeeded within the scratch memory and did not
    // use tensor cores is kept.
    std::array<AlgoPerf, kMaxAlgorithms> perf{};
    int returned = 0;
    Check(api.cudnnFindConvolutionForwardAlgorithmEx(
              handle, s.x, pointer(x), s.filter, packed, s.conv, s.y, pointer(y), kMaxAlgorithms,
              &returned, perf.data(), scratch, scratch_bytes),
          "cudnnFindConvolutionForwardAlgorithmEx");
    for (int i = 0; i < returned && !s.algo; ++i) {
      const AlgoPerf& p = perf[static_cast<size_t>(i)];
      if (p.status == kSuccess && p.memory <= scratch_bytes && p.math_type != kTensorOpMath &&
          p.math_type != kTensorOpConversion) {
        s.algo = p.algo;
      }
    }
    if (!s.algo) {
      throw CudaError(fmt::format("cuDNN has no float32 (FMA) algorithm for this convolution "
                                  "within {} bytes of workspace ({} tried)",
                                  scratch_bytes, returned),
                      0);
    }
    CacheAlgorithm(s.key, *s.algo);
  }
  if (s.fused) {
    const auto [bias, sum, relu] = *s.fused;
    const float alpha2 = sum >= 0 ? 1.0f : 0.0f;
    void* z = sum >= 0 ? pointer(operands[static_cast<size_t>(sum)]) : pointer(y);
    const Status status = api.cudnnConvolutionBiasActivationForward(
        handle, &one, s.x, pointer(x), s.filter, packed, s.conv, *s.algo, scratch, scratch_bytes,
        &alpha2, s.y, z, s.operands[static_cast<size_t>(bias)],
        pointer(operands[static_cast<size_t>(bias)]), s.activations[static_cast<size_t>(relu)], s.y,
        pointer(y));
    if (status == kSuccess) return;
    // cuDNN has no fused kernel for it: the steps one by one, from now on. Any other refusal is
    // an error, as for the calls below.
    if (status < kNotSupported || status >= kNotSupported + 1000) {
      Check(status, "cudnnConvolutionBiasActivationForward");
    }
    s.fused.reset();
  }
  Check(api.cudnnConvolutionForward(handle, &one, s.x, pointer(x), s.filter, packed, s.conv,
                                    *s.algo, scratch, scratch_bytes, &zero, s.y, pointer(y)),
        "cudnnConvolutionForward");
  for (size_t i = 0; i < s.desc.steps.size(); ++i) {
    const DnnStep& step = s.desc.steps[i];
    switch (step.kind) {
      case DnnStep::kAdd:
        Check(api.cudnnAddTensor(handle, &one, s.operands[i], pointer(operands[i]), &one, s.y,
                                 pointer(y)),
              "cudnnAddTensor");
        break;
      case DnnStep::kMultiply:
        Check(api.cudnnOpTensor(handle, s.multiply, &one, s.y, pointer(y), &one, s.operands[i],
                                pointer(operands[i]), &zero, s.y, pointer(y)),
              "cudnnOpTensor(multiply)");
        break;
      case DnnStep::kRelu:
      case DnnStep::kClippedRelu:
        Check(api.cudnnActivationForward(handle, s.activations[i], &one, s.y, pointer(y), &zero,
                                         s.y, pointer(y)),
              "cudnnActivationForward");
        break;
    }
  }
}

}  // namespace tirtune::cuda
