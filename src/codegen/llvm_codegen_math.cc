// Math intrinsic calls of the lowered IR as LLVM IR: LLVM intrinsics where they lower to
// instructions, libm per vector lane for float64 tanh/erf, and for float32 exp, tanh and erf
// branch-free approximations, so that loops over them vectorize.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <initializer_list>
#include <vector>

#include "llvm_codegen.h"
#include "tirtune/support/error.h"

namespace tirtune::codegen {

llvm::Value* CodeGenLLVM::CallUnaryIntrinsic(llvm::Intrinsic::ID id, llvm::Value* x) {
  return builder_->CreateUnaryIntrinsic(id, x);
}

llvm::Value* CodeGenLLVM::CallLibmPerLane(const char* name, llvm::Value* x) {
  llvm::IRBuilder<>& ir = *builder_;
  llvm::Type* scalar = x->getType()->getScalarType();
  llvm::FunctionCallee fn =
      module_->getOrInsertFunction(name, llvm::FunctionType::get(scalar, {scalar}, false));
  auto* vec = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (vec == nullptr) return ir.CreateCall(fn, {x});
  llvm::Value* out = llvm::PoisonValue::get(vec);
  for (unsigned l = 0; l < vec->getNumElements(); ++l) {
    llvm::Value* lane = ir.CreateCall(fn, {ir.CreateExtractElement(x, l)});
    out = ir.CreateInsertElement(out, lane, l);
  }
  return out;
}

namespace {

// clamp(x, -bound, bound), keeping NaN.
llvm::Value* Clamp(llvm::IRBuilder<>& ir, llvm::Value* x, double bound) {
  llvm::Value* hi = llvm::ConstantFP::get(x->getType(), bound);
  llvm::Value* lo = llvm::ConstantFP::get(x->getType(), -bound);
  x = ir.CreateSelect(ir.CreateFCmpOGT(x, hi), hi, x);
  return ir.CreateSelect(ir.CreateFCmpOLT(x, lo), lo, x);
}

// c[0] + x2 * (c[1] + x2 * (...)), coefficients lowest degree first.
llvm::Value* Horner(llvm::IRBuilder<>& ir, llvm::Value* x2, std::initializer_list<double> c) {
  const double* coeffs = c.begin();
  size_t n = c.size();
  llvm::Value* p = llvm::ConstantFP::get(x2->getType(), coeffs[n - 1]);
  for (size_t k = n - 1; k-- > 0;) {
    p = ir.CreateFAdd(ir.CreateFMul(x2, p), llvm::ConstantFP::get(x2->getType(), coeffs[k]));
  }
  return p;
}

}  // namespace

// Rational approximations of tanh and erf for float32 (Eigen's, also TVM's fast_tanh/fast_erf):
// a few ulp of error, branch-free, so loops over them vectorize.
llvm::Value* CodeGenLLVM::FastTanh(llvm::Value* x) {
  llvm::IRBuilder<>& ir = *builder_;
  x = Clamp(ir, x, 9.0);
  llvm::Value* x2 = ir.CreateFMul(x, x);
  llvm::Value* p =
      ir.CreateFMul(x, Horner(ir, x2,
                              {4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05,
                               5.12229709037114e-08, -8.60467152213735e-11, 2.00018790482477e-13,
                               -2.76076847742355e-16}));
  llvm::Value* q = Horner(
      ir, x2,
      {4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06});
  return ir.CreateFDiv(p, q);
}

llvm::Value* CodeGenLLVM::FastErf(llvm::Value* x) {
  llvm::IRBuilder<>& ir = *builder_;
  x = Clamp(ir, x, 4.0);
  llvm::Value* x2 = ir.CreateFMul(x, x);
  llvm::Value* p =
      ir.CreateFMul(x, Horner(ir, x2,
                              {-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04,
                               -5.69250639462346e-05, -2.10102402082508e-06, 2.77068142495902e-08,
                               -2.72614225801306e-10}));
  llvm::Value* q = Horner(ir, x2,
                          {-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03,
                           -2.13374055278905e-04, -1.45660718464996e-05});
  return ir.CreateFDiv(p, q);
}

// exp for float32 without a call, so that loops over it vectorize (LLVM would split a vector
// llvm.exp into one libm call per lane): x = n ln2 + r with |r| <= ln2 / 2, exp(r) from a degree-6
// polynomial (within 2 ulp of expf), and 2^n applied as two exact power-of-two factors, so that
// results overflow to inf, go subnormal and underflow to 0 where expf does. NaN stays NaN.
llvm::Value* CodeGenLLVM::FastExp(llvm::Value* x) {
  llvm::IRBuilder<>& ir = *builder_;
  llvm::Type* type = x->getType();
  llvm::Type* int_type = type->getWithNewType(ir.getInt32Ty());
  auto constant = [&](double v) { return llvm::ConstantFP::get(type, v); };
  // Beyond these bounds the result is inf or 0 already; clamping keeps 2^n representable.
  llvm::Value* xc = ir.CreateSelect(ir.CreateFCmpOGT(x, constant(89.0)), constant(89.0), x);
  xc = ir.CreateSelect(ir.CreateFCmpOLT(xc, constant(-104.0)), constant(-104.0), xc);
  llvm::Value* n = CallUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                      ir.CreateFMul(xc, constant(1.44269504088896341)));
  // r = x - n ln2, with ln2 split in a part exact in float (few mantissa bits) and the rest.
  llvm::Value* r = ir.CreateFSub(xc, ir.CreateFMul(n, constant(0.693359375)));
  r = ir.CreateFSub(r, ir.CreateFMul(n, constant(-2.12194440e-4)));
  llvm::Value* p = Horner(ir, r,
                          {5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3,
                           1.3981999507e-3, 1.9875691500e-4});
  p = ir.CreateFAdd(ir.CreateFAdd(ir.CreateFMul(ir.CreateFMul(r, r), p), r), constant(1.0));
  // 2^n = 2^h * 2^(n-h) with h = n / 2, each factor a normal float for n in [-150, 128].
  llvm::Value* ni = ir.CreateFPToSI(n, int_type);
  llvm::Value* h = ir.CreateAShr(ni, 1);
  auto power_of_two = [&](llvm::Value* e) {
    return ir.CreateBitCast(
        ir.CreateShl(ir.CreateAdd(e, llvm::ConstantInt::get(int_type, 127)), 23), type);
  };
  llvm::Value* y =
      ir.CreateFMul(ir.CreateFMul(p, power_of_two(h)), power_of_two(ir.CreateSub(ni, h)));
  return ir.CreateSelect(ir.CreateFCmpUNO(x, x), x, y);
}

