// FuseOps: each group of PartitionGraph with more than one call becomes one call of a nested
// graph holding the group's calls.
//
//   %c = call_tir @conv2d(%x, %w)          # out_ewise_fusable
//   %b = call_tir @bias_add(%c, %bias)     # broadcast
//   %r = call_tir @relu(%b)                # elemwise
// becomes
//   %r = @fused_conv2d_bias_add_relu(%x, %w, %bias) {
//     %c = call_tir @conv2d(%x, %w)
//     %b = call_tir @bias_add(%c, %bias)
//     %r = call_tir @relu(%b)
//     return %r
//   }
#include <fmt/format.h>

#include <map>
#include <memory>
#include <set>

#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {
namespace {

// "fused_conv2d_bias_add_relu", cut short for long groups.
std::string GroupName(const Graph& graph, const std::vector<int>& members) {
  std::string name = "fused";
  for (int call : members) {
    std::string next = name + "_" + graph.call(call).op;
    if (next.size() > 64) return name + fmt::format("_and_{}_more", members.size());
    name = next;
  }
  return name;
}

// The nested graph of one group: its inputs are the values the members use from outside, in
// order of first use; `args` receives them.
std::shared_ptr<const Graph> GroupBody(const Graph& graph, const std::vector<int>& members,
                                       std::vector<ValueId>* args) {
  std::set<int> member_set(members.begin(), members.end());
  auto body = std::make_shared<Graph>();
  std::map<ValueId, ValueId> inner;  // outer value -> body value
  for (int index : members) {
    for (ValueId a : graph.call(index).args) {
      const Value& v = graph.value(a);
      bool internal = v.kind == ValueKind::kCall && member_set.count(v.producer);
      if (internal || inner.count(a)) continue;
      inner[a] = body->AddInput(v.name, v.type);
      args->push_back(a);
    }
  }
  ValueId last = -1;
  for (int index : members) {
    Call call = graph.call(index);
    for (ValueId& a : call.args) a = inner.at(a);
    const Value& out = graph.value(call.output);
    last = inner[call.output] = body->AddCall(out.name, call, out.type);
  }
  body->AddOutput(last);
  return body;
}

}  // namespace

Graph FuseOps(const Graph& graph, const FuseConfig& config) {
  std::vector<int> group_of = PartitionGraph(graph, config);
  std::map<int, std::vector<int>> members;  // group id -> member calls in stored order
  for (int i = 0; i < static_cast<int>(group_of.size()); ++i) members[group_of[i]].push_back(i);

  Graph out;
  std::map<ValueId, ValueId> remap;
  for (ValueId id = 0; id < static_cast<ValueId>(graph.values().size()); ++id) {
    const Value& v = graph.value(id);
    if (v.kind == ValueKind::kInput) remap[id] = out.AddInput(v.name, v.type);
    if (v.kind == ValueKind::kConstant) remap[id] = out.AddConstant(v.name, v.data);
  }
  // A group is emitted at its last call: every value it uses from outside is defined by then.
  for (int i = 0; i < static_cast<int>(graph.calls().size()); ++i) {
    const std::vector<int>& group = members.at(group_of[i]);
    if (group.back() != i) continue;
    const Value& result = graph.value(graph.call(i).output);
    if (group.size() == 1) {
      Call call = graph.call(i);
      for (ValueId& a : call.args) a = remap.at(a);
      remap[call.output] = out.AddCall(result.name, call, result.type);
      continue;
    }
    Call fused;
    fused.kind = CallKind::kGraph;
    fused.op = GroupName(graph, group);
    fused.body = GroupBody(graph, group, &fused.args);
    fused.pattern = OpPattern::kElemWise;
    for (int m : group) fused.pattern = std::max(fused.pattern, graph.call(m).pattern);
    for (ValueId& a : fused.args) a = remap.at(a);
    remap[graph.call(i).output] = out.AddCall(result.name, fused, result.type);
  }
  for (ValueId o : graph.outputs()) out.AddOutput(remap.at(o));
  return out;
}

}  // namespace tirtune::graph
