// Small functions in block form, the inputs of the rule, postprocessor and mutator tests.
#pragma once

namespace tirtune::testing {

/// C = A * B, 16 x 12 x 8.
inline const char* kGemm = R"(@prim_func
def gemm(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), C: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("C"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(C[vi, vj])
                        with init():
                            C[vi, vj] = 0.0
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

/// A strided stencil, B[i] = A[2i] + A[2i + 1]: the reads stride by two along the axis the write
/// runs through contiguously.
inline const char* kStridedStencil = R"(@prim_func
def strided(A: Buffer((64,), float32), B: Buffer((32,), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(32):
            with block("B"):
                vi = axis.spatial(32, i)
                reads(A[vi * 2], A[vi * 2 + 1])
                writes(B[vi])
                B[vi] = A[vi * 2] + A[vi * 2 + 1]
)";

/// A dense layer, Y = X * W^T with W stored [N, K] as ONNX Gemm(transB=1) gives it: 2 x 6 x 32.
/// No output axis runs contiguously through W, the reduction axis does.
inline const char* kDense = R"(@prim_func
def dense(X: Buffer((2, 32), float32), W: Buffer((6, 32), float32), Y: Buffer((2, 6), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(2):
            for j in range(6):
                for k in range(32):
                    with block("Y"):
                        vi = axis.spatial(2, i)
                        vj = axis.spatial(6, j)
                        vk = axis.reduce(32, k)
                        reads(X[vi, vk], W[vj, vk])
                        writes(Y[vi, vj])
                        with init():
                            Y[vi, vj] = 0.0
                        Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
)";

/// T = A * B, then D = max(T + bias, 0): an add AutoInline folds into the ReLU, which
/// MultiLevelTiling then uses as the write-back stage.
inline const char* kGemmBiasRelu = R"(@prim_func
def gemm_bias_relu(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), bias: Buffer((12,), float32), D: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        T = alloc_buffer((16, 12), float32)
        E = alloc_buffer((16, 12), float32)
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("T"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(T[vi, vj])
                        with init():
                            T[vi, vj] = 0.0
                        T[vi, vj] = T[vi, vj] + A[vi, vk] * B[vk, vj]
        for i in range(16):
            for j in range(12):
                with block("E"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(12, j)
                    reads(T[vi, vj], bias[vj])
                    writes(E[vi, vj])
                    E[vi, vj] = T[vi, vj] + bias[vj]
        for i in range(16):
            for j in range(12):
                with block("D"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(12, j)
                    reads(E[vi, vj])
                    writes(D[vi, vj])
                    D[vi, vj] = max(E[vi, vj], 0.0)
)";

/// T = A * B, then D = T + bias: an exact epilogue for fuse_reduction_epilogue.
inline const char* kGemmBias = R"(@prim_func
def gemm_bias(A: Buffer((16, 8), float32), B: Buffer((8, 12), float32), bias: Buffer((12,), float32), D: Buffer((16, 12), float32)):
    with block("root"):
        reads()
        writes()
        T = alloc_buffer((16, 12), float32)
        for i in range(16):
            for j in range(12):
                for k in range(8):
                    with block("T"):
                        vi = axis.spatial(16, i)
                        vj = axis.spatial(12, j)
                        vk = axis.reduce(8, k)
                        reads(A[vi, vk], B[vk, vj])
                        writes(T[vi, vj])
                        with init():
                            T[vi, vj] = 0.0
                        T[vi, vj] = T[vi, vj] + A[vi, vk] * B[vk, vj]
        for i in range(16):
            for j in range(12):
                with block("D"):
                    vi = axis.spatial(16, i)
                    vj = axis.spatial(12, j)
                    reads(T[vi, vj], bias[vj])
                    writes(D[vi, vj])
                    D[vi, vj] = T[vi, vj] + bias[vj]
)";

/// S[b] = sum of A[b, i, j]^2, then D = sqrt(S): a reduction with little spatial parallelism.
inline const char* kNorm = R"(@prim_func
def norm(A: Buffer((2, 6, 8), float32), D: Buffer((2,), float32)):
    with block("root"):
        reads()
        writes()
        S = alloc_buffer((2,), float32)
        for b in range(2):
            for i in range(6):
                for j in range(8):
                    with block("S"):
                        vb = axis.spatial(2, b)
                        vi = axis.reduce(6, i)
                        vj = axis.reduce(8, j)
                        reads(A[vb, vi, vj])
                        writes(S[vb])
                        with init():
                            S[vb] = 0.0
                        S[vb] = S[vb] + A[vb, vi, vj] * A[vb, vi, vj]
        for b in range(2):
            with block("D"):
                vb = axis.spatial(2, b)
                reads(S[vb])
                writes(D[vb])
                D[vb] = sqrt(S[vb])
)";

/// B = exp(A), then C = B * 2 — next to a reduction R over C, so the function is not purely
/// spatial.
inline const char* kExpThenReduce = R"(@prim_func
def exp_reduce(A: Buffer((4, 8), float32), R: Buffer((4,), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((4, 8), float32)
        C = alloc_buffer((4, 8), float32)
        for i in range(4):
            for j in range(8):
                with block("B"):
                    vi = axis.spatial(4, i)
                    vj = axis.spatial(8, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = exp(A[vi, vj])
        for i in range(4):
            for j in range(8):
                with block("C"):
                    vi = axis.spatial(4, i)
                    vj = axis.spatial(8, j)
                    reads(B[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] * 2.0
        for i in range(4):
            for j in range(8):
                with block("R"):
                    vi = axis.spatial(4, i)
                    vj = axis.reduce(8, j)
                    reads(C[vi, vj])
                    writes(R[vi])
                    with init():
                        R[vi] = 0.0
                    R[vi] = R[vi] + C[vi, vj]
)";

/// B = A * 2, then C = B + 1: purely spatial.
inline const char* kTwoStage = R"(@prim_func
def two_stage(A: Buffer((8, 16), float32), C: Buffer((8, 16), float32)):
    with block("root"):
        reads()
        writes()
        B = alloc_buffer((8, 16), float32)
        for i in range(8):
            for j in range(16):
                with block("B"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(16, j)
                    reads(A[vi, vj])
                    writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * 2.0
        for i in range(8):
            for j in range(16):
                with block("C"):
                    vi = axis.spatial(8, i)
                    vj = axis.spatial(16, j)
                    reads(B[vi, vj])
                    writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + 1.0
)";

/// B = relu(A) over an 8 x 8 x 32 tensor: an elementwise nest.
inline const char* kRelu = R"(@prim_func
def relu(A: Buffer((8, 8, 32), float32), B: Buffer((8, 8, 32), float32)):
    with block("root"):
        reads()
        writes()
        for i in range(8):
            for j in range(8):
                for k in range(32):
                    with block("B"):
                        vi = axis.spatial(8, i)
                        vj = axis.spatial(8, j)
                        vk = axis.spatial(32, k)
                        reads(A[vi, vj, vk])
                        writes(B[vi, vj, vk])
                        B[vi, vj, vk] = max(A[vi, vj, vk], 0.0)
)";

}  // namespace tirtune::testing
