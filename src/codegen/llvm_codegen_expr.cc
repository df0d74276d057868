// Expressions of the lowered IR as LLVM IR: immediates, index and value arithmetic with the
// interpreter's semantics (wrapping integers, truncating Div, flooring FloorDiv/FloorMod,
// saturating float-to-int casts, NaN-aware min/max), and scalar, contiguous and gathered buffer
// loads. Math intrinsics are in llvm_codegen_math.cc.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>

#include "llvm_codegen.h"
#include "tirtune/support/error.h"
#include "tirtune/support/ndarray.h"

namespace tirtune::codegen {

// ---- Types and conversions ----

llvm::Type* CodeGenLLVM::RegType(DataType t) {
  DataType e = t.element_of();
  llvm::Type* scalar = nullptr;
  if (e.is_bool()) {
    scalar = i1_;
  } else {
    switch (e.code()) {
      case DataType::Code::kInt:
      case DataType::Code::kUInt:
        if (e.bits() == 8 || e.bits() == 16 || e.bits() == 32 || e.bits() == 64) {
          scalar = llvm::IntegerType::get(*ctx_, e.bits());
        }
        break;
      case DataType::Code::kFloat:
        if (e.bits() == 16 || e.bits() == 32) scalar = f32_;
        if (e.bits() == 64) scalar = llvm::Type::getDoubleTy(*ctx_);
        break;
      case DataType::Code::kBFloat:
        if (e.bits() == 16) scalar = f32_;
        break;
      case DataType::Code::kHandle:
        if (!e.is_void()) scalar = ptr_;
        break;
    }
  }
  if (scalar == nullptr) TT_USER_ERROR("the LLVM backend does not support type {}", t.str());
  if (t.lanes() > 1) return llvm::FixedVectorType::get(scalar, t.lanes());
  return scalar;
}

llvm::Type* CodeGenLLVM::MemType(DataType element) {
  if (element.is_bool()) return i8_;
  if (element.code() == DataType::Code::kFloat && element.bits() == 16) {
    return llvm::Type::getHalfTy(*ctx_);
  }
  if (element.code() == DataType::Code::kBFloat) return llvm::Type::getInt16Ty(*ctx_);
  return RegType(element);
}

llvm::Value* CodeGenLLVM::FromMemory(llvm::Value* v, DataType element) {
  llvm::IRBuilder<>& b = *builder_;
  llvm::Type* ty = v->getType();
  if (element.is_bool()) return b.CreateICmpNE(v, llvm::Constant::getNullValue(ty));
  if (element.code() == DataType::Code::kFloat && element.bits() == 16) {
    return b.CreateFPExt(v, ty->getWithNewType(f32_));
  }
  if (element.code() == DataType::Code::kBFloat) {
    llvm::Value* wide = b.CreateZExt(v, ty->getWithNewType(i32_));
    wide = b.CreateShl(wide, ConstInt(wide->getType(), 16));
    return b.CreateBitCast(wide, ty->getWithNewType(f32_));
  }
  return v;
}

llvm::Value* CodeGenLLVM::ToMemory(llvm::Value* v, DataType element) {
  llvm::IRBuilder<>& b = *builder_;
  llvm::Type* ty = v->getType();
  if (element.is_bool()) return b.CreateZExt(v, ty->getWithNewType(i8_));
  if (element.code() == DataType::Code::kFloat && element.bits() == 16) {
    return b.CreateFPTrunc(v, ty->getWithNewType(llvm::Type::getHalfTy(*ctx_)));
  }
  if (element.code() == DataType::Code::kBFloat) {
    // Round to nearest even on the bits; a NaN stays a quiet NaN (as FloatToBFloat16 does).
    llvm::Type* wide_ty = ty->getWithNewType(i32_);
    llvm::Value* x = b.CreateBitCast(v, wide_ty);
    llvm::Value* high = b.CreateLShr(x, ConstInt(wide_ty, 16));
    llvm::Value* is_nan = b.CreateICmpUGT(b.CreateAnd(x, ConstInt(wide_ty, 0x7fffffff)),
                                          ConstInt(wide_ty, 0x7f800000));
    llvm::Value* bias =
        b.CreateAdd(ConstInt(wide_ty, 0x7fff), b.CreateAnd(high, ConstInt(wide_ty, 1)));
    llvm::Value* rounded = b.CreateLShr(b.CreateAdd(x, bias), ConstInt(wide_ty, 16));
    llvm::Value* nan = b.CreateOr(high, ConstInt(wide_ty, 0x40));
    return b.CreateTrunc(b.CreateSelect(is_nan, nan, rounded),
                         ty->getWithNewType(llvm::Type::getInt16Ty(*ctx_)));
  }
  return v;
}

llvm::Value* CodeGenLLVM::RoundToPrecision(llvm::Value* v, DataType t) {
  DataType e = t.element_of();
  bool half_precision =
      (e.code() == DataType::Code::kFloat && e.bits() == 16) || e.code() == DataType::Code::kBFloat;
  return half_precision ? FromMemory(ToMemory(v, e), e) : v;
}

llvm::Value* CodeGenLLVM::ConstFloat(llvm::Type* type, double value) {
  return llvm::ConstantFP::get(type, value);
}

llvm::Value* CodeGenLLVM::ConstInt(llvm::Type* type, int64_t value) {
  return llvm::ConstantInt::get(type, static_cast<uint64_t>(value), /*IsSigned=*/true);
}

// ---- Immediates, variables, let ----

llvm::Value* CodeGenLLVM::VisitExpr_(const IntImmNode* op) {
  llvm::Type* ty = RegType(op->dtype);
  if (op->dtype.is_float()) return ConstFloat(ty, static_cast<double>(op->value));
  if (op->dtype.is_bool()) return ConstInt(ty, op->value != 0 ? 1 : 0);
  return ConstInt(ty, op->value);
}

llvm::Value* CodeGenLLVM::VisitExpr_(const FloatImmNode* op) {
  DataType e = op->dtype.element_of();
  double v = op->value;
  if (e.code() == DataType::Code::kBFloat) {
    v = BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v)));
  } else if (e.bits() == 16) {
    v = HalfToFloat(FloatToHalf(static_cast<float>(v)));
  } else if (e.bits() == 32) {
    v = static_cast<float>(v);
  }
  return ConstFloat(RegType(op->dtype), v);
}

