// VerifyLoweredForm: checks a function against the lowered-form contract of lower.h, the promise
// every code generator relies on. Lower() runs it last and treats a violation as a bug.
#include <fmt/format.h>

#include "tirtune/ir/functor.h"
#include "tirtune/ir/verify.h"
#include "tirtune/lower/passes.h"

namespace tirtune {
namespace {

class LoweredFormChecker : public StmtVisitor {
 public:
  explicit LoweredFormChecker(const LowerOptions& options) : options_(options) {}
  using StmtVisitor::VisitExpr_;
  using StmtVisitor::VisitStmt_;

  std::vector<std::string> problems;

  void CheckBuffer(const Buffer& buffer, const char* where) {
    if (buffer->ndim() != 1 || !buffer->strides.empty()) {
      problems.push_back(fmt::format("{} {} has {} dimensions{}, not one", where, buffer->name,
                                     buffer->ndim(),
                                     buffer->strides.empty() ? "" : " and explicit strides"));
    }
  }

  void CheckIndices(const Buffer& buffer, const std::vector<Expr>& indices) {
    for (const Expr& i : indices) {
      if (i.dtype().element_of() != DataType::Index()) {
        problems.push_back(
            fmt::format("an access to {} has an index of type {}", buffer->name, i.dtype().str()));
      }
    }
  }

  void VisitExpr_(const BufferLoadNode* op) override {
    CheckBuffer(op->buffer, "loaded buffer");
    CheckIndices(op->buffer, op->indices);
    StmtVisitor::VisitExpr_(op);
  }

  void VisitStmt_(const BufferStoreNode* op) override {
    CheckBuffer(op->buffer, "stored buffer");
    CheckIndices(op->buffer, op->indices);
    StmtVisitor::VisitStmt_(op);
  }

  void VisitStmt_(const AllocateNode* op) override {
    CheckBuffer(op->buffer, "allocated buffer");
    if (op->buffer->scope == StorageScope::kShared) {
      problems.push_back(fmt::format("allocated buffer {} has scope shared", op->buffer->name));
    }
    StmtVisitor::VisitStmt_(op);
  }

  void VisitStmt_(const BlockNode* op) override {
    problems.push_back(fmt::format("block {} remains", op->name));
    StmtVisitor::VisitStmt_(op);
  }

  void VisitStmt_(const ForNode* op) override {
    const std::string& name = op->loop_var->name;
    switch (op->for_kind) {
      case ForKind::kSerial:
        break;
      case ForKind::kParallel:
        if (in_parallel_) problems.push_back(fmt::format("parallel loop {} is nested", name));
        break;
      case ForKind::kUnrolled: {
        const int64_t* n = AsConstInt(op->extent);
        if (n == nullptr || *n > options_.max_explicit_unroll) {
          problems.push_back(
              fmt::format("unrolled loop {} has an extent beyond the unroll limit", name));
        }
        break;
      }
      case ForKind::kVectorized:
        problems.push_back(fmt::format("vectorized loop {} remains", name));
        break;
      case ForKind::kThreadBinding:
        problems.push_back(fmt::format("thread-bound loop {} remains", name));
        break;
    }
    bool was_parallel = in_parallel_;
    in_parallel_ = in_parallel_ || op->for_kind == ForKind::kParallel;
    StmtVisitor::VisitStmt_(op);
    in_parallel_ = was_parallel;
  }

 private:
  const LowerOptions& options_;
  bool in_parallel_ = false;
};

}  // namespace

std::vector<std::string> VerifyLoweredForm(const PrimFunc& func, const LowerOptions& options) {
  LoweredFormChecker checker(options);
  for (const Buffer& p : func->params) checker.CheckBuffer(p, "parameter");
  checker.VisitStmt(func->body);
  std::vector<std::string> problems = VerifyWellFormed(func);
  problems.insert(problems.end(), checker.problems.begin(), checker.problems.end());
  return problems;
}

}  // namespace tirtune
