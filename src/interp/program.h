// A PrimFunc translated into interpreter code: variables resolved to slots, buffers to
// BufferSlots, every node to an ExprCode or StmtCode. Built once per Interpret call.
#pragma once

#include <memory>
#include <vector>

#include "code.h"
#include "tirtune/ir/function.h"

namespace tirtune::interp {

/// How one buffer parameter is bound to its argument.
struct ParamBinding {
  BufferSlot* slot = nullptr;
  /// Per dimension: the slot of the variable the extent is (bound from the argument's extent by
  /// the first parameter that uses it), or null when the extent is not a lone variable.
  std::vector<Scalar*> dim_vars;
  /// Per dimension: the extent, evaluated once the variables are bound.
  std::vector<const ExprCode*> shape;
  /// The declared strides in elements; empty when the buffer is compact.
  std::vector<const ExprCode*> strides;
};

class Program {
 public:
  /// Translates `func`. Throws InterpError for what the interpreter cannot run: an unsupported
  /// dtype, a variable or buffer used outside the scope that defines it, a string value.
  explicit Program(const PrimFunc& func);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const std::vector<ParamBinding>& params() const { return params_; }
  const StmtCode& body() const { return *body_; }

 private:
  friend class Compiler;
  ScalarArena arena_;
  std::vector<ExprCodePtr> exprs_;
  std::vector<StmtCodePtr> stmts_;
  std::vector<std::unique_ptr<BufferSlot>> buffers_;
  std::vector<ParamBinding> params_;
  const StmtCode* body_ = nullptr;
};

/// Binds `args` to the parameters of `program` (translated from `func`): checks dtypes and
/// shapes, binds the variables parameter extents define, points the slots at the arrays' storage.
/// Throws InterpError for a mismatch.
void BindArguments(const PrimFunc& func, const Program& program, const std::vector<NDArray>& args,
                   Machine& m);

}  // namespace tirtune::interp
