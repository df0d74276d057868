// The interpreter's control statements: sequences, loops, conditionals, evaluate, let and the
// GPU barrier. Loops
// of every kind (parallel, vectorized, unrolled, thread-bound) run serially: the oracle only
// defines what a program computes, not how fast.
#include <algorithm>

#include "code.h"
#include "tirtune/interp/interpreter.h"

namespace tirtune::interp {
namespace {

class SeqCode final : public StmtCode {
 public:
  explicit SeqCode(std::vector<const StmtCode*> seq) : seq_(std::move(seq)) {}
  void Exec(Machine& m) const override {
    const StmtCode* const* seq = seq_.data();
    for (size_t k = 0, n = seq_.size(); k < n; ++k) seq[k]->Exec(m);
  }

 private:
  std::vector<const StmtCode*> seq_;
};

class ForCode final : public StmtCode {
 public:
  ForCode(Scalar* loop_var, const ExprCode* min, const ExprCode* extent, const StmtCode* body)
      : loop_var_(loop_var), min_(min), extent_(extent), body_(body) {}
  void Exec(Machine& m) const override {
    min_->Eval(m);
    extent_->Eval(m);
    int64_t lo = min_->result[0].i;
    int64_t extent = extent_->result[0].i;
    for (int64_t i = 0; i < extent; ++i) {
      loop_var_->i = lo + i;
      body_->Exec(m);
    }
  }

 private:
  Scalar* loop_var_;
  const ExprCode* min_;
  const ExprCode* extent_;
  const StmtCode* body_;
};

class IfCode final : public StmtCode {
 public:
  IfCode(const ExprCode* cond, const StmtCode* then_case, const StmtCode* else_case)
      : cond_(cond), then_(then_case), else_(else_case) {}
  void Exec(Machine& m) const override {
    cond_->Eval(m);
    if (cond_->result[0].i != 0) {
      then_->Exec(m);
    } else if (else_ != nullptr) {
      else_->Exec(m);
    }
  }

 private:
  const ExprCode* cond_;
  const StmtCode* then_;
  const StmtCode* else_;
};

// Evaluated for its checks (bounds, division by zero); the IR has no side-effecting calls.
class EvaluateCode final : public StmtCode {
 public:
  explicit EvaluateCode(const ExprCode* value) : value_(value) {}
  void Exec(Machine& m) const override { value_->Eval(m); }

 private:
  const ExprCode* value_;
};

class LetStmtCode final : public StmtCode {
 public:
  LetStmtCode(Scalar* slot, const ExprCode* value, const StmtCode* body)
      : slot_(slot), value_(value), body_(body) {}
  void Exec(Machine& m) const override {
    value_->Eval(m);
    std::copy_n(value_->result, value_->lanes, slot_);
    body_->Exec(m);
  }

 private:
  Scalar* slot_;
  const ExprCode* value_;
  const StmtCode* body_;
};

class BarrierCode final : public StmtCode {
 public:
  explicit BarrierCode(int id) : id_(id) {}
  void Exec(Machine& m) const override {
    if (m.barrier == nullptr) {
      throw InterpError(
          "sync_threads() outside a GPU kernel: a lowered GPU module runs in the GPU executor");
    }
    m.barrier->Arrive(id_, m);
  }

 private:
  int id_;
};

}  // namespace

StmtCodePtr MakeSeqCode(std::vector<const StmtCode*> seq) {
  return std::make_unique<SeqCode>(std::move(seq));
}

StmtCodePtr MakeForCode(Scalar* loop_var, const ExprCode* min, const ExprCode* extent,
                        const StmtCode* body) {
  return std::make_unique<ForCode>(loop_var, min, extent, body);
}

StmtCodePtr MakeIfCode(const ExprCode* cond, const StmtCode* then_case, const StmtCode* else_case) {
  return std::make_unique<IfCode>(cond, then_case, else_case);
}

StmtCodePtr MakeEvaluateCode(const ExprCode* value) {
  return std::make_unique<EvaluateCode>(value);
}

StmtCodePtr MakeLetStmtCode(Scalar* slot, const ExprCode* value, const StmtCode* body) {
  return std::make_unique<LetStmtCode>(slot, value, body);
}

StmtCodePtr MakeBarrierCode(int id) { return std::make_unique<BarrierCode>(id); }

}  // namespace tirtune::interp
