// VerifyThreadBinding: whether a function in loop form can be split into GPU kernels, and what
// stands in the way if not. A kernel is an outermost thread-bound loop nest; within a kernel every
// other loop runs serially inside each thread.
//
// The rules, one message per broken one:
//  1. nothing but allocations of global intermediates and kernels runs on the host: a store or a
//     loop outside every thread-bound loop is reported ("did you forget to bind?");
//  2. a thread-bound loop starts at 0 and has a constant extent;
//  3. within one kernel, all loops bound to one axis have the same extent (the launch has one).
//     They all become the same index, nested ones too: a cooperative fetch bound to threadIdx.x
//     under the compute's threadIdx.x loop is done once by the threads together, not once per
//     outer iteration, which is what every thread having both indices equal means;
//  4. threads per block, the extent of every block and grid axis and the product of the vthread
//     extents stay within the target's limits;
//  5. no parallel loop runs in a kernel (a CPU notion: bind the loop instead);
//  6. no global buffer is allocated inside a kernel, and no shared buffer inside a threadIdx
//     loop (a shared buffer is one per block, not one per thread); shared and local buffers are
//     not allocated on the host;
//  7. the local buffers of one thread (times the virtual threads above each) fit the target's
//     local memory per thread (an array that large would not even launch).
//
//   for i in range(64):                                  <- "loop 'i' runs on the host:
//     for j in thread_binding(64, thread="threadIdx.x"):     bind it to a GPU thread axis"
//       B[i * 64 + j] = A[i * 64 + j]
#include <fmt/format.h>

#include <limits>
#include <map>

#include "tirtune/ir/functor.h"
#include "tirtune/lower/lower_gpu.h"

namespace tirtune {
namespace {

bool IsBlockAxis(const std::string& tag) { return tag.rfind("blockIdx.", 0) == 0; }
bool IsThreadAxis(const std::string& tag) { return tag.rfind("threadIdx.", 0) == 0; }
bool IsVthreadAxis(const std::string& tag) { return tag.rfind("vthread", 0) == 0; }
int AxisIndex(const std::string& tag) { return tag.back() - 'x'; }

class ThreadBindingVerifier {
 public:
  explicit ThreadBindingVerifier(const GpuLimits& limits) : limits_(limits) {}

  std::vector<std::string> Run(const Stmt& body) {
    Host(body);
    return std::move(problems_);
  }

 private:
  // Statements outside every kernel.
  void Host(const Stmt& s) {
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& child : seq->seq) Host(child);
    } else if (const auto* alloc = s.as<AllocateNode>()) {
      if (alloc->buffer->scope != StorageScope::kGlobal) {
        Report(
            "{} buffer '{}' is allocated outside every kernel: it lives in a block or a thread, "
            "so allocate it under a thread-bound loop",
            StorageScopeName(alloc->buffer->scope), alloc->buffer->name);
      }
      Host(alloc->body);
    } else if (const auto* loop = s.as<ForNode>()) {
      if (loop->for_kind == ForKind::kThreadBinding) return Kernel(loop);
      Report(
          "loop '{}' runs on the host: bind it to a GPU thread axis (blockIdx/threadIdx), or "
          "move it under a bound loop",
          loop->loop_var->name);
    } else if (const auto* store = s.as<BufferStoreNode>()) {
      Report(
          "the store to '{}' runs on the host: bind a loop above it to a GPU thread axis "
          "(did you forget to bind?)",
          store->buffer->name);
    } else if (s.as<EvaluateNode>() == nullptr) {
      Report("a {} statement runs on the host: only allocations and kernels may",
             s->kind() == NodeKind::kIfThenElse ? "conditional" : "let");
    }
  }

  void Kernel(const ForNode* root) {
    extents_.clear();
    max_vthreads_ = 1;
    local_bytes_ = 0;
    largest_bytes_ = 0;
    largest_local_.clear();
    InKernel(GetStmtRef(root), /*vthreads=*/1, /*in_thread_loop=*/false);
    int64_t threads = 1;
    for (const auto& [tag, extent] : extents_) {
      int axis = AxisIndex(tag);
      if (IsThreadAxis(tag)) {
        threads *= extent.first;
        if (extent.first > kMaxBlockDim[axis]) {
          Report("{} has extent {} (loop '{}'); CUDA allows at most {}", tag, extent.first,
                 extent.second, kMaxBlockDim[axis]);
        }
      } else if (IsBlockAxis(tag) && extent.first > kMaxGridDim[axis]) {
        Report("{} has extent {} (loop '{}'); CUDA allows at most {}", tag, extent.first,
               extent.second, kMaxGridDim[axis]);
      }
    }
    if (threads > limits_.max_threads_per_block) {
      Report("the kernel of loop '{}' has {} threads per block; the target allows {}",
             root->loop_var->name, threads, limits_.max_threads_per_block);
    }
    if (max_vthreads_ > limits_.max_vthreads) {
      Report("the kernel of loop '{}' has {} virtual threads; the target allows {}",
             root->loop_var->name, max_vthreads_, limits_.max_vthreads);
    }
    if (local_bytes_ > limits_.max_local_memory_per_thread) {
      Report(
          "the kernel of loop '{}' has {} bytes of local buffers per thread (the largest '{}'); "
          "the target allows {}: make the per-thread tiles smaller",
          root->loop_var->name, local_bytes_, largest_local_, limits_.max_local_memory_per_thread);
    }
  }

