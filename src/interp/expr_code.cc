// The interpreter's non-binary expressions: not, select, cast, math intrinsics, ramp, broadcast,
// let, and the in-place values (immediates and variables); plus the arena and machine they use.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "code.h"
#include "tirtune/interp/interpreter.h"

namespace tirtune::interp {

Scalar* ScalarArena::Allocate(int lanes) {
  // make_unique<Scalar[]> value-initializes, so every run starts zeroed.
  size_t n = static_cast<size_t>(std::max(lanes, 1));
  if (n > kBlockSize) {
    wide_.push_back(std::make_unique<Scalar[]>(n));
    return wide_.back().get();
  }
  if (used_ + n > kBlockSize) {
    blocks_.push_back(std::make_unique<Scalar[]>(kBlockSize));
    used_ = 0;
  }
  Scalar* p = blocks_.back().get() + used_;
  used_ += n;
  return p;
}

std::string Machine::Where() const {
  if (block == nullptr) return "";
  return fmt::format(" (in block \"{}\")", *block);
}

namespace {

class InPlaceCode final : public ExprCode {
 public:
  using ExprCode::ExprCode;
};

class NotCode final : public ExprCode {
 public:
  NotCode(const ExprCode* a, Scalar* result) : ExprCode(a->dtype, result), a_(a) {}
  void Eval(Machine& m) const override {
    a_->Eval(m);
    const Scalar* x = a_->result;
    for (int l = 0, n = lanes; l < n; ++l) result[l].i = x[l].i == 0 ? 1 : 0;
  }

 private:
  const ExprCode* a_;
};

// Both branches are evaluated (the IR allows it), then chosen per lane; a scalar condition
// applies to every lane.
class SelectCode final : public ExprCode {
 public:
  SelectCode(const ExprCode* cond, const ExprCode* t, const ExprCode* f, Scalar* result)
      : ExprCode(t->dtype, result), cond_(cond), t_(t), f_(f) {}
  void Eval(Machine& m) const override {
    cond_->Eval(m);
    t_->Eval(m);
    f_->Eval(m);
    const Scalar* c = cond_->result;
    int cond_step = cond_->lanes == 1 ? 0 : 1;
    for (int l = 0, n = lanes; l < n; ++l) {
      result[l] = c[l * cond_step].i != 0 ? t_->result[l] : f_->result[l];
    }
  }

 private:
  const ExprCode* cond_;
  const ExprCode* t_;
  const ExprCode* f_;
};

class CastCode final : public ExprCode {
 public:
  CastCode(DataType to, const ExprCode* value, Scalar* result)
      : ExprCode(to, result), value_(value) {}
  void Eval(Machine& m) const override {
    value_->Eval(m);
    const Scalar* x = value_->result;
    DataType from = value_->dtype;
    for (int l = 0, n = lanes; l < n; ++l) result[l] = Convert(x[l], from, dtype);
  }

 private:
  const ExprCode* value_;
};

double ApplyIntrinsic(Intrinsic op, const double* x) {
  switch (op) {
    case Intrinsic::kExp:
      return std::exp(x[0]);
    case Intrinsic::kExp2:
      return std::exp2(x[0]);
    case Intrinsic::kLog:
      return std::log(x[0]);
    case Intrinsic::kLog2:
      return std::log2(x[0]);
    case Intrinsic::kSqrt:
      return std::sqrt(x[0]);
    case Intrinsic::kRsqrt:
      return 1.0 / std::sqrt(x[0]);
    case Intrinsic::kTanh:
      return std::tanh(x[0]);
    case Intrinsic::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x[0]));
    case Intrinsic::kErf:
      return std::erf(x[0]);
    case Intrinsic::kPow:
      return std::pow(x[0], x[1]);
    case Intrinsic::kFabs:
      return std::fabs(x[0]);
    case Intrinsic::kFloor:
      return std::floor(x[0]);
    case Intrinsic::kCeil:
      return std::ceil(x[0]);
    // Halfway cases go to even, like LLVM's nearbyint that TVM lowers `round` to.
    case Intrinsic::kRound:
      return std::nearbyint(x[0]);
    case Intrinsic::kTrunc:
      return std::trunc(x[0]);
    case Intrinsic::kSin:
      return std::sin(x[0]);
    case Intrinsic::kCos:
      return std::cos(x[0]);
    case Intrinsic::kFma:
      return std::fma(x[0], x[1], x[2]);
    case Intrinsic::kWarpShuffleXor:  // a ShuffleCode of its own
      break;
  }
  return 0;
}

// Intrinsics take float operands; they are computed in double and rounded to the result type's
// arithmetic precision.
class CallCode final : public ExprCode {
 public:
  CallCode(Intrinsic op, DataType dtype, std::vector<const ExprCode*> args, Scalar* result)
      : ExprCode(dtype, result),
        op_(op),
        args_(std::move(args)),
        round_(NumClassOf(dtype) == NumClass::kFloat32) {}
  void Eval(Machine& m) const override {
    for (const ExprCode* a : args_) a->Eval(m);
    double x[3] = {0, 0, 0};
    for (int l = 0, n = lanes; l < n; ++l) {
      for (size_t k = 0; k < args_.size(); ++k) x[k] = args_[k]->result[l].f;
      double v = ApplyIntrinsic(op_, x);
      result[l].f = round_ ? RoundToFloat(v) : v;
    }
  }

