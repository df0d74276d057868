// Kernels with planted faults, shared by the measurement tests: a correct 16x16x16 GEMM over
// flat buffers (and a loop-interchanged variant), and functions with the same signature that
// crash, hang, compute garbage, or that lowering or code generation rejects.
#pragma once

#include <cstdint>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/stmt.h"

namespace tirtune::testing {

// A correct 16x16x16 GEMM over flat buffers, written in lowered form.
inline const char* const kGemm = R"(
@prim_func
def gemm(A: Buffer((256,), float32), B: Buffer((256,), float32), C: Buffer((256,), float32)):
    for i in range(16):
        for j in range(16):
            C[i * 16 + j] = 0.0
            for k in range(16):
                C[i * 16 + j] = C[i * 16 + j] + A[i * 16 + k] * B[k * 16 + j]
)";

// The same GEMM with the loops interchanged: a different, correct candidate.
inline const char* const kGemmIkj = R"(
@prim_func
def gemm(A: Buffer((256,), float32), B: Buffer((256,), float32), C: Buffer((256,), float32)):
    for i in range(16):
        for j in range(16):
            C[i * 16 + j] = 0.0
        for k in range(16):
            for j in range(16):
                C[i * 16 + j] = C[i * 16 + j] + A[i * 16 + k] * B[k * 16 + j]
)";

// Stores 4 TiB past the buffer: SIGSEGV.
inline const char* const kSegfault = R"(
@prim_func
def gemm(A: Buffer((256,), float32), B: Buffer((256,), float32), C: Buffer((256,), float32)):
    for i in range(4):
        C[i * 1099511627776 + 1099511627776] = A[i]
)";

// 2^40 dependent steps: about twenty minutes, within the schedule limits (lower.h), so the
// timeout is what stops it.
inline const char* const kEndless = R"(
@prim_func
def gemm(A: Buffer((256,), float32), B: Buffer((256,), float32), C: Buffer((256,), float32)):
    for i in range(1099511627776):
        C[0] = C[0] * 0.5 + A[1]
)";

inline const char* const kGarbage = R"(
@prim_func
def gemm(A: Buffer((256,), float32), B: Buffer((256,), float32), C: Buffer((256,), float32)):
    for i in range(256):
        C[i] = 42.0
)";

// Lowering rejects the storage-align request (the block has no write 3).
inline const char* const kBadAlign = R"(
@prim_func
def gemm(A: Buffer((256,), float32), B: Buffer((256,), float32), C: Buffer((256,), float32)):
    for i in range(256):
        with block("c"):
            vi = axis.spatial(256, i)
            reads(A[vi])
            writes(C[vi])
            block_attr({"buffer_dim_align": "[[3, 0, 8, 1]]"})
            C[vi] = A[vi]
)";

// Rounds through float8, a type the LLVM backend does not have: code generation rejects it.
inline PrimFunc ThroughFloat8() {
  auto i32 = [](int64_t v) { return MakeConst(DataType::Int(32), static_cast<double>(v)); };
  std::vector<Buffer> params;
  for (const char* name : {"A", "B", "C"}) {
    params.emplace_back(name, DataType::Float(32), std::vector<Expr>{i32(256)});
  }
  Expr narrow = MakeCast(DataType::Float(8), MakeBufferLoad(params[0], {i32(0)}));
  return PrimFunc("gemm", params,
                  MakeBufferStore(params[2], MakeCast(DataType::Float(32), narrow), {i32(0)}));
}

}  // namespace tirtune::testing