llvm::Value* CodeGenLLVM::VisitExpr_(const StringImmNode* op) {
  TT_USER_ERROR("the LLVM backend cannot compute the string \"{}\" as a value", op->value);
}

llvm::Value* CodeGenLLVM::VisitExpr_(const VarNode* op) {
  auto it = vars_.find(op);
  if (it == vars_.end()) {
    TT_USER_ERROR(
        "variable {} is not bound where {} uses it (the LLVM backend needs constant parameter "
        "shapes)",
        op->name, func_name_);
  }
  return it->second;
}

llvm::Value* CodeGenLLVM::VisitExpr_(const LetNode* op) {
  llvm::Value* value = VisitExpr(op->value);
  ScopedVar bind(this, op->var.get(), value);
  return VisitExpr(op->body);
}

// ---- Arithmetic ----

llvm::Value* CodeGenLLVM::EmitIntDiv(NodeKind kind, DataType t, llvm::Value* a, llvm::Value* b,
                                     const Expr& divisor) {
  llvm::IRBuilder<>& ir = *builder_;
  llvm::Type* ty = a->getType();
  bool is_signed = t.is_int();
  const int64_t* c = AsConstInt(divisor);
  if (c == nullptr) {
    if (const auto* bc = divisor.as<BroadcastNode>()) c = AsConstInt(bc->value);
  }
  // A divisor known to be neither 0 nor -1 needs no guard. Otherwise division by zero gives 0
  // instead of trapping, and x / -1 is -x (wrapping), as in the interpreter minus its error.
  bool guarded = c == nullptr || *c == 0 || (is_signed && *c == -1);
  llvm::Value* zero = llvm::Constant::getNullValue(ty);
  llvm::Value* is_zero = nullptr;
  llvm::Value* is_minus_one = nullptr;
  if (guarded) {
    is_zero = ir.CreateICmpEQ(b, zero);
    llvm::Value* bad = is_zero;
    if (is_signed) {
      is_minus_one = ir.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(ty));
      bad = ir.CreateOr(bad, is_minus_one);
    }
    b = ir.CreateSelect(bad, ConstInt(ty, 1), b);
  }
  llvm::Value* result = nullptr;
  if (!is_signed) {
    result = kind == NodeKind::kFloorMod ? ir.CreateURem(a, b) : ir.CreateUDiv(a, b);
  } else if (kind == NodeKind::kDiv) {
    result = ir.CreateSDiv(a, b);
  } else {
    // Floor = truncation, corrected by one when the remainder is non-zero and its sign differs
    // from the divisor's.
    llvm::Value* r = ir.CreateSRem(a, b);
    llvm::Value* adjust =
        ir.CreateAnd(ir.CreateICmpNE(r, zero), ir.CreateICmpSLT(ir.CreateXor(r, b), zero));
    if (kind == NodeKind::kFloorDiv) {
      result = ir.CreateSub(ir.CreateSDiv(a, b), ir.CreateZExt(adjust, ty));
    } else {
      result = ir.CreateAdd(r, ir.CreateSelect(adjust, b, zero));
    }
  }
  if (guarded) {
    if (is_minus_one != nullptr) {
      llvm::Value* by_minus_one = kind == NodeKind::kFloorMod ? zero : ir.CreateSub(zero, a);
      result = ir.CreateSelect(is_minus_one, by_minus_one, result);
    }
    result = ir.CreateSelect(is_zero, zero, result);
  }
  return result;
}

