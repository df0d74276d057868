// Statements and functions of the lowered IR as LLVM IR: the kernel entry point and its
// calling convention, loops with their pragma metadata, conditionals, stores (scalar,
// contiguous, scattered), stack and heap allocations, and parallel loops outlined into closures
// that the runtime thread pool runs.
//
// A parallel loop `for i in parallel(min, extent): BODY` becomes
//
//   i32 NAME.parallel_K.body(i64 begin, i64 end, <captured values>, ptr noalias <buffers>)
//       { for i in [min + begin, min + end): BODY }             ; alwaysinline
//   i32 NAME.parallel_K(i64 begin, i64 end, ptr closure)         ; unpacks, calls .body
//   ... at the loop: store the captured values into a stack closure, then
//   rc = tirtune_parallel_for(NAME.parallel_K, closure, extent, num_cores); return rc if non-zero
//
// Buffers reach the body as noalias arguments (not as pointers loaded from the closure), so the
// optimizer keeps the alias facts it needs to vectorize.
#include <fmt/format.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "llvm_codegen.h"
#include "tirtune/support/error.h"

namespace tirtune::codegen {

namespace {

// Variables and buffers a statement refers to, in order of first use.
class UseCollector : public StmtVisitor {
 public:
  using StmtVisitor::VisitExpr_;
  std::vector<const VarNode*> vars;
  std::vector<const BufferNode*> buffers;

  void VisitExpr_(const VarNode* op) override {
    if (seen_vars_.insert(op).second) vars.push_back(op);
  }
  void VisitBuffer(const Buffer& buffer) override {
    if (!seen_buffers_.insert(buffer.get()).second) return;
    buffers.push_back(buffer.get());
    for (const Expr& e : buffer->shape) VisitExpr(e);
  }

 private:
  std::unordered_set<const VarNode*> seen_vars_;
  std::unordered_set<const BufferNode*> seen_buffers_;
};

// Lowered buffers are flat and compact: one dimension, no strides (or the unit stride).
void CheckFlat(const Buffer& buffer) {
  bool unit_strides =
      buffer->strides.empty() || (buffer->strides.size() == 1 && IsConstInt(buffer->strides[0], 1));
  if (buffer->shape.size() != 1 || !unit_strides) {
    TT_USER_ERROR("buffer {} has {} dimensions{}: the LLVM backend needs lowered, flat buffers",
                  buffer->name, buffer->shape.size(), unit_strides ? "" : " and strides");
  }
}

}  // namespace

CodeGenLLVM::ScopedVar::ScopedVar(CodeGenLLVM* cg, const VarNode* var, llvm::Value* value)
    : cg_(cg), var_(var) {
  auto it = cg->vars_.find(var);
  previous_ = it == cg->vars_.end() ? nullptr : it->second;
  cg->vars_[var] = value;
}

CodeGenLLVM::ScopedVar::~ScopedVar() {
  if (previous_ == nullptr) {
    cg_->vars_.erase(var_);
  } else {
    cg_->vars_[var_] = previous_;
  }
}

CodeGenLLVM::CodeGenLLVM(const ModuleConfig& config, llvm::LLVMContext* ctx)
    : config_(config), ctx_(ctx) {
  i1_ = llvm::Type::getInt1Ty(*ctx);
  i8_ = llvm::Type::getInt8Ty(*ctx);
  i32_ = llvm::Type::getInt32Ty(*ctx);
  i64_ = llvm::Type::getInt64Ty(*ctx);
  f32_ = llvm::Type::getFloatTy(*ctx);
  ptr_ = llvm::PointerType::get(*ctx, 0);
  builder_ = std::make_unique<llvm::IRBuilder<>>(*ctx);
}

void CodeGenLLVM::SetFunctionAttributes(llvm::Function* f) {
  f->addFnAttr("target-cpu", config_.cpu);
  if (!config_.features.empty()) f->addFnAttr("target-features", config_.features);
  f->addFnAttr(llvm::Attribute::NoUnwind);
}

llvm::BasicBlock* CodeGenLLVM::NewBlock(const char* name) {
  return llvm::BasicBlock::Create(*ctx_, name, function_);
}

llvm::Function* CodeGenLLVM::DeclareRuntime(const char* name, llvm::FunctionType* type) {
  llvm::Function* f = module_->getFunction(name);
  if (f == nullptr) {
    f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_.get());
    f->addFnAttr(llvm::Attribute::NoUnwind);
  }
  return f;
}