  void InKernel(const Stmt& s, int64_t vthreads, bool in_thread_loop) {
    if (const auto* loop = s.as<ForNode>()) {
      if (loop->for_kind == ForKind::kParallel) {
        Report(
            "loop '{}' is parallel inside a kernel: CPU threads mean nothing there; bind it "
            "to a GPU thread axis instead",
            loop->loop_var->name);
      }
      if (loop->for_kind != ForKind::kThreadBinding) {
        return InKernel(loop->body, vthreads, in_thread_loop);
      }
      const std::string& tag = loop->thread_tag;
      const std::string& name = loop->loop_var->name;
      const int64_t* extent = AsConstInt(loop->extent);
      if (!IsConstInt(loop->min, 0)) Report("loop '{}' bound to {} does not start at 0", name, tag);
      if (extent == nullptr) {
        Report("loop '{}' bound to {} has no constant extent", name, tag);
      } else if (IsVthreadAxis(tag)) {
        vthreads *= *extent;
        max_vthreads_ = std::max(max_vthreads_, vthreads);
      } else {
        auto [it, inserted] = extents_.try_emplace(tag, *extent, name);
        if (!inserted && it->second.first != *extent) {
          Report(
              "{} has extent {} (loop '{}') and {} (loop '{}') in one kernel; a launch has "
              "one extent per axis",
              tag, it->second.first, it->second.second, *extent, name);
        }
      }
      InKernel(loop->body, vthreads, in_thread_loop || IsThreadAxis(tag));
    } else if (const auto* alloc = s.as<AllocateNode>()) {
      const Buffer& b = alloc->buffer;
      if (b->scope == StorageScope::kGlobal) {
        Report(
            "global buffer '{}' is allocated inside a kernel: give it scope shared or local "
            "(set_scope), or compute it in a kernel of its own",
            b->name);
      } else if (b->scope == StorageScope::kShared && in_thread_loop) {
        Report(
            "shared buffer '{}' is allocated inside a threadIdx loop: shared memory is one per "
            "block, so each thread's copy would be everyone's; allocate it above the threadIdx "
            "loops",
            b->name);
      } else if (b->scope == StorageScope::kLocal) {
        CountLocal(b, vthreads);
      }
      InKernel(alloc->body, vthreads, in_thread_loop);
    } else if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& child : seq->seq) InKernel(child, vthreads, in_thread_loop);
    } else if (const auto* branch = s.as<IfThenElseNode>()) {
      InKernel(branch->then_case, vthreads, in_thread_loop);
      if (branch->else_case.defined()) InKernel(branch->else_case, vthreads, in_thread_loop);
    } else if (const auto* let = s.as<LetStmtNode>()) {
      InKernel(let->body, vthreads, in_thread_loop);
    }
  }

  // Adds a local buffer's bytes (one copy per virtual thread) to the kernel's sum; a buffer of
  // no constant size is left to the code generator, which refuses it.
  void CountLocal(const Buffer& b, int64_t vthreads) {
    int64_t bytes = b->dtype.bytes() * vthreads;
    for (const Expr& e : b->shape) {
      const int64_t* n = AsConstInt(e);
      if (n == nullptr) return;
      if (*n > 0 && bytes > std::numeric_limits<int64_t>::max() / 4 / *n) {
        bytes = std::numeric_limits<int64_t>::max() / 4;
        break;
      }
      bytes *= *n;
    }
    if (largest_local_.empty() || bytes > largest_bytes_) {
      largest_bytes_ = bytes;
      largest_local_ = b->name;
    }
    local_bytes_ = std::min(local_bytes_ + bytes, std::numeric_limits<int64_t>::max() / 2);
  }

  template <typename... Args>
  void Report(fmt::format_string<Args...> format, Args&&... args) {
    problems_.push_back(fmt::format(format, std::forward<Args>(args)...));
  }

  const GpuLimits& limits_;
  std::vector<std::string> problems_;
  // Of the kernel being checked: extent and loop name per axis, the largest product of nested
  // vthread extents.
  std::map<std::string, std::pair<int64_t, std::string>> extents_;
  int64_t max_vthreads_ = 1;
  // Bytes of the kernel's local buffers per thread, and the largest of them.
  int64_t local_bytes_ = 0;
  int64_t largest_bytes_ = 0;
  std::string largest_local_;
};

}  // namespace

std::vector<std::string> VerifyThreadBinding(const PrimFunc& func, const GpuLimits& limits) {
  return ThreadBindingVerifier(limits).Run(func->body);
}

}  // namespace tirtune
