// Statement and function text (docs/TEXT_FORMAT.md) and the public Print/ToString entry points.
// Scoped parts of a node (a loop's range, a block's bindings) are printed before the names they
// define, so that a redefinition never renames a use in the enclosing scope.
#include "tirtune/ir/printer.h"

#include <fmt/format.h>

#include "ir_printer.h"
#include "literal_text.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

constexpr int kIndentWidth = 4;

bool IsConstTrue(const Expr& e) { return e.dtype().is_bool() && IsConstInt(e, 1); }

const char* IterKindName(IterKind kind) {
  return kind == IterKind::kSpatial ? "spatial" : "reduce";
}

// The keyword after `in` in a loop header; serial loops read as Python's `range`.
const char* LoopKeyword(ForKind kind) {
  return kind == ForKind::kSerial ? "range" : ForKindName(kind);
}

}  // namespace

IRPrinter::IRPrinter(const PrintOptions& options)
    : marked_(options.marked.begin(), options.marked.end()),
      mark_message_(options.mark_message),
      names_(options.canonical_names) {}

void IRPrinter::Line(int indent, const std::string& text, bool marked) {
  std::string margin(static_cast<size_t>(indent * kIndentWidth), ' ');
  out_ += margin + text + "\n";
  if (!marked) return;
  out_ += margin + std::string(text.size(), '^');
  if (!mark_message_.empty()) out_ += " " + mark_message_;
  out_ += "\n";
}

std::string IRPrinter::BufferName(const Buffer& buffer) {
  return names_.Buffer(buffer.get(), buffer->name);
}

std::string IRPrinter::TupleText(const std::vector<Expr>& dims) {
  if (dims.size() == 1) return "(" + ExprText(dims[0]) + ",)";
  return "(" + ArgsText(dims) + ")";
}

std::string IRPrinter::BufferSpecText(const BufferNode* buffer) {
  std::string text = TupleText(buffer->shape) + ", " + buffer->dtype.str();
  if (!buffer->strides.empty()) text += ", strides=" + TupleText(buffer->strides);
  if (buffer->scope != StorageScope::kGlobal) {
    text += fmt::format(", scope={}", QuotedString(StorageScopeName(buffer->scope)));
  }
  if (buffer->align != 64) text += fmt::format(", align={}", buffer->align);
  return text;
}

std::string IRPrinter::RegionText(const BufferRegion& region) {
  std::string text = BufferName(region.buffer) + "[";
  for (size_t i = 0; i < region.region.size(); ++i) {
    const Range& r = region.region[i];
    if (i > 0) text += ", ";
    const int64_t* min = AsConstInt(r.min);
    const int64_t* extent = AsConstInt(r.extent);
    if (extent != nullptr && *extent == 1 && r.extent.dtype() == r.min.dtype()) {
      text += ExprText(r.min);
    } else if (min != nullptr && extent != nullptr) {
      text += ExprText(r.min) + ":" + ExprText(IntImm(r.min.dtype(), *min + *extent));
    } else if (min != nullptr && *min == 0) {
      text += ExprText(r.min) + ":" + ExprText(r.extent);
    } else {
      // `min:min + extent` unfolded, which the parser splits back into min and extent.
      text += ExprText(r.min) + ":" + ExprText(r.min, Precedence::kAdd) + " + " +
              ExprText(r.extent, Precedence::kMul);
    }
  }
  return text + "]";
}

std::string IRPrinter::DictText(const std::map<std::string, Expr>& entries) {
  std::string text = "{";
  for (const auto& [key, value] : entries) {
    if (text.size() > 1) text += ", ";
    text += QuotedString(key) + ": " + ExprText(value);
  }
  return text + "}";
}

void IRPrinter::PrintFunction(const PrimFunc& func) {
  std::string params;
  for (const Buffer& param : func->params) {
    if (!params.empty()) params += ", ";
    const std::string& name = names_.DefineBuffer(param.get(), param->name);
    params += fmt::format("{}: Buffer({})", name, BufferSpecText(param.get()));
  }
  const bool canonical = names_.canonical();
  Line(0, "@prim_func");
  Line(0, fmt::format("def {}({}):", canonical ? "main" : func->name, params));
  if (!func->attrs.empty()) Line(1, fmt::format("func_attr({})", DictText(func->attrs)));
  PrintStmt(func->body, 1);
}

