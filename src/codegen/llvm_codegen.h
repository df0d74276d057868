// Translation of a lowered PrimFunc (lower/lower.h) into an LLVM module: private to
// src/codegen, the only header that exposes LLVM types. Expressions are emitted by
// llvm_codegen_expr.cc (math intrinsics by llvm_codegen_math.cc), statements, functions and
// parallel outlining by llvm_codegen_stmt.cc.
//
// Values live in registers as: bool -> i1, intN/uintN -> iN, float16/bfloat16/float32 -> float
// (half-precision types compute in float32 and are rounded on store or cast, as in the
// interpreter), float64 -> double; vectors of those for lanes > 1. In memory bool is i8,
// float16 is half and bfloat16 is i16.
#pragma once

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tirtune/codegen/build.h"
#include "tirtune/ir/functor.h"

namespace tirtune::codegen {

/// What one translation needs to know about the target.
struct ModuleConfig {
  std::string triple;
  std::string cpu;
  std::string features;
  llvm::DataLayout data_layout{""};
  int num_cores = 1;
  CodegenOptions options;
};

/// The name of the global holding a kernel's signature ("float32:4096;bool:16"), read by
/// LoadObject to check arguments.
std::string SignatureSymbol(const std::string& func_name);
/// The signature text of `func` and its parsed form.
std::string SignatureText(const PrimFunc& func);
std::vector<KernelParam> ParseSignature(const std::string& text);

/// Builds the module of one PrimFunc: `i32 NAME(ptr args)` (see runtime/c_runtime_api.h),
/// the signature global, and one closure function per outlined parallel loop.
std::unique_ptr<llvm::Module> BuildModule(const PrimFunc& func, const ModuleConfig& config,
                                          llvm::LLVMContext* ctx);

class CodeGenLLVM final : public ExprFunctor<llvm::Value*>, public StmtFunctor<void> {
 public:
  CodeGenLLVM(const ModuleConfig& config, llvm::LLVMContext* ctx);
  std::unique_ptr<llvm::Module> Build(const PrimFunc& func);

 private:
  using ExprFunctor<llvm::Value*>::VisitExpr;
  using StmtFunctor<void>::VisitStmt;
  TT_EXPR_OVERRIDES(llvm::Value*)
  TT_STMT_OVERRIDES(void)

  // ---- Types (llvm_codegen_expr.cc) ----
  llvm::Type* RegType(DataType t);
  llvm::Type* MemType(DataType element);
  llvm::Value* FromMemory(llvm::Value* v, DataType element);
  llvm::Value* ToMemory(llvm::Value* v, DataType element);
  /// Rounds a float register holding a value of half-precision type `t` to that precision.
  llvm::Value* RoundToPrecision(llvm::Value* v, DataType t);
  llvm::Value* ConstFloat(llvm::Type* type, double value);
  llvm::Value* ConstInt(llvm::Type* type, int64_t value);

  // ---- Expressions (llvm_codegen_expr.cc) ----
  llvm::Value* EmitArith(NodeKind kind, DataType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* EmitCompare(NodeKind kind, DataType operand, llvm::Value* a, llvm::Value* b);
  llvm::Value* EmitIntDiv(NodeKind kind, DataType t, llvm::Value* a, llvm::Value* b,
                          const Expr& divisor);
  llvm::Value* EmitCast(DataType from, DataType to, llvm::Value* v);
  // ---- Math intrinsics (llvm_codegen_math.cc) ----
  llvm::Value* EmitIntrinsic(const CallNode* op, const std::vector<llvm::Value*>& args);
  llvm::Value* CallUnaryIntrinsic(llvm::Intrinsic::ID id, llvm::Value* x);
  llvm::Value* CallLibmPerLane(const char* name, llvm::Value* x);
  llvm::Value* FastExp(llvm::Value* x);
  llvm::Value* FastTanh(llvm::Value* x);
  llvm::Value* FastErf(llvm::Value* x);
  /// The address of element `index` (scalar) of `buffer`, and the contiguous/gathered forms.
  llvm::Value* ElementPtr(const Buffer& buffer, llvm::Value* index);
  llvm::Value* Index64(llvm::Value* index, DataType t);
  /// Base of a unit-stride Ramp index, or null.
  const RampNode* DenseRamp(const Expr& index);

  // ---- Statements and functions (llvm_codegen_stmt.cc) ----
  void EmitSerialLoop(const Var& var, llvm::Value* begin, llvm::Value* end, const Stmt& body,
                      const Annotations& annotations, bool unroll_fully);
  llvm::MDNode* LoopMetadata(const Annotations& annotations, bool unroll_fully);
  void EmitParallelLoop(const ForNode* op);
  /// Branches to a block that frees live heap buffers and returns `rc` when `failed` holds.
  void ReturnIfFailed(llvm::Value* failed, llvm::Value* rc);
  llvm::Value* StackAlloca(llvm::Type* element, int64_t count);
  llvm::Function* DeclareRuntime(const char* name, llvm::FunctionType* type);
  void SetFunctionAttributes(llvm::Function* f);
  llvm::BasicBlock* NewBlock(const char* name);

  // Binds var -> value for the lifetime of the object, restoring the previous binding.
  class ScopedVar {
   public:
    ScopedVar(CodeGenLLVM* cg, const VarNode* var, llvm::Value* value);
    ~ScopedVar();

   private:
    CodeGenLLVM* cg_;
    const VarNode* var_;
    llvm::Value* previous_;
  };

  const ModuleConfig& config_;
  llvm::LLVMContext* ctx_;
  std::unique_ptr<llvm::Module> module_;
  std::unique_ptr<llvm::IRBuilder<>> builder_;
  std::string func_name_;
  int num_outlined_ = 0;

  // State of the function being emitted (saved and restored around outlining).
  llvm::Function* function_ = nullptr;
  bool in_parallel_ = false;
  std::unordered_map<const VarNode*, llvm::Value*> vars_;
  std::unordered_map<const BufferNode*, llvm::Value*> buffers_;
  std::vector<llvm::Value*> live_heap_buffers_;

  llvm::Type* i1_;
  llvm::Type* i8_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::Type* f32_;
  llvm::Type* ptr_;
};

}  // namespace tirtune::codegen