std::unique_ptr<llvm::Module> CodeGenLLVM::Build(const PrimFunc& func) {
  func_name_ = func->name;
  module_ = std::make_unique<llvm::Module>(func->name, *ctx_);
  module_->setTargetTriple(config_.triple);
  module_->setDataLayout(config_.data_layout);

  // Step 1. The body, in an internal function whose buffer arguments are noalias and aligned.
  std::vector<llvm::Type*> param_types(func->params.size(), ptr_);
  llvm::Function* impl =
      llvm::Function::Create(llvm::FunctionType::get(i32_, param_types, false),
                             llvm::Function::InternalLinkage, func->name + ".impl", module_.get());
  SetFunctionAttributes(impl);
  impl->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t i = 0; i < func->params.size(); ++i) {
    const Buffer& buffer = func->params[i];
    CheckFlat(buffer);
    llvm::Argument* arg = impl->getArg(i);
    arg->setName(buffer->name);
    arg->addAttr(llvm::Attribute::NoAlias);
    arg->addAttr(llvm::Attribute::getWithAlignment(*ctx_, llvm::Align(64)));
    bool constant_shape = true;
    for (const Expr& d : buffer->shape) constant_shape = constant_shape && AsConstInt(d) != nullptr;
    if (constant_shape && buffer.ConstNumElements() > 0) {
      uint64_t bytes = static_cast<uint64_t>(buffer.ConstNumElements()) *
                       config_.data_layout.getTypeAllocSize(MemType(buffer->dtype.element_of()));
      arg->addAttr(llvm::Attribute::getWithDereferenceableBytes(*ctx_, bytes));
    }
    buffers_[buffer.get()] = arg;
  }
  function_ = impl;
  builder_->SetInsertPoint(llvm::BasicBlock::Create(*ctx_, "entry", impl));
  VisitStmt(func->body);
  builder_->CreateRet(llvm::ConstantInt::get(i32_, 0));
  buffers_.clear();

  // Step 2. The entry point: i32 NAME(ptr args), args[i] = data of parameter i.
  llvm::Function* entry =
      llvm::Function::Create(llvm::FunctionType::get(i32_, {ptr_}, false),
                             llvm::Function::ExternalLinkage, func->name, module_.get());
  SetFunctionAttributes(entry);
  entry->getArg(0)->setName("args");
  builder_->SetInsertPoint(llvm::BasicBlock::Create(*ctx_, "entry", entry));
  std::vector<llvm::Value*> pointers;
  for (size_t i = 0; i < func->params.size(); ++i) {
    llvm::Value* slot = builder_->CreateConstInBoundsGEP1_64(ptr_, entry->getArg(0), i);
    pointers.push_back(builder_->CreateAlignedLoad(ptr_, slot, llvm::Align(8)));
  }
  builder_->CreateRet(builder_->CreateCall(impl, pointers));

  // Step 3. The signature record LoadObject reads.
  llvm::Constant* text = llvm::ConstantDataArray::getString(*ctx_, SignatureText(func), true);
  new llvm::GlobalVariable(*module_, text->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, text, SignatureSymbol(func->name));

  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module_, &os)) {
    TT_UNREACHABLE("the LLVM module of {} is invalid: {}", func->name, os.str());
  }
  return std::move(module_);
}

// ---- Simple statements ----

void CodeGenLLVM::VisitStmt_(const SeqStmtNode* op) {
  for (const Stmt& s : op->seq) VisitStmt(s);
}

void CodeGenLLVM::VisitStmt_(const EvaluateNode* op) {
  if (op->value.as<IntImmNode>() || op->value.as<FloatImmNode>()) return;
  VisitExpr(op->value);  // no side effects; dead code the optimizer removes
}

void CodeGenLLVM::VisitStmt_(const BarrierNode* /*op*/) {
  TT_UNREACHABLE("sync_threads() reached the CPU code generator: only GPU kernels have barriers");
}

void CodeGenLLVM::VisitStmt_(const LetStmtNode* op) {
  llvm::Value* value = VisitExpr(op->value);
  ScopedVar bind(this, op->var.get(), value);
  VisitStmt(op->body);
}

