// FuseTIR: each group call becomes a call of one PrimFunc that runs the group's functions in
// order inside one root block. The group's inputs and output are the parameters; every other
// result becomes a buffer the root block allocates.
//
//   @fused_add_relu(%a, %b) { %s = call_tir @add(%a, %b); %r = call_tir @relu(%s); return %r }
// becomes
//   func fused_add_relu(a, b, r):
//     with block("root"):
//       T_add = alloc_buffer(...)
//       for ...: with block("T_add"): T_add[...] = a[...] + b[...]
//       for ...: with block("T_relu"): r[...] = max(T_add[...], 0.0)
#include <fmt/format.h>

#include <cctype>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"
#include "tirtune/ir/functor.h"
#include "tirtune/ir/op.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {
namespace {

// A value name usable as a buffer name (ONNX names may hold '/', ':' or '.').
std::string BufferName(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v_" + out;
  return out;
}

Buffer BufferOf(const std::string& name, const TensorType& type) {
  return Buffer(BufferName(name), type.dtype,
                std::vector<Expr>(type.shape.begin(), type.shape.end()));
}

// Replaces parameter buffers by the merged function's buffers and gives every block a name
// unique in the merged function.
class GroupRewriter : public StmtMutator {
 public:
  GroupRewriter(std::unordered_map<const BufferNode*, Buffer> buffers,
                std::set<std::string>* block_names)
      : buffers_(std::move(buffers)), block_names_(block_names) {}

  using StmtMutator::VisitStmt_;
  Buffer VisitBuffer(const Buffer& buffer) override {
    auto it = buffers_.find(buffer.get());
    return it == buffers_.end() ? buffer : it->second;
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt rewritten = StmtMutator::VisitStmt_(op);
    const auto* block = rewritten.as<BlockNode>();
    std::string name = block->name;
    for (int suffix = 1; block_names_->count(name); ++suffix) {
      name = fmt::format("{}_{}", block->name, suffix);
    }
    block_names_->insert(name);
    if (name == block->name) return rewritten;
    return MakeBlock(name, block->iter_vars, block->reads, block->writes, block->body, block->init,
                     block->alloc_buffers, block->annotations);
  }

 private:
  std::unordered_map<const BufferNode*, Buffer> buffers_;
  std::set<std::string>* block_names_;
};

PrimFunc MergeGroup(const Call& group, const std::string& node) {
  const Graph& body = *group.body;
  std::unordered_map<ValueId, Buffer> buffer_of;
  std::vector<Buffer> params;
  for (ValueId input : body.Inputs()) {
    buffer_of[input] = BufferOf(body.value(input).name, body.value(input).type);
    params.push_back(buffer_of[input]);
  }
  ValueId result = body.outputs().at(0);
  Buffer result_buffer = BufferOf(body.value(result).name, body.value(result).type);

  std::vector<Stmt> nests;
  std::vector<Buffer> allocs;
  std::set<std::string> block_names = {"root"};
  std::unordered_set<const PrimFuncNode*> seen;
  for (const Call& call : body.calls()) {
    if (call.kind != CallKind::kPrimFunc) {
      TT_USER_ERROR("FuseTIR: {} holds %{}, which is not a PrimFunc call (run LegalizeOps first)",
                    node, body.value(call.output).name);
    }
    // A function used twice in one group is copied, so that no variable is defined twice.
    PrimFunc func = call.func;
    if (!seen.insert(func.get()).second) func = ParsePrimFunc(Print(func));
    const auto* realize = func->body.as<BlockRealizeNode>();
    if (!realize || realize->block->name != "root") {
      TT_USER_ERROR("FuseTIR: @{} in {} is not in block form", func->name, node);
    }
    std::unordered_map<const BufferNode*, Buffer> buffers;
    for (size_t j = 0; j < call.args.size(); ++j) {
      buffers[func->params[j].get()] = buffer_of.at(call.args[j]);
    }
    const Buffer& out_param = func->params.back();
    if (call.output == result) {
      buffers[out_param.get()] = result_buffer;
    } else {
      buffer_of[call.output] = out_param;
      allocs.push_back(out_param);
    }
    const BlockNode* root = realize->block.get();
    allocs.insert(allocs.end(), root->alloc_buffers.begin(), root->alloc_buffers.end());
    nests.push_back(GroupRewriter(std::move(buffers), &block_names).VisitStmt(root->body));
  }
  params.push_back(result_buffer);
  Block root = MakeBlock("root", {}, {}, {}, MakeSeq(std::move(nests)), Stmt(), allocs);
  return PrimFunc(group.op, std::move(params), MakeBlockRealize({}, Bool(true), root));
}

}  // namespace

Graph FuseTIR(const Graph& graph) {
  ValidateGraph(graph);
  Graph out = graph;
  for (int i = 0; i < static_cast<int>(out.calls().size()); ++i) {
    Call& call = out.mutable_call(i);
    if (call.kind != CallKind::kGraph) continue;
    // A region of MergeCompositeFunctions holds groups: merge those first.
    bool nested = false;
    for (const Call& inner : call.body->calls()) nested = nested || inner.kind == CallKind::kGraph;
    if (nested) call.body = std::make_shared<const Graph>(FuseTIR(*call.body));
    call.func = MergeGroup(call, "%" + graph.value(call.output).name);
    call.kind = CallKind::kPrimFunc;
    // A composite keeps its group: the library backend reads the operators from it.
    if (!call.attrs.Has("Composite")) call.body.reset();
  }
  return out;
}

}  // namespace tirtune::graph