void IRPrinter::PrintStmt(const Stmt& stmt, int indent) {
  TT_ICHECK(stmt.defined(), "printing an undefined statement");
  switch (stmt->kind()) {
    case NodeKind::kFor:
      return PrintFor(static_cast<const ForNode*>(stmt.get()), indent);
    case NodeKind::kBlockRealize: {
      const auto* realize = static_cast<const BlockRealizeNode*>(stmt.get());
      return PrintBlock(realize, realize->block.get(), indent);
    }
    case NodeKind::kBlock:
      return PrintBlock(nullptr, static_cast<const BlockNode*>(stmt.get()), indent);
    case NodeKind::kBufferStore: {
      const auto* store = static_cast<const BufferStoreNode*>(stmt.get());
      std::string target =
          fmt::format("{}[{}]", BufferName(store->buffer), ArgsText(store->indices));
      return Line(indent, target + " = " + ExprText(store->value), IsMarked(store));
    }
    case NodeKind::kSeqStmt:
      for (const Stmt& s : static_cast<const SeqStmtNode*>(stmt.get())->seq) {
        PrintStmt(s, indent);
      }
      return;
    case NodeKind::kIfThenElse:
      return PrintIf(static_cast<const IfThenElseNode*>(stmt.get()), indent);
    case NodeKind::kEvaluate: {
      const auto* eval = static_cast<const EvaluateNode*>(stmt.get());
      return Line(indent, "evaluate(" + ExprText(eval->value) + ")", IsMarked(eval));
    }
    case NodeKind::kBarrier:
      return Line(indent, "sync_threads()", IsMarked(stmt.get()));
    case NodeKind::kLetStmt: {
      const auto* let = static_cast<const LetStmtNode*>(stmt.get());
      std::string value = ExprText(let->value);
      const std::string& var = names_.DefineVar(let->var.get(), let->var->name);
      Line(indent, fmt::format("with let({}, {}):", var, value), IsMarked(let));
      return PrintStmt(let->body, indent + 1);
    }
    case NodeKind::kAllocate: {
      const auto* alloc = static_cast<const AllocateNode*>(stmt.get());
      std::string spec = BufferSpecText(alloc->buffer.get());
      const std::string& name = names_.DefineBuffer(alloc->buffer.get(), alloc->buffer->name);
      Line(indent, fmt::format("with allocate({}, {}):", name, spec), IsMarked(alloc));
      return PrintStmt(alloc->body, indent + 1);
    }
    default:
      TT_UNREACHABLE("not a statement kind: {}", static_cast<int>(stmt->kind()));
  }
}

void IRPrinter::PrintFor(const ForNode* loop, int indent) {
  std::string args = ExprText(loop->extent);
  if (loop->for_kind == ForKind::kThreadBinding) {
    args += ", thread=" + QuotedString(loop->thread_tag);
  }
  if (!IsConstInt(loop->min, 0)) args += ", min=" + ExprText(loop->min);
  if (!loop->annotations.empty()) args += ", annotations=" + DictText(loop->annotations);
  const std::string& var = names_.DefineVar(loop->loop_var.get(), loop->loop_var->name);
  Line(indent, fmt::format("for {} in {}({}):", var, LoopKeyword(loop->for_kind), args),
       IsMarked(loop));
  PrintStmt(loop->body, indent + 1);
}

void IRPrinter::PrintBlock(const BlockRealizeNode* realize, const BlockNode* block, int indent) {
  Line(indent, fmt::format("with block({}):", QuotedString(block->name)),
       IsMarked(block) || (realize != nullptr && IsMarked(realize)));
  const int inner = indent + 1;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    std::string args = ExprText(iv.dom.extent);
    // A block printed without its realize (ToString of a bare Block) has no bindings.
    if (realize != nullptr) args += ", " + ExprText(realize->iter_values[i]);
    if (!IsConstInt(iv.dom.min, 0)) args += ", min=" + ExprText(iv.dom.min);
    const std::string& var = names_.DefineVar(iv.var.get(), iv.var->name);
    Line(inner, fmt::format("{} = axis.{}({})", var, IterKindName(iv.kind), args));
  }
  if (realize != nullptr && !IsConstTrue(realize->predicate)) {
    Line(inner, "where(" + ExprText(realize->predicate) + ")");
  }
  // Allocated buffers are defined before the regions so that a region may name them.
  std::vector<std::string> allocs;
  for (const Buffer& buffer : block->alloc_buffers) {
    std::string spec = BufferSpecText(buffer.get());
    const std::string& name = names_.DefineBuffer(buffer.get(), buffer->name);
    allocs.push_back(fmt::format("{} = alloc_buffer({})", name, spec));
  }
  auto regions_text = [this](const std::vector<BufferRegion>& regions) {
    std::string text;
    for (const BufferRegion& r : regions) text += (text.empty() ? "" : ", ") + RegionText(r);
    return text;
  };
  Line(inner, "reads(" + regions_text(block->reads) + ")");
  Line(inner, "writes(" + regions_text(block->writes) + ")");
  for (const std::string& alloc : allocs) Line(inner, alloc);
  if (!block->annotations.empty()) Line(inner, "block_attr(" + DictText(block->annotations) + ")");
  if (block->init.defined()) {
    Line(inner, "with init():");
    PrintStmt(block->init, inner + 1);
  }
  PrintStmt(block->body, inner);
}

void IRPrinter::PrintIf(const IfThenElseNode* node, int indent) {
  Line(indent, "if " + ExprText(node->condition) + ":", IsMarked(node));
  PrintStmt(node->then_case, indent + 1);
  if (!node->else_case.defined()) return;
  Line(indent, "else:");
  PrintStmt(node->else_case, indent + 1);
}

std::string Print(const PrimFunc& func, const PrintOptions& options) {
  IRPrinter printer(options);
  printer.PrintFunction(func);
  return printer.text();
}

std::string ToString(const Stmt& stmt) {
  IRPrinter printer(PrintOptions{});
  printer.PrintStmt(stmt, 0);
  std::string text = printer.text();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

std::string ToString(const Expr& expr) {
  IRPrinter printer(PrintOptions{});
  return printer.ExprText(expr);
}

}  // namespace tirtune
