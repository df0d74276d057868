// A small GEMM in block form, the common input of the loop-primitive tests.
#pragma once

namespace tirtune::testing {

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

}  // namespace tirtune::testing
