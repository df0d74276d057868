// cuBLASLt, NVIDIA's matrix-product library, loaded with dlopen on first use (libcublasLt.so.13
// or .12, by the loader's search or from /usr/local/cuda/lib64), like the driver (cuda_driver.h):
// a tirtune binary starts without it and says why when a GPU library call needs it. Only one
// call is wrapped: a float32 product with its epilogue, D = act(op(A) op(B) + C + bias), in
// batches of equal strides, on the default stream of the context current on the calling thread.
//
// cuBLASLt's matrices are column-major: element (i, j) of a matrix of leading dimension ld is at
// i + j * ld. How a row-major graph's product maps onto them is the caller's
// (offload/cublas_plan.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tirtune::cuda {

/// cublasLtEpilogue_t's values used (cublasLt.h; tests/offload/cublas_plan_test.cc checks them
/// against the header where it is installed).
enum class LtEpilogue : uint32_t {
  kDefault = 1,
  kRelu = 2,
  kBias = 4,
  kReluBias = 6,
  kGelu = 32,  // the tanh approximation of GELU
  kGeluBias = 36,
};

/// One stored matrix of a product, column-major: `rows` x `cols`, column j at j * ld, batch b at
/// b * batch_stride (0: every batch reads the same matrix).
struct LtMatrix {
  int64_t rows = 0, cols = 0, ld = 0, batch_stride = 0;
};

/// D = epilogue(op(A) op(B) + C), op(A) m x k, op(B) k x n, C and D m x n with D's layout; the
/// bias of the epilogue has m elements (one per row of D). `batch` products of equal strides.
struct LtMatmulDesc {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool transpose_a = false, transpose_b = false;  // op: the stored matrix or its transpose
  LtMatrix a, b, d;
  bool accumulate = false;  // C given (beta = 1, C in D's layout); else beta = 0
  LtEpilogue epilogue = LtEpilogue::kDefault;
};

/// True when cuBLASLt loads; otherwise false with the reason in `why`.
bool CublasLtAvailable(std::string* why = nullptr);

/// A prepared product: its descriptors made and the algorithm cuBLASLt's heuristic ranks first for
/// them chosen, once. Needs a current CUDA context (cuda::Context) when made and run.
class LtMatmul {
 public:
  /// CudaUnavailable when cuBLASLt cannot be loaded; CudaError naming the call that failed, or
  /// when cuBLASLt has no algorithm for the product within `workspace_bytes`.
  LtMatmul(const LtMatmulDesc& desc, size_t workspace_bytes);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  /// Enqueues the product on the default stream: device addresses of A, B, C (ignored unless
  /// `accumulate`), D, the bias (0 when the epilogue has none) and a workspace of the bytes given
  /// at construction. CudaError naming cublasLtMatmul when cuBLASLt refuses. One caller at a
  /// time (it points the descriptor at the bias).
  void Run(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t bias, uint64_t workspace) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tirtune::cuda