llvm::Value* CodeGenLLVM::EmitIntrinsic(const CallNode* op, const std::vector<llvm::Value*>& args) {
  llvm::IRBuilder<>& ir = *builder_;
  if (op->op == Intrinsic::kWarpShuffleXor) {
    TT_USER_ERROR("warp_shuffle_xor exists only in GPU kernels, not in CPU code");
  }
  for (const Expr& a : op->args) {
    if (!a.dtype().is_float()) {
      TT_USER_ERROR("intrinsic {} takes float arguments, got {}", IntrinsicName(op->op),
                    a.dtype().str());
    }
  }
  llvm::Value* x = args[0];
  bool is_f64 = x->getType()->getScalarType()->isDoubleTy();
  llvm::Value* one = ConstFloat(x->getType(), 1.0);
  switch (op->op) {
    case Intrinsic::kExp:
      return is_f64 ? CallUnaryIntrinsic(llvm::Intrinsic::exp, x) : FastExp(x);
    case Intrinsic::kExp2:
      return CallUnaryIntrinsic(llvm::Intrinsic::exp2, x);
    case Intrinsic::kLog:
      return CallUnaryIntrinsic(llvm::Intrinsic::log, x);
    case Intrinsic::kLog2:
      return CallUnaryIntrinsic(llvm::Intrinsic::log2, x);
    case Intrinsic::kSqrt:
      return CallUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
    case Intrinsic::kRsqrt:
      return ir.CreateFDiv(one, CallUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
    case Intrinsic::kTanh:
      return is_f64 ? CallLibmPerLane("tanh", x) : FastTanh(x);
    case Intrinsic::kSigmoid: {
      llvm::Value* e = is_f64 ? CallUnaryIntrinsic(llvm::Intrinsic::exp, ir.CreateFNeg(x))
                              : FastExp(ir.CreateFNeg(x));
      return ir.CreateFDiv(one, ir.CreateFAdd(one, e));
    }
    case Intrinsic::kErf:
      return is_f64 ? CallLibmPerLane("erf", x) : FastErf(x);
    case Intrinsic::kPow:
      return ir.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, args[1]);
    case Intrinsic::kFabs:
      return CallUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    case Intrinsic::kFloor:
      return CallUnaryIntrinsic(llvm::Intrinsic::floor, x);
    case Intrinsic::kCeil:
      return CallUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    case Intrinsic::kRound:  // halfway cases to even, like the interpreter's nearbyint
      return CallUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
    case Intrinsic::kTrunc:
      return CallUnaryIntrinsic(llvm::Intrinsic::trunc, x);
    case Intrinsic::kSin:
      return CallUnaryIntrinsic(llvm::Intrinsic::sin, x);
    case Intrinsic::kCos:
      return CallUnaryIntrinsic(llvm::Intrinsic::cos, x);
    case Intrinsic::kFma:
      return ir.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, args[1], args[2]});
    case Intrinsic::kWarpShuffleXor:
      break;
  }
  TT_UNREACHABLE("unknown intrinsic {}", static_cast<int>(op->op));
}

llvm::Value* CodeGenLLVM::VisitExpr_(const CallNode* op) {
  std::vector<llvm::Value*> args;
  for (const Expr& a : op->args) args.push_back(VisitExpr(a));
  return EmitIntrinsic(op, args);
}

}  // namespace tirtune::codegen