 private:
  Intrinsic op_;
  std::vector<const ExprCode*> args_;
  bool round_;
};

class ShuffleCode final : public ExprCode {
 public:
  ShuffleCode(int id, const ExprCode* value, int64_t lane_mask, Scalar* result)
      : ExprCode(value->dtype, result), id_(id), value_(value), lane_mask_(lane_mask) {}
  void Eval(Machine& m) const override {
    value_->Eval(m);
    if (m.barrier == nullptr) {
      throw InterpError(
          "warp_shuffle_xor outside a GPU kernel: a lowered GPU module runs in the GPU executor");
    }
    result[0] = m.barrier->Shuffle(id_, value_->result[0], lane_mask_, m);
  }

 private:
  int id_;
  const ExprCode* value_;
  int64_t lane_mask_;
};

class RampCode final : public ExprCode {
 public:
  RampCode(const ExprCode* base, const ExprCode* stride, int lanes, Scalar* result)
      : ExprCode(base->dtype.with_lanes(lanes), result), base_(base), stride_(stride) {}
  void Eval(Machine& m) const override {
    base_->Eval(m);
    stride_->Eval(m);
    Scalar base = base_->result[0];
    Scalar stride = stride_->result[0];
    DataType t = dtype.element_of();
    for (int l = 0, n = lanes; l < n; ++l) {
      if (t.is_float()) {
        double v = base.f + l * stride.f;
        result[l].f = NumClassOf(t) == NumClass::kFloat32 ? RoundToFloat(v) : v;
      } else {
        uint64_t v = static_cast<uint64_t>(base.i) +
                     static_cast<uint64_t>(l) * static_cast<uint64_t>(stride.i);
        result[l].i = WrapInt(v, t.bits(), t.is_int());
      }
    }
  }

 private:
  const ExprCode* base_;
  const ExprCode* stride_;
};

class BroadcastCode final : public ExprCode {
 public:
  BroadcastCode(const ExprCode* value, int lanes, Scalar* result)
      : ExprCode(value->dtype.with_lanes(lanes), result), value_(value) {}
  void Eval(Machine& m) const override {
    value_->Eval(m);
    Scalar v = value_->result[0];
    for (int l = 0, n = lanes; l < n; ++l) result[l] = v;
  }

 private:
  const ExprCode* value_;
};

// The result is the body's result area itself, so nothing is copied out.
class LetCode final : public ExprCode {
 public:
  LetCode(Scalar* slot, const ExprCode* value, const ExprCode* body)
      : ExprCode(body->dtype, body->result), slot_(slot), value_(value), body_(body) {}
  void Eval(Machine& m) const override {
    value_->Eval(m);
    std::copy_n(value_->result, value_->lanes, slot_);
    body_->Eval(m);
  }

 private:
  Scalar* slot_;
  const ExprCode* value_;
  const ExprCode* body_;
};

}  // namespace

ExprCodePtr MakeNotCode(const ExprCode* a, ScalarArena* arena) {
  return std::make_unique<NotCode>(a, arena->Allocate(a->lanes));
}

ExprCodePtr MakeSelectCode(const ExprCode* cond, const ExprCode* t, const ExprCode* f,
                           ScalarArena* arena) {
  return std::make_unique<SelectCode>(cond, t, f, arena->Allocate(t->lanes));
}

ExprCodePtr MakeCastCode(DataType to, const ExprCode* value, ScalarArena* arena) {
  NumClassOf(to);  // rejects types the interpreter cannot compute in
  return std::make_unique<CastCode>(to, value, arena->Allocate(to.lanes()));
}

ExprCodePtr MakeCallCode(Intrinsic op, DataType dtype, std::vector<const ExprCode*> args,
                         ScalarArena* arena) {
  return std::make_unique<CallCode>(op, dtype, std::move(args), arena->Allocate(dtype.lanes()));
}

ExprCodePtr MakeShuffleCode(int id, const ExprCode* value, int64_t lane_mask,
                            ScalarArena* arena) {
  return std::make_unique<ShuffleCode>(id, value, lane_mask, arena->Allocate(1));
}

ExprCodePtr MakeRampCode(const ExprCode* base, const ExprCode* stride, int lanes,
                         ScalarArena* arena) {
  return std::make_unique<RampCode>(base, stride, lanes, arena->Allocate(lanes));
}

ExprCodePtr MakeBroadcastCode(const ExprCode* value, int lanes, ScalarArena* arena) {
  return std::make_unique<BroadcastCode>(value, lanes, arena->Allocate(lanes));
}

ExprCodePtr MakeLetCode(Scalar* slot, const ExprCode* value, const ExprCode* body) {
  return std::make_unique<LetCode>(slot, value, body);
}

ExprCodePtr MakeInPlaceCode(DataType dtype, Scalar* where) {
  return std::make_unique<InPlaceCode>(dtype, where);
}

}  // namespace tirtune::interp