void CodeGenLLVM::VisitStmt_(const IfThenElseNode* op) {
  llvm::Value* cond = VisitExpr(op->condition);
  llvm::BasicBlock* then_block = NewBlock("if.then");
  llvm::BasicBlock* end_block = NewBlock("if.end");
  llvm::BasicBlock* else_block = op->else_case.defined() ? NewBlock("if.else") : end_block;
  builder_->CreateCondBr(cond, then_block, else_block);
  builder_->SetInsertPoint(then_block);
  VisitStmt(op->then_case);
  builder_->CreateBr(end_block);
  if (op->else_case.defined()) {
    builder_->SetInsertPoint(else_block);
    VisitStmt(op->else_case);
    builder_->CreateBr(end_block);
  }
  builder_->SetInsertPoint(end_block);
}

void CodeGenLLVM::VisitStmt_(const BufferStoreNode* op) {
  if (op->indices.size() != 1) {
    TT_USER_ERROR(
        "buffer {} is accessed with {} indices: the LLVM backend needs lowered, "
        "one-dimensional buffers",
        op->buffer->name, op->indices.size());
  }
  llvm::IRBuilder<>& ir = *builder_;
  DataType element = op->buffer->dtype.element_of();
  llvm::Align align(element.bytes());
  const Expr& index = op->indices[0];
  int lanes = index.dtype().lanes();
  int value_lanes = op->value.dtype().lanes();
  TT_ICHECK(value_lanes == 1 || value_lanes == lanes,
            "store of a {}-lane value into {} through a {}-lane index", value_lanes,
            op->buffer->name, lanes);
  llvm::Value* value = VisitExpr(op->value);
  if (lanes > 1 && value_lanes == 1) value = ir.CreateVectorSplat(lanes, value);
  value = ToMemory(value, element);
  if (lanes == 1) {
    ir.CreateAlignedStore(value, ElementPtr(op->buffer, Index64(VisitExpr(index), index.dtype())),
                          align);
  } else if (const RampNode* ramp = DenseRamp(index)) {
    llvm::Value* ptr = ElementPtr(op->buffer, Index64(VisitExpr(ramp->base), ramp->base.dtype()));
    ir.CreateAlignedStore(value, ptr, align);
  } else {
    // Lanes that hit the same element are written in lane order: the last one wins.
    llvm::Value* ptrs = ElementPtr(op->buffer, Index64(VisitExpr(index), index.dtype()));
    ir.CreateMaskedScatter(value, ptrs, align);
  }
}

void CodeGenLLVM::VisitStmt_(const BlockNode* op) {
  TT_USER_ERROR("block \"{}\" reached the LLVM backend: lower the function first", op->name);
}

void CodeGenLLVM::VisitStmt_(const BlockRealizeNode* op) {
  TT_USER_ERROR("block \"{}\" reached the LLVM backend: lower the function first", op->block->name);
}

// ---- Allocation ----

llvm::Value* CodeGenLLVM::StackAlloca(llvm::Type* element, int64_t count) {
  // In the entry block, so that an allocation inside a loop does not grow the stack per trip.
  llvm::BasicBlock& entry = function_->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.begin());
  llvm::AllocaInst* a = at_entry.CreateAlloca(
      llvm::ArrayType::get(element, static_cast<uint64_t>(std::max<int64_t>(count, 1))));
  a->setAlignment(llvm::Align(64));
  return a;
}

void CodeGenLLVM::ReturnIfFailed(llvm::Value* failed, llvm::Value* rc) {
  llvm::BasicBlock* fail = NewBlock("fail");
  llvm::BasicBlock* ok = NewBlock("ok");
  llvm::MDBuilder md(*ctx_);
  builder_->CreateCondBr(failed, fail, ok, md.createBranchWeights(1, 1 << 20));
  builder_->SetInsertPoint(fail);
  llvm::Function* free_fn = DeclareRuntime(
      "tirtune_workspace_free", llvm::FunctionType::get(builder_->getVoidTy(), {ptr_}, false));
  for (auto it = live_heap_buffers_.rbegin(); it != live_heap_buffers_.rend(); ++it) {
    builder_->CreateCall(free_fn, {*it});
  }
  builder_->CreateRet(rc);
  builder_->SetInsertPoint(ok);
}

