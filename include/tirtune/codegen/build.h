// Compiling lowered PrimFuncs (include/tirtune/lower/lower.h) to CPU code with LLVM: JIT into
// this process, emit a relocatable object for another process, load such an object, or print
// the LLVM IR / assembly. No LLVM type appears here; compilations may run concurrently from
// several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tirtune/codegen/target.h"
#include "tirtune/ir/function.h"
#include "tirtune/runtime/c_runtime_api.h"
#include "tirtune/support/ndarray.h"

namespace tirtune {

struct CodegenOptions {
  /// An Allocate of scope `local` with a constant size up to this many bytes lives on the stack;
  /// larger or dynamically sized ones come from tirtune_workspace_alloc. Default 64 KiB (as
  /// LowerOptions::max_stack_bytes).
  int64_t max_stack_bytes = 64 * 1024;
  /// The same bound for scope `global` (small intermediates are not worth a heap call).
  /// Default 1 KiB.
  int64_t max_stack_bytes_global = 1024;
  /// Run the O3 pipeline (loop and SLP vectorization for the target CPU). Default true.
  bool optimize = true;
};

/// Milliseconds spent in each phase of one compilation.
struct CompileStats {
  double codegen_ms = 0;   // lowered IR -> LLVM IR
  double optimize_ms = 0;  // O3 pipeline
  double emit_ms = 0;      // machine code and object emission
  double link_ms = 0;      // JIT linking and symbol lookup
  double total_ms() const { return codegen_ms + optimize_ms + emit_ms + link_ms; }
};

/// What a kernel expects for one parameter: element type and element count (-1 when unknown).
struct KernelParam {
  DataType dtype;
  int64_t num_elements = -1;
};

/// A compiled kernel linked into this process; its code is released when the Kernel is
/// destroyed. Calls may run concurrently from several threads.
class Kernel {
 public:
  /// Made by JitCompile and LoadObject; `owner` keeps the code alive.
  Kernel(std::string name, TirtuneKernelFunc entry, std::vector<KernelParam> params,
         std::shared_ptr<void> owner, CompileStats stats);

  const std::string& name() const { return name_; }
  /// The C entry point (calling convention in runtime/c_runtime_api.h).
  TirtuneKernelFunc entry() const { return entry_; }
  const std::vector<KernelParam>& params() const { return params_; }
  const CompileStats& stats() const { return stats_; }

  /// Runs the kernel on `args`, one array per parameter. Throws UserError when the count, an
  /// element type or an element count does not match; returns the kernel's status (0 = ok).
  int32_t Run(const std::vector<NDArray>& args) const;
  /// Runs without any check: args[i] points to the data of parameter i.
  int32_t RunRaw(void** args) const { return entry_(args); }

 private:
  std::string name_;
  TirtuneKernelFunc entry_;
  std::vector<KernelParam> params_;
  std::shared_ptr<void> owner_;
  CompileStats stats_;
};

/// Compiles `lowered` for `target` and links it into this process. The target must be able to
/// run on the host. Throws UserError for IR the backend does not support.
std::unique_ptr<Kernel> JitCompile(const PrimFunc& lowered, const Target& target,
                                   const CodegenOptions& options = {});

/// Compiles `lowered` to a relocatable ELF object, returned as bytes. The object defines the
/// entry point under the function's name plus a signature record LoadObject reads; it calls only
/// the runtime functions of c_runtime_api.h and the C math library.
std::string EmitObject(const PrimFunc& lowered, const Target& target,
                       const CodegenOptions& options = {}, CompileStats* stats = nullptr);

/// Links an object made by EmitObject into this process (no compiler toolchain needed) and
/// returns its entry point `func_name`. The runtime functions are supplied explicitly, so the
/// loading executable need not export them. `target` sizes the runtime thread pool. Throws
/// UserError when the bytes are no such object or do not define `func_name`.
std::unique_ptr<Kernel> LoadObject(const std::string& object_bytes, const std::string& func_name,
                                   const Target& target);

/// The LLVM IR of `lowered`, before or after the O3 pipeline (for tests and debugging).
std::string EmitLLVMIR(const PrimFunc& lowered, const Target& target, bool optimized,
                       const CodegenOptions& options = {});

/// The optimized machine code of `lowered` as assembly text.
std::string EmitAssembly(const PrimFunc& lowered, const Target& target,
                         const CodegenOptions& options = {});

}  // namespace tirtune
