// cuBLASLt through dlopen (see cublas_lt.h). The handful of declarations used are written here,
// as for the driver: the CUDA headers stay out of the build. Status codes are ints (0 success);
// descriptors are opaque pointers; an algorithm is 64 bytes that cuBLASLt fills.
#include "tirtune/runtime/cublas_lt.h"

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <mutex>

#ifdef TIRTUNE_CHECK_CUBLASLT_H
#include <cublasLt.h>
#endif

#include "cuda_library.h"
#include "tirtune/runtime/cuda_driver.h"

namespace tirtune::cuda {
namespace {

using Status = int;
using Handle = void*;
using Desc = void*;
using Layout = void*;
using Preference = void*;
constexpr Status kSuccess = 0;
// cublasLt.h / cublas_api.h / library_types.h enumerators.
constexpr int kComputeF32 = 68;  // CUBLAS_COMPUTE_32F: float products, no TF32
constexpr int kRealF32 = 0;      // CUDA_R_32F
constexpr int kOpN = 0, kOpT = 1;
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8,
              kDescBiasDataType = 26;
constexpr int kLayoutBatchCount = 5, kLayoutStridedBatchOffset = 6;
constexpr int kPrefMaxWorkspaceBytes = 1;

struct Algo {
  std::array<uint64_t, 8> data;
};
struct HeuristicResult {
  Algo algo;
  size_t workspace_size;
  Status state;
  float waves_count;
  int reserved[4];
};

struct LtApi {
  Status (*cublasLtCreate)(Handle*);
  const char* (*cublasLtGetStatusString)(Status);
  Status (*cublasLtMatmulDescCreate)(Desc*, int, int);
  Status (*cublasLtMatmulDescDestroy)(Desc);
  Status (*cublasLtMatmulDescSetAttribute)(Desc, int, const void*, size_t);
  Status (*cublasLtMatrixLayoutCreate)(Layout*, int, uint64_t, uint64_t, int64_t);
  Status (*cublasLtMatrixLayoutDestroy)(Layout);
  Status (*cublasLtMatrixLayoutSetAttribute)(Layout, int, const void*, size_t);
  Status (*cublasLtMatmulPreferenceCreate)(Preference*);
  Status (*cublasLtMatmulPreferenceDestroy)(Preference);
  Status (*cublasLtMatmulPreferenceSetAttribute)(Preference, int, const void*, size_t);
  Status (*cublasLtMatmulAlgoGetHeuristic)(Handle, Desc, Layout, Layout, Layout, Layout, Preference,
                                           int, HeuristicResult*, int*);
  Status (*cublasLtMatmul)(Handle, Desc, const void*, const void*, Layout, const void*, Layout,
                           const void*, const void*, Layout, void*, Layout, const Algo*, void*,
                           size_t, void*);
};

struct LoadedLt {
  LtApi api{};
  std::string error;  // why cuBLASLt cannot be used; empty when it can
};

#ifdef TIRTUNE_CHECK_CUBLASLT_H
// Where the CUDA toolkit's headers are installed, the build checks these declarations against
// them (src/CMakeLists.txt).
static_assert(kComputeF32 == CUBLAS_COMPUTE_32F && kRealF32 == CUDA_R_32F);
static_assert(kOpN == CUBLAS_OP_N && kOpT == CUBLAS_OP_T);
static_assert(kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA &&
              kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB &&
              kDescEpilogue == CUBLASLT_MATMUL_DESC_EPILOGUE &&
              kDescBiasPointer == CUBLASLT_MATMUL_DESC_BIAS_POINTER &&
              kDescBiasDataType == CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
static_assert(kLayoutBatchCount == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT &&
              kLayoutStridedBatchOffset == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(kPrefMaxWorkspaceBytes == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(static_cast<int>(LtEpilogue::kDefault) == CUBLASLT_EPILOGUE_DEFAULT &&
              static_cast<int>(LtEpilogue::kRelu) == CUBLASLT_EPILOGUE_RELU &&
              static_cast<int>(LtEpilogue::kBias) == CUBLASLT_EPILOGUE_BIAS &&
              static_cast<int>(LtEpilogue::kReluBias) == CUBLASLT_EPILOGUE_RELU_BIAS &&
              static_cast<int>(LtEpilogue::kGelu) == CUBLASLT_EPILOGUE_GELU &&
              static_cast<int>(LtEpilogue::kGeluBias) == CUBLASLT_EPILOGUE_GELU_BIAS);
static_assert(sizeof(Algo) == sizeof(cublasLtMatmulAlgo_t) &&
              sizeof(HeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t) &&
              offsetof(HeuristicResult, state) ==
                  offsetof(cublasLtMatmulHeuristicResult_t, state) &&
              offsetof(HeuristicResult, workspace_size) ==
                  offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
#endif

const LoadedLt& Lt() {
  static const LoadedLt loaded = [] {
    LoadedLt l;
    void* lib = detail::OpenCudaLibrary(
        "cuBLASLt", {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, &l.error);
    if (lib == nullptr) return l;
    auto bind = [&](const char* name, auto* fn) {
      detail::BindSymbol(lib, "cuBLASLt", name, fn, &l.error);
    };
    LtApi& a = l.api;
    bind("cublasLtCreate", &a.cublasLtCreate);
    bind("cublasLtGetStatusString", &a.cublasLtGetStatusString);
    bind("cublasLtMatmulDescCreate", &a.cublasLtMatmulDescCreate);
    bind("cublasLtMatmulDescDestroy", &a.cublasLtMatmulDescDestroy);
    bind("cublasLtMatmulDescSetAttribute", &a.cublasLtMatmulDescSetAttribute);
    bind("cublasLtMatrixLayoutCreate", &a.cublasLtMatrixLayoutCreate);
    bind("cublasLtMatrixLayoutDestroy", &a.cublasLtMatrixLayoutDestroy);
    bind("cublasLtMatrixLayoutSetAttribute", &a.cublasLtMatrixLayoutSetAttribute);
    bind("cublasLtMatmulPreferenceCreate", &a.cublasLtMatmulPreferenceCreate);
    bind("cublasLtMatmulPreferenceDestroy", &a.cublasLtMatmulPreferenceDestroy);
    bind("cublasLtMatmulPreferenceSetAttribute", &a.cublasLtMatmulPreferenceSetAttribute);
    bind("cublasLtMatmulAlgoGetHeuristic", &a.cublasLtMatmulAlgoGetHeuristic);
    bind("cublasLtMatmul", &a.cublasLtMatmul);
    return l;
  }();
  return loaded;
}

const LtApi& Api() {
  const LoadedLt& l = Lt();
  if (!l.error.empty()) throw CudaUnavailable(l.error);
  return l.api;
}

// Throws CudaError naming `call` when `status` is not success.
void Check(Status status, const std::string& call) {
  if (status == kSuccess) return;
  const char* text = Lt().api.cublasLtGetStatusString != nullptr
                         ? Lt().api.cublasLtGetStatusString(status)
                         : nullptr;
  throw CudaError(fmt::format("{}: {} (status {})", call, text ? text : "cuBLASLt error", status),
                  status);
}

// One cuBLASLt handle per process, made on first use (it belongs to the device current then).
Handle SharedHandle() {
  static std::once_flag once;
  static Handle handle = nullptr;
  static Status status = kSuccess;
  std::call_once(once, [] { status = Api().cublasLtCreate(&handle); });
  Check(status, "cublasLtCreate");
  return handle;
}

}  // namespace

bool CublasLtAvailable(std::string* why) {
  if (why != nullptr) *why = Lt().error;
  return Lt().error.empty();
}

struct LtMatmul::State {
  LtMatmulDesc desc;
  Desc op = nullptr;
  Layout a = nullptr, b = nullptr, d = nullptr;
  Preference preference = nullptr;
  Algo algo{};
  size_t workspace_bytes = 0;

  ~State() {  // also when the constructor threw halfway
    const LtApi& api = Lt().api;
    if (preference != nullptr) api.cublasLtMatmulPreferenceDestroy(preference);
    for (Layout l : {a, b, d}) {
      if (l != nullptr) api.cublasLtMatrixLayoutDestroy(l);
    }
    if (op != nullptr) api.cublasLtMatmulDescDestroy(op);
  }
};

LtMatmul::LtMatmul(const LtMatmulDesc& desc, size_t workspace_bytes)
    : state_(std::make_unique<State>()) {
  // Without a driver cuBLASLt cannot start; say so before loading it.
  if (std::string why; !CudaDriverAvailable(&why)) throw CudaUnavailable(why);
  const LtApi& api = Api();
  State& s = *state_;
  s.desc = desc;
  s.workspace_bytes = workspace_bytes;
  Handle handle = SharedHandle();
  Check(api.cublasLtMatmulDescCreate(&s.op, kComputeF32, kRealF32), "cublasLtMatmulDescCreate");
  auto set_op = [&](int attribute, const auto& value, const char* name) {
    Check(api.cublasLtMatmulDescSetAttribute(s.op, attribute, &value, sizeof(value)),
          fmt::format("cublasLtMatmulDescSetAttribute({})", name));
  };
  set_op(kDescTransA, int32_t{desc.transpose_a ? kOpT : kOpN}, "TRANSA");
  set_op(kDescTransB, int32_t{desc.transpose_b ? kOpT : kOpN}, "TRANSB");
  set_op(kDescEpilogue, static_cast<uint32_t>(desc.epilogue), "EPILOGUE");
  if (desc.epilogue == LtEpilogue::kBias || desc.epilogue == LtEpilogue::kReluBias ||
      desc.epilogue == LtEpilogue::kGeluBias) {
    set_op(kDescBiasDataType, int32_t{kRealF32}, "BIAS_DATA_TYPE");
  }
  auto layout = [&](Layout* out, const LtMatrix& m, const char* name) {
    Check(api.cublasLtMatrixLayoutCreate(out, kRealF32, static_cast<uint64_t>(m.rows),
                                         static_cast<uint64_t>(m.cols), m.ld),
          fmt::format("cublasLtMatrixLayoutCreate({})", name));
    if (desc.batch > 1) {
      const int32_t count = static_cast<int32_t>(desc.batch);
      Check(api.cublasLtMatrixLayoutSetAttribute(*out, kLayoutBatchCount, &count, sizeof(count)),
            fmt::format("cublasLtMatrixLayoutSetAttribute({}, BATCH_COUNT)", name));
      const int64_t stride = m.batch_stride;
      Check(api.cublasLtMatrixLayoutSetAttribute(*out, kLayoutStridedBatchOffset, &stride,
                                                 sizeof(stride)),
            fmt::format("cublasLtMatrixLayoutSetAttribute({}, STRIDED_BATCH_OFFSET)", name));
    }
  };
  layout(&s.a, desc.a, "A");
  layout(&s.b, desc.b, "B");
  layout(&s.d, desc.d, "D");
  Check(api.cublasLtMatmulPreferenceCreate(&s.preference), "cublasLtMatmulPreferenceCreate");
  const uint64_t max_workspace = workspace_bytes;
  Check(api.cublasLtMatmulPreferenceSetAttribute(s.preference, kPrefMaxWorkspaceBytes,
                                                 &max_workspace, sizeof(max_workspace)),
        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  HeuristicResult result{};
  int found = 0;
  Check(api.cublasLtMatmulAlgoGetHeuristic(handle, s.op, s.a, s.b, s.d, s.d, s.preference, 1,
                                           &result, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found < 1 || result.state != kSuccess) {
    throw CudaError(
        fmt::format("cuBLASLt has no algorithm for this {}x{}x{} product{}", desc.m, desc.n, desc.k,
                    desc.batch > 1 ? fmt::format(" in {} batches", desc.batch) : ""),
        result.state);
  }
  s.algo = result.algo;
}

LtMatmul::~LtMatmul() = default;

void LtMatmul::Run(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t bias,
                   uint64_t workspace) const {
  const LtApi& api = Api();
  const State& s = *state_;
  if (bias != 0) {
    void* pointer = reinterpret_cast<void*>(bias);
    Check(api.cublasLtMatmulDescSetAttribute(s.op, kDescBiasPointer, &pointer, sizeof(pointer)),
          "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }
  const float alpha = 1.0f;
  const float beta = s.desc.accumulate ? 1.0f : 0.0f;
  auto pointer = [](uint64_t address) { return reinterpret_cast<void*>(address); };
  Check(api.cublasLtMatmul(SharedHandle(), s.op, &alpha, pointer(a), s.a, pointer(b), s.b, &beta,
                           pointer(s.desc.accumulate ? c : d), s.d, pointer(d), s.d, &s.algo,
                           pointer(workspace), s.workspace_bytes, nullptr),
        "cublasLtMatmul");
}

}  // namespace tirtune::cuda