void CodeGenLLVM::VisitStmt_(const AllocateNode* op) {
  const Buffer& buffer = op->buffer;
  CheckFlat(buffer);
  DataType element = buffer->dtype.element_of();
  llvm::Type* mem = MemType(element);
  int64_t elem_bytes = static_cast<int64_t>(config_.data_layout.getTypeAllocSize(mem));
  bool constant = true;
  int64_t count = 1;
  for (const Expr& d : buffer->shape) {
    const int64_t* c = AsConstInt(d);
    if (c == nullptr) {
      constant = false;
    } else {
      count *= *c;
    }
  }
  int64_t limit = buffer->scope == StorageScope::kGlobal ? config_.options.max_stack_bytes_global
                                                         : config_.options.max_stack_bytes;
  auto bind = [&](llvm::Value* ptr) {
    TT_ICHECK(buffers_.find(buffer.get()) == buffers_.end(), "buffer {} is allocated twice",
              buffer->name);
    buffers_[buffer.get()] = ptr;
    VisitStmt(op->body);
    buffers_.erase(buffer.get());
  };
  if (constant && count * elem_bytes <= limit) {
    bind(StackAlloca(mem, count));
    return;
  }
  llvm::Value* num = ConstInt(i64_, 1);
  for (const Expr& d : buffer->shape) {
    num = builder_->CreateMul(num, Index64(VisitExpr(d), d.dtype()));
  }
  llvm::Function* alloc_fn =
      DeclareRuntime("tirtune_workspace_alloc", llvm::FunctionType::get(ptr_, {i64_, i64_}, false));
  llvm::Function* free_fn = DeclareRuntime(
      "tirtune_workspace_free", llvm::FunctionType::get(builder_->getVoidTy(), {ptr_}, false));
  llvm::Value* bytes = builder_->CreateMul(num, ConstInt(i64_, elem_bytes));
  llvm::CallInst* ptr = builder_->CreateCall(alloc_fn, {bytes, ConstInt(i64_, 64)});
  ptr->addRetAttr(llvm::Attribute::NoAlias);
  ptr->addRetAttr(llvm::Attribute::getWithAlignment(*ctx_, llvm::Align(64)));
  ReturnIfFailed(builder_->CreateIsNull(ptr), llvm::ConstantInt::get(i32_, TIRTUNE_ERR_ALLOC));
  live_heap_buffers_.push_back(ptr);
  bind(ptr);
  live_heap_buffers_.pop_back();
  builder_->CreateCall(free_fn, {ptr});
}

// ---- Loops ----

llvm::MDNode* CodeGenLLVM::LoopMetadata(const Annotations& annotations, bool unroll_fully) {
  std::vector<llvm::Metadata*> items = {nullptr};  // operand 0 is the loop id itself
  auto flag = [&](const char* name) {
    items.push_back(llvm::MDNode::get(*ctx_, {llvm::MDString::get(*ctx_, name)}));
  };
  auto value = [&](const char* name, llvm::Constant* v) {
    items.push_back(llvm::MDNode::get(
        *ctx_, {llvm::MDString::get(*ctx_, name), llvm::ConstantAsMetadata::get(v)}));
  };
  if (unroll_fully) flag("llvm.loop.unroll.full");
  if (auto it = annotations.find("pragma_unroll"); it != annotations.end()) {
    if (const int64_t* n = AsConstInt(it->second)) {
      if (*n > 1) {
        value("llvm.loop.unroll.count", llvm::ConstantInt::get(i32_, *n));
      } else if (*n == 1) {
        flag("llvm.loop.unroll.disable");
      }
    }
  }
  if (auto it = annotations.find("pragma_vectorize"); it != annotations.end()) {
    if (const int64_t* n = AsConstInt(it->second)) {
      value("llvm.loop.vectorize.enable", llvm::ConstantInt::get(i1_, *n != 0 ? 1 : 0));
    }
  }
  if (items.size() == 1) return nullptr;
  llvm::MDNode* id = llvm::MDNode::getDistinct(*ctx_, items);
  id->replaceOperandWith(0, id);
  return id;
}

void CodeGenLLVM::EmitSerialLoop(const Var& var, llvm::Value* begin, llvm::Value* end,
                                 const Stmt& body, const Annotations& annotations,
                                 bool unroll_fully) {
  llvm::IRBuilder<>& ir = *builder_;
  llvm::BasicBlock* preheader = ir.GetInsertBlock();
  llvm::BasicBlock* header = NewBlock("for.header");
  llvm::BasicBlock* body_block = NewBlock("for.body");
  llvm::BasicBlock* exit = NewBlock("for.end");
  ir.CreateBr(header);
  ir.SetInsertPoint(header);
  llvm::PHINode* iv = ir.CreatePHI(begin->getType(), 2, var->name);
  iv->addIncoming(begin, preheader);
  ir.CreateCondBr(ir.CreateICmpSLT(iv, end), body_block, exit);
  ir.SetInsertPoint(body_block);
  {
    ScopedVar bind(this, var.get(), iv);
    VisitStmt(body);
  }
  llvm::Value* next = ir.CreateAdd(iv, llvm::ConstantInt::get(iv->getType(), 1), "", false,
                                   /*HasNSW=*/true);
  llvm::BranchInst* back = ir.CreateBr(header);
  if (llvm::MDNode* md = LoopMetadata(annotations, unroll_fully)) {
    back->setMetadata(llvm::LLVMContext::MD_loop, md);
  }
  iv->addIncoming(next, ir.GetInsertBlock());
  ir.SetInsertPoint(exit);
}