llvm::Value* CodeGenLLVM::EmitArith(NodeKind kind, DataType t, llvm::Value* a, llvm::Value* b) {
  llvm::IRBuilder<>& ir = *builder_;
  bool fp = t.is_float();
  bool is_signed = t.is_int();
  switch (kind) {
    case NodeKind::kAdd:
      return fp ? ir.CreateFAdd(a, b) : ir.CreateAdd(a, b);
    case NodeKind::kSub:
      return fp ? ir.CreateFSub(a, b) : ir.CreateSub(a, b);
    case NodeKind::kMul:
      return fp ? ir.CreateFMul(a, b) : ir.CreateMul(a, b);
    case NodeKind::kDiv:
      return ir.CreateFDiv(a, b);  // integers go through EmitIntDiv
    case NodeKind::kFloorDiv:
      return CallUnaryIntrinsic(llvm::Intrinsic::floor, ir.CreateFDiv(a, b));
    case NodeKind::kFloorMod: {
      llvm::Value* q = CallUnaryIntrinsic(llvm::Intrinsic::floor, ir.CreateFDiv(a, b));
      return ir.CreateFSub(a, ir.CreateFMul(q, b));
    }
    case NodeKind::kMin:
      if (fp) return ir.CreateSelect(ir.CreateFCmpOLT(a, b), a, b);
      return ir.CreateSelect(is_signed ? ir.CreateICmpSLT(a, b) : ir.CreateICmpULT(a, b), a, b);
    case NodeKind::kMax:
      if (fp) return ir.CreateSelect(ir.CreateFCmpOGT(a, b), a, b);
      return ir.CreateSelect(is_signed ? ir.CreateICmpSGT(a, b) : ir.CreateICmpUGT(a, b), a, b);
    case NodeKind::kAnd:
      return ir.CreateAnd(a, b);
    case NodeKind::kOr:
      return ir.CreateOr(a, b);
    default:
      TT_UNREACHABLE("kind {} is not arithmetic", static_cast<int>(kind));
  }
}

llvm::Value* CodeGenLLVM::EmitCompare(NodeKind kind, DataType operand, llvm::Value* a,
                                      llvm::Value* b) {
  llvm::IRBuilder<>& ir = *builder_;
  if (operand.is_float()) {
    switch (kind) {
      case NodeKind::kEQ:
        return ir.CreateFCmpOEQ(a, b);
      case NodeKind::kNE:
        return ir.CreateFCmpUNE(a, b);  // NaN != x holds
      case NodeKind::kLT:
        return ir.CreateFCmpOLT(a, b);
      case NodeKind::kLE:
        return ir.CreateFCmpOLE(a, b);
      case NodeKind::kGT:
        return ir.CreateFCmpOGT(a, b);
      default:
        return ir.CreateFCmpOGE(a, b);
    }
  }
  bool s = operand.is_int();
  switch (kind) {
    case NodeKind::kEQ:
      return ir.CreateICmpEQ(a, b);
    case NodeKind::kNE:
      return ir.CreateICmpNE(a, b);
    case NodeKind::kLT:
      return s ? ir.CreateICmpSLT(a, b) : ir.CreateICmpULT(a, b);
    case NodeKind::kLE:
      return s ? ir.CreateICmpSLE(a, b) : ir.CreateICmpULE(a, b);
    case NodeKind::kGT:
      return s ? ir.CreateICmpSGT(a, b) : ir.CreateICmpUGT(a, b);
    default:
      return s ? ir.CreateICmpSGE(a, b) : ir.CreateICmpUGE(a, b);
  }
}

