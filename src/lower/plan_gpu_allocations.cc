// PlanGpuAllocations: a kernel's shared buffers leave its body and become the kernel's
// declarations (GpuKernel::shared: one array per block, live for the whole launch, as CUDA's
// `__shared__` arrays are), checked against the target's shared memory: beyond the static limit
// (48 KiB) they go into dynamic shared memory (GpuKernel::dynamic_shared), up to the opt-in
// limit; local buffers stay where they are allocated, one copy per thread, and must have a
// constant size.
//
//   kernel f_kernel0:                          kernel f_kernel0, shared A_sh (512 x float32):
//     for ko in range(16):                       for ko in range(16):
//       with allocate(A_sh, (512,), float32,       A_sh[threadIdx_x] = ...
//                     scope="shared"):             ...
//         A_sh[threadIdx_x] = ...
//         ...
#include "tirtune/ir/functor.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

class SharedAllocationHoister : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  std::vector<Buffer> shared;

  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt body = VisitStmt(op->body);
    const Buffer& b = op->buffer;
    for (const Expr& extent : b->shape) {
      if (AsConstInt(extent) == nullptr) {
        TT_USER_ERROR(
            "{} buffer '{}' has a size known only at run time; a kernel's buffers need "
            "a constant size",
            StorageScopeName(b->scope), b->name);
      }
    }
    if (b->scope != StorageScope::kShared) {
      return body.same_as(op->body) ? GetStmtRef(op) : MakeAllocate(b, body);
    }
    shared.push_back(b);
    return body;
  }
};

}  // namespace

GpuKernel PlanGpuAllocations(const GpuKernel& kernel, const GpuLimits& limits) {
  SharedAllocationHoister hoister;
  GpuKernel out = kernel;
  out.body = hoister.VisitStmt(kernel.body);
  out.shared.insert(out.shared.end(), hoister.shared.begin(), hoister.shared.end());
  if (out.SharedBytes() > limits.max_shared_memory_per_block) {
    // Beyond static `__shared__` arrays: dynamic shared memory, which the launch opts into.
    out.dynamic_shared = true;
    if (out.DynamicSharedBytes() > limits.max_dynamic_shared_memory_per_block) {
      TT_USER_ERROR(
          "kernel {} needs {} bytes of shared memory per block; the target allows {} ({} "
          "without the opt-in)",
          out.name, out.DynamicSharedBytes(), limits.max_dynamic_shared_memory_per_block,
          limits.max_shared_memory_per_block);
    }
  }
  return out;
}

}  // namespace tirtune