void CodeGenLLVM::VisitStmt_(const ForNode* op) {
  if (op->for_kind == ForKind::kThreadBinding) {
    TT_USER_ERROR("loop {} is bound to thread axis {}: the CPU backend has no thread axes",
                  op->loop_var->name, op->thread_tag);
  }
  if (op->for_kind == ForKind::kParallel && !in_parallel_) {
    EmitParallelLoop(op);
    return;
  }
  llvm::Type* ty = RegType(op->loop_var.dtype());
  llvm::Value* min = builder_->CreateSExtOrTrunc(VisitExpr(op->min), ty);
  llvm::Value* extent = builder_->CreateSExtOrTrunc(VisitExpr(op->extent), ty);
  Annotations annotations = op->annotations;
  if (op->for_kind == ForKind::kVectorized && !annotations.count("pragma_vectorize")) {
    annotations["pragma_vectorize"] = Expr(1);
  }
  EmitSerialLoop(op->loop_var, min, builder_->CreateAdd(min, extent), op->body, annotations,
                 /*unroll_fully=*/op->for_kind == ForKind::kUnrolled);
}

void CodeGenLLVM::EmitParallelLoop(const ForNode* op) {
  llvm::IRBuilder<>& ir = *builder_;
  llvm::Type* iv_type = RegType(op->loop_var.dtype());
  llvm::Value* min = ir.CreateSExtOrTrunc(VisitExpr(op->min), iv_type);
  llvm::Value* extent = ir.CreateSExtOrTrunc(VisitExpr(op->extent), i64_);

  // Step 1. What the body uses from outside: bound variables and live buffers.
  UseCollector uses;
  uses.VisitStmt(op->body);
  std::vector<std::pair<const VarNode*, llvm::Value*>> vars;
  for (const VarNode* v : uses.vars) {
    if (v == op->loop_var.get()) continue;
    if (auto it = vars_.find(v); it != vars_.end()) vars.emplace_back(v, it->second);
  }
  std::vector<std::pair<const BufferNode*, llvm::Value*>> buffers;
  for (const BufferNode* b : uses.buffers) {
    if (auto it = buffers_.find(b); it != buffers_.end()) buffers.emplace_back(b, it->second);
  }

  // Step 2. The body function: (begin, end, min, vars..., buffers...).
  std::string name = fmt::format("{}.parallel_{}", func_name_, num_outlined_++);
  std::vector<llvm::Type*> body_params = {i64_, i64_, iv_type};
  for (auto& [v, value] : vars) body_params.push_back(value->getType());
  for (size_t k = 0; k < buffers.size(); ++k) body_params.push_back(ptr_);
  llvm::Function* body_fn =
      llvm::Function::Create(llvm::FunctionType::get(i32_, body_params, false),
                             llvm::Function::InternalLinkage, name + ".body", module_.get());
  SetFunctionAttributes(body_fn);
  body_fn->addFnAttr(llvm::Attribute::AlwaysInline);
  {
    // Save the enclosing function's state; the body starts from the captured values only.
    llvm::IRBuilderBase::InsertPoint saved_ip = ir.saveIP();
    llvm::Function* saved_function = function_;
    auto saved_vars = std::move(vars_);
    auto saved_buffers = std::move(buffers_);
    auto saved_heap = std::move(live_heap_buffers_);
    vars_.clear();
    buffers_.clear();
    live_heap_buffers_.clear();
    function_ = body_fn;
    in_parallel_ = true;

    unsigned arg = 3;
    for (auto& [v, value] : vars) vars_[v] = body_fn->getArg(arg++);
    for (auto& [b, value] : buffers) {
      llvm::Argument* a = body_fn->getArg(arg++);
      a->addAttr(llvm::Attribute::NoAlias);
      a->setName(b->name);
      buffers_[b] = a;
    }
    ir.SetInsertPoint(llvm::BasicBlock::Create(*ctx_, "entry", body_fn));
    llvm::Value* lo = body_fn->getArg(2);
    llvm::Value* begin = ir.CreateAdd(lo, ir.CreateSExtOrTrunc(body_fn->getArg(0), iv_type));
    llvm::Value* end = ir.CreateAdd(lo, ir.CreateSExtOrTrunc(body_fn->getArg(1), iv_type));
    EmitSerialLoop(op->loop_var, begin, end, op->body, op->annotations, false);
    ir.CreateRet(llvm::ConstantInt::get(i32_, 0));

    in_parallel_ = false;
    function_ = saved_function;
    vars_ = std::move(saved_vars);
    buffers_ = std::move(saved_buffers);
    live_heap_buffers_ = std::move(saved_heap);
    ir.restoreIP(saved_ip);
  }

  // Step 3. The closure layout and the trampoline the runtime calls.
  std::vector<llvm::Type*> fields = {iv_type};
  for (auto& [v, value] : vars) fields.push_back(value->getType());
  for (size_t k = 0; k < buffers.size(); ++k) fields.push_back(ptr_);
  llvm::StructType* closure_type = llvm::StructType::get(*ctx_, fields);
  llvm::Function* trampoline =
      llvm::Function::Create(llvm::FunctionType::get(i32_, {i64_, i64_, ptr_}, false),
                             llvm::Function::InternalLinkage, name, module_.get());
  SetFunctionAttributes(trampoline);
  {
    llvm::IRBuilder<> tb(llvm::BasicBlock::Create(*ctx_, "entry", trampoline));
    std::vector<llvm::Value*> call_args = {trampoline->getArg(0), trampoline->getArg(1)};
    for (unsigned k = 0; k < fields.size(); ++k) {
      llvm::Value* field = tb.CreateStructGEP(closure_type, trampoline->getArg(2), k);
      call_args.push_back(tb.CreateLoad(fields[k], field));
    }
    tb.CreateRet(tb.CreateCall(body_fn, call_args));
  }

  // Step 4. At the loop: fill the closure and hand it to the runtime.
  llvm::Value* closure = StackAlloca(closure_type, 1);
  std::vector<llvm::Value*> values = {min};
  for (auto& [v, value] : vars) values.push_back(value);
  for (auto& [b, value] : buffers) values.push_back(value);
  for (unsigned k = 0; k < values.size(); ++k) {
    ir.CreateStore(values[k], ir.CreateStructGEP(closure_type, closure, k));
  }
  llvm::Function* parallel_for = DeclareRuntime(
      "tirtune_parallel_for", llvm::FunctionType::get(i32_, {ptr_, ptr_, i64_, i32_}, false));
  llvm::Value* rc = ir.CreateCall(
      parallel_for, {trampoline, closure, extent, llvm::ConstantInt::get(i32_, config_.num_cores)});
  ReturnIfFailed(ir.CreateICmpNE(rc, llvm::ConstantInt::get(i32_, 0)), rc);
}