#define TT_CODEGEN_ARITH(Node)                           \
  llvm::Value* CodeGenLLVM::VisitExpr_(const Node* op) { \
    llvm::Value* a = VisitExpr(op->a);                   \
    llvm::Value* b = VisitExpr(op->b);                   \
    return EmitArith(Node::kKind, op->dtype, a, b);      \
  }
TT_CODEGEN_ARITH(AddNode)
TT_CODEGEN_ARITH(SubNode)
TT_CODEGEN_ARITH(MulNode)
TT_CODEGEN_ARITH(MinNode)
TT_CODEGEN_ARITH(MaxNode)
TT_CODEGEN_ARITH(AndNode)
TT_CODEGEN_ARITH(OrNode)
#undef TT_CODEGEN_ARITH

#define TT_CODEGEN_DIV(Node)                                                  \
  llvm::Value* CodeGenLLVM::VisitExpr_(const Node* op) {                      \
    llvm::Value* a = VisitExpr(op->a);                                        \
    llvm::Value* b = VisitExpr(op->b);                                        \
    if (op->dtype.is_float()) return EmitArith(Node::kKind, op->dtype, a, b); \
    return EmitIntDiv(Node::kKind, op->dtype, a, b, op->b);                   \
  }
TT_CODEGEN_DIV(DivNode)
TT_CODEGEN_DIV(FloorDivNode)
TT_CODEGEN_DIV(FloorModNode)
#undef TT_CODEGEN_DIV

#define TT_CODEGEN_COMPARE(Node)                          \
  llvm::Value* CodeGenLLVM::VisitExpr_(const Node* op) {  \
    llvm::Value* a = VisitExpr(op->a);                    \
    llvm::Value* b = VisitExpr(op->b);                    \
    return EmitCompare(Node::kKind, op->a.dtype(), a, b); \
  }
TT_CODEGEN_COMPARE(EQNode)
TT_CODEGEN_COMPARE(NENode)
TT_CODEGEN_COMPARE(LTNode)
TT_CODEGEN_COMPARE(LENode)
TT_CODEGEN_COMPARE(GTNode)
TT_CODEGEN_COMPARE(GENode)
#undef TT_CODEGEN_COMPARE

llvm::Value* CodeGenLLVM::VisitExpr_(const NotNode* op) {
  return builder_->CreateNot(VisitExpr(op->a));
}

llvm::Value* CodeGenLLVM::VisitExpr_(const SelectNode* op) {
  llvm::Value* cond = VisitExpr(op->cond);
  llvm::Value* t = VisitExpr(op->t);
  llvm::Value* f = VisitExpr(op->f);
  return builder_->CreateSelect(cond, t, f);
}

// ---- Casts ----

llvm::Value* CodeGenLLVM::EmitCast(DataType from, DataType to, llvm::Value* v) {
  llvm::IRBuilder<>& ir = *builder_;
  DataType fe = from.element_of();
  DataType te = to.element_of();
  if (fe == te) return v;
  llvm::Type* dst = RegType(to);
  if (te.is_bool()) {
    llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
    return fe.is_float() ? ir.CreateFCmpUNE(v, zero) : ir.CreateICmpNE(v, zero);
  }
  if (te.is_float()) {
    llvm::Value* r = nullptr;
    if (fe.is_float()) {
      unsigned from_bits = v->getType()->getScalarSizeInBits();
      unsigned to_bits = dst->getScalarSizeInBits();
      r = from_bits == to_bits  ? v
          : from_bits < to_bits ? ir.CreateFPExt(v, dst)
                                : ir.CreateFPTrunc(v, dst);
    } else if (fe.is_int()) {
      r = ir.CreateSIToFP(v, dst);
    } else {
      r = ir.CreateUIToFP(v, dst);
    }
    return RoundToPrecision(r, te);
  }
  if (fe.is_float()) {
    // Saturating, NaN -> 0: the interpreter's rule, and never poison.
    llvm::Intrinsic::ID id =
        te.is_int() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return ir.CreateIntrinsic(id, {dst, v->getType()}, {v});
  }
  unsigned from_bits = v->getType()->getScalarSizeInBits();
  unsigned to_bits = dst->getScalarSizeInBits();
  if (to_bits < from_bits) return ir.CreateTrunc(v, dst);
  if (to_bits == from_bits) return v;  // int <-> uint of the same width
  return fe.is_int() ? ir.CreateSExt(v, dst) : ir.CreateZExt(v, dst);
}

