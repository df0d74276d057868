// Replacing groups of calls by calls of nested graphs (group_calls.h).
#include "group_calls.h"

#include <map>
#include <set>

#include "tirtune/support/error.h"

namespace tirtune::graph::detail {

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

Graph GroupCalls(const Graph& graph, const std::vector<int>& group_of,
                 const std::function<std::optional<Call>(const std::vector<int>&)>& make) {
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
    std::optional<Call> grouped = make(group);
    if (!grouped) {
      TT_ICHECK(group.size() == 1, "a group of {} calls left ungrouped", group.size());
      Call call = graph.call(i);
      for (ValueId& a : call.args) a = remap.at(a);
      remap[call.output] = out.AddCall(result.name, call, result.type);
      continue;
    }
    grouped->kind = CallKind::kGraph;
    grouped->args.clear();
    grouped->body = GroupBody(graph, group, &grouped->args);
    for (ValueId& a : grouped->args) a = remap.at(a);
    remap[graph.call(i).output] = out.AddCall(result.name, *grouped, result.type);
  }
  for (ValueId o : graph.outputs()) out.AddOutput(remap.at(o));
  return out;
}

}  // namespace tirtune::graph::detail