// ---- Signatures ----

std::string SignatureSymbol(const std::string& func_name) {
  return "__tirtune_signature_" + func_name;
}

std::string SignatureText(const PrimFunc& func) {
  std::string text;
  for (const Buffer& b : func->params) {
    bool constant = true;
    for (const Expr& d : b->shape) constant = constant && AsConstInt(d) != nullptr;
    if (!text.empty()) text += ";";
    text += fmt::format("{}:{}", b->dtype.str(), constant ? b.ConstNumElements() : -1);
  }
  return text;
}

std::vector<KernelParam> ParseSignature(const std::string& text) {
  std::vector<KernelParam> params;
  size_t start = 0;
  while (start < text.size()) {
    size_t semi = text.find(';', start);
    std::string entry =
        text.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
    size_t colon = entry.find(':');
    std::optional<DataType> t = DataType::Parse(entry.substr(0, colon));
    if (colon == std::string::npos || !t) TT_USER_ERROR("bad kernel signature \"{}\"", text);
    params.push_back(KernelParam{*t, std::stoll(entry.substr(colon + 1))});
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return params;
}

std::unique_ptr<llvm::Module> BuildModule(const PrimFunc& func, const ModuleConfig& config,
                                          llvm::LLVMContext* ctx) {
  CodeGenLLVM cg(config, ctx);
  return cg.Build(func);
}

}  // namespace tirtune::codegen
