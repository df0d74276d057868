// SplitHostDevice: cuts a function in loop form (one that passed VerifyThreadBinding) into the
// host's part and its kernels. Each outermost thread-bound loop nest becomes a kernel whose launch
// dimensions are the extents of its bound loops; inside it, a loop bound to blockIdx or threadIdx
// is replaced by that axis's index variable (every loop bound to one axis by the same variable),
// and a vthread loop becomes a serial loop each thread runs. Global allocations around the
// kernels become the module's intermediates.
//
//   with allocate(T, (1024,), float32):
//     for bx in thread_binding(8, thread="blockIdx.x"):
//       for tx in thread_binding(128, thread="threadIdx.x"):
//         T[bx * 128 + tx] = A[bx * 128 + tx]
//     for bx in thread_binding(8, thread="blockIdx.x"):
//       ...
// becomes global_allocs T and two kernels, the first:
//   kernel f_kernel0(grid=(8, 1, 1), block=(128, 1, 1)):
//     T[blockIdx_x * 128 + threadIdx_x] = A[blockIdx_x * 128 + threadIdx_x]
#include <fmt/format.h>

#include <set>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// Replaces the thread-bound loops of one kernel and records its launch.
class ThreadLoopReplacer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  explicit ThreadLoopReplacer(GpuKernel* kernel) : kernel_(kernel) {}

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->for_kind != ForKind::kThreadBinding) return StmtMutator::VisitStmt_(op);
    const std::string& tag = op->thread_tag;
    Stmt body = VisitStmt(op->body);
    if (tag.rfind("vthread", 0) == 0) {
      return MakeFor(op->loop_var, op->min, op->extent, ForKind::kSerial, body, /*thread_tag=*/"",
                     op->annotations);
    }
    const int64_t* extent = AsConstInt(op->extent);
    TT_ICHECK(extent != nullptr, "thread-bound loop {} has a symbolic extent", op->loop_var->name);
    bool block_axis = tag.rfind("blockIdx.", 0) == 0;
    int axis = tag.back() - 'x';
    TT_ICHECK(axis >= 0 && axis < 3, "unknown thread axis {}", tag);
    (block_axis ? kernel_->grid : kernel_->block)[axis] = *extent;
    const Var& index = (block_axis ? kernel_->block_idx : kernel_->thread_idx)[axis];
    return Substitute(body, VarMap{{op->loop_var.get(), index}});
  }

 private:
  GpuKernel* kernel_;
};

class HostDeviceSplitter {
 public:
  explicit HostDeviceSplitter(const PrimFunc& func) {
    module_.name = func->name;
    module_.params = func->params;
  }

  GpuModule Run(const Stmt& body) {
    Host(body);
    return std::move(module_);
  }

 private:
  void Host(const Stmt& s) {
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& child : seq->seq) Host(child);
    } else if (const auto* alloc = s.as<AllocateNode>()) {
      module_.global_allocs.push_back(alloc->buffer);
      Host(alloc->body);
    } else if (const auto* loop = s.as<ForNode>();
               loop != nullptr && loop->for_kind == ForKind::kThreadBinding) {
      module_.kernels.push_back(MakeKernel(loop));
    } else {
      TT_ICHECK(s.as<EvaluateNode>() != nullptr,
                "a statement of kind {} on the host (VerifyThreadBinding lets none through)",
                static_cast<int>(s->kind()));
    }
  }

  GpuKernel MakeKernel(const ForNode* root) {
    GpuKernel kernel;
    kernel.name = fmt::format("{}_kernel{}", module_.name, module_.kernels.size());
    for (int axis = 0; axis < 3; ++axis) {
      auto var_name = [](const char* tag) {
        std::string name = tag;
        name[name.find('.')] = '_';
        return name;
      };
      kernel.block_idx[axis] = Var(var_name(kBlockIdxTags[axis]));
      kernel.thread_idx[axis] = Var(var_name(kThreadIdxTags[axis]));
    }
    kernel.body = ThreadLoopReplacer(&kernel).VisitStmt(GetStmtRef(root));
    // The global buffers it touches, the function's parameters first.
    std::set<const BufferNode*> used;
    PreOrderVisit(kernel.body, [&](const Object* node) {
      if (const auto* load = node->as<BufferLoadNode>()) used.insert(load->buffer.get());
      if (const auto* store = node->as<BufferStoreNode>()) used.insert(store->buffer.get());
      return true;
    });
    for (const Buffer& b : module_.params) {
      if (used.count(b.get())) kernel.params.push_back(b);
    }
    for (const Buffer& b : module_.global_allocs) {
      if (used.count(b.get())) kernel.params.push_back(b);
    }
    return kernel;
  }

  GpuModule module_;
};

}  // namespace

GpuModule SplitHostDevice(const PrimFunc& func) { return HostDeviceSplitter(func).Run(func->body); }

}  // namespace tirtune