llvm::Value* CodeGenLLVM::VisitExpr_(const CastNode* op) {
  return EmitCast(op->value.dtype(), op->dtype, VisitExpr(op->value));
}

// ---- Vectors ----

llvm::Value* CodeGenLLVM::VisitExpr_(const RampNode* op) {
  llvm::IRBuilder<>& ir = *builder_;
  llvm::Value* base = VisitExpr(op->base);
  llvm::Value* stride = VisitExpr(op->stride);
  llvm::Type* elem = base->getType();
  std::vector<llvm::Constant*> iota;
  for (int l = 0; l < op->lanes; ++l) {
    iota.push_back(elem->isFloatingPointTy()
                       ? llvm::ConstantFP::get(elem, l)
                       : llvm::ConstantInt::get(elem, static_cast<uint64_t>(l)));
  }
  llvm::Value* steps = llvm::ConstantVector::get(iota);
  llvm::Value* vbase = ir.CreateVectorSplat(op->lanes, base);
  llvm::Value* vstride = ir.CreateVectorSplat(op->lanes, stride);
  if (elem->isFloatingPointTy()) return ir.CreateFAdd(vbase, ir.CreateFMul(vstride, steps));
  return ir.CreateAdd(vbase, ir.CreateMul(vstride, steps));
}

llvm::Value* CodeGenLLVM::VisitExpr_(const BroadcastNode* op) {
  return builder_->CreateVectorSplat(op->lanes, VisitExpr(op->value));
}

// ---- Loads ----

llvm::Value* CodeGenLLVM::Index64(llvm::Value* index, DataType t) {
  llvm::Type* wide = index->getType()->getWithNewType(i64_);
  if (index->getType() == wide) return index;
  return t.is_int() ? builder_->CreateSExtOrTrunc(index, wide)
                    : builder_->CreateZExtOrTrunc(index, wide);
}

llvm::Value* CodeGenLLVM::ElementPtr(const Buffer& buffer, llvm::Value* index) {
  auto it = buffers_.find(buffer.get());
  if (it == buffers_.end()) {
    TT_USER_ERROR("buffer {} is used in {} but is neither a parameter nor allocated around the use",
                  buffer->name, func_name_);
  }
  return builder_->CreateInBoundsGEP(MemType(buffer->dtype.element_of()), it->second, index);
}

const RampNode* CodeGenLLVM::DenseRamp(const Expr& index) {
  const auto* ramp = index.as<RampNode>();
  return ramp != nullptr && IsConstInt(ramp->stride, 1) ? ramp : nullptr;
}

llvm::Value* CodeGenLLVM::VisitExpr_(const BufferLoadNode* op) {
  if (op->indices.size() != 1) {
    TT_USER_ERROR(
        "buffer {} is accessed with {} indices: the LLVM backend needs lowered, "
        "one-dimensional buffers",
        op->buffer->name, op->indices.size());
  }
  llvm::IRBuilder<>& ir = *builder_;
  DataType element = op->buffer->dtype.element_of();
  llvm::Type* mem = MemType(element);
  llvm::Align align(element.bytes());
  const Expr& index = op->indices[0];
  int lanes = op->dtype.lanes();
  if (lanes == 1) {
    llvm::Value* ptr = ElementPtr(op->buffer, Index64(VisitExpr(index), index.dtype()));
    return FromMemory(ir.CreateAlignedLoad(mem, ptr, align), element);
  }
  llvm::Type* vec = llvm::FixedVectorType::get(mem, lanes);
  if (const RampNode* ramp = DenseRamp(index)) {
    llvm::Value* ptr = ElementPtr(op->buffer, Index64(VisitExpr(ramp->base), ramp->base.dtype()));
    return FromMemory(ir.CreateAlignedLoad(vec, ptr, align), element);
  }
  llvm::Value* ptrs = ElementPtr(op->buffer, Index64(VisitExpr(index), index.dtype()));
  return FromMemory(ir.CreateMaskedGather(vec, ptrs, align), element);
}

}  // namespace tirtune::codegen
