// Entry points of the interpreter: check the arguments against the parameters, bind them, run.
#include "tirtune/interp/interpreter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <map>

#include "program.h"
#include "tirtune/ir/packed_layout.h"

namespace tirtune {
namespace interp {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace

void BindArguments(const PrimFunc& func, const Program& program, const std::vector<NDArray>& args,
                   interp::Machine& m) {
  const std::vector<Buffer>& params = func->params;
  if (args.size() != params.size()) {
    throw InterpError(fmt::format("function {} takes {} arguments, got {}", func->name,
                                  params.size(), args.size()));
  }
  // Step 1. Types and ranks, and the variables that parameter extents define.
  for (size_t i = 0; i < params.size(); ++i) {
    const BufferNode* param = params[i].get();
    const NDArray& arg = args[i];
    if (!arg.defined()) {
      throw InterpError(fmt::format("argument {} for parameter {} is undefined", i, param->name));
    }
    if (arg.dtype() != param->dtype) {
      throw InterpError(fmt::format("argument {} for parameter {} has dtype {}, expected {}", i,
                                    param->name, arg.dtype().str(), param->dtype.str()));
    }
    if (static_cast<int>(arg.shape().size()) != param->ndim()) {
      throw InterpError(fmt::format("argument {} for parameter {} has shape {}, expected rank {}",
                                    i, param->name, ShapeText(arg.shape()), param->ndim()));
    }
    const ParamBinding& binding = program.params()[i];
    for (size_t d = 0; d < binding.dim_vars.size(); ++d) {
      if (binding.dim_vars[d] != nullptr) binding.dim_vars[d]->i = arg.shape()[d];
    }
  }
  // Step 2. Extents (which may use those variables), strides, and storage.
  for (size_t i = 0; i < params.size(); ++i) {
    const BufferNode* param = params[i].get();
    NDArray arg = args[i];  // shares the caller's storage
    const ParamBinding& binding = program.params()[i];
    interp::BufferSlot* slot = binding.slot;
    for (size_t d = 0; d < binding.shape.size(); ++d) {
      binding.shape[d]->Eval(m);
      slot->shape[d] = binding.shape[d]->result[0].i;
    }
    if (slot->shape != arg.shape()) {
      throw InterpError(fmt::format("argument {} for parameter {} has shape {}, expected {}", i,
                                    param->name, ShapeText(arg.shape()), ShapeText(slot->shape)));
    }
    if (binding.strides.empty()) {
      slot->strides = interp::CompactStrides(slot->shape);
    } else {
      for (size_t d = 0; d < binding.strides.size(); ++d) {
        binding.strides[d]->Eval(m);
        slot->strides[d] = binding.strides[d]->result[0].i;
      }
    }
    slot->capacity = arg.size();
    slot->data = arg.raw();
  }
}

}  // namespace interp

using interp::Program;

void Interpret(const PrimFunc& func, const std::vector<NDArray>& args) {
  Program program(func);
  interp::Machine m;
  interp::BindArguments(func, program, args, m);
  program.body().Exec(m);
}

std::vector<NDArray> MakeRandomArgs(const PrimFunc& func, uint64_t seed) {
  std::vector<NDArray> args;
  std::map<int, PackedLayout> packed = PackedParams(func);
  for (size_t i = 0; i < func->params.size(); ++i) {
    const BufferNode* param = func->params[i].get();
    std::vector<int64_t> shape;
    for (const Expr& e : param->shape) {
      const int64_t* extent = AsConstInt(e);
      if (extent == nullptr) {
        throw InterpError(fmt::format(
            "parameter {} has a symbolic shape; random inputs need constant shapes", param->name));
      }
      shape.push_back(*extent);
    }
    interp::ElemKindOf(param->dtype);  // rejects dtypes no buffer can hold
    // A packed parameter: the tensor the function was written for, drawn as always, packed.
    auto it = packed.find(static_cast<int>(i));
    NDArray a = NDArray::Empty(it == packed.end() ? shape : it->second.source_shape, param->dtype);
    RandomRange range = RandomRangeFor(param->dtype);
    a.FillRandom(seed + i, range.lo, range.hi);
    if (it != packed.end()) {
      NDArray p = it->second.Pack(a);
      a = NDArray::Empty(shape, param->dtype);  // a lowered function's parameter is flat
      if (a.size() != p.size()) {
        throw InterpError(
            fmt::format("parameter {}: its packed layout is for another shape", param->name));
      }
      std::memcpy(a.raw(), p.raw(), static_cast<size_t>(p.nbytes()));
    }
    args.push_back(a);
  }
  return args;
}

std::vector<NDArray> InterpretWithRandomInputs(const PrimFunc& func, uint64_t seed) {
  std::vector<NDArray> args = MakeRandomArgs(func, seed);
  Interpret(func, args);
  for (const auto& [index, layout] : PackedParams(func)) {
    NDArray p = NDArray::Empty(layout.PackedShape(), args[index].dtype());
    std::memcpy(p.raw(), args[index].raw(), static_cast<size_t>(p.nbytes()));
    args[index] = layout.Unpack(p);
  }
  return args;
}

RandomRange RandomRangeFor(DataType dtype) {
  if (dtype.is_float()) return {-1.0, 1.0};
  if (dtype.is_bool()) return {0.0, 2.0};
  if (dtype.is_uint()) return {0.0, 8.0};
  return {-4.0, 4.0};
}

}  // namespace tirtune
