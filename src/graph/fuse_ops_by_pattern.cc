// FuseOpsByPattern and MergeCompositeFunctions (pattern.h).
//
//   %c = conv2d(%x, %w)                 FusionPattern "dnnl.conv2d_bias_relu"
//   %b = bias_add(%c, %bias)            matches at %r
//   %r = relu(%b)
// becomes
//   %r = @composite_dnnl_conv2d_bias_add_relu(%x, %w, %bias) {Codegen="dnnl",
//                                           Composite="dnnl.conv2d_bias_relu"} {
//     %c = conv2d(%x, %w)
//     %b = bias_add(%c, %bias)
//     %r = relu(%b)
//     return %r
//   }
#include <fmt/format.h>

#include <map>
#include <set>

#include "group_calls.h"
#include "tirtune/graph/pattern.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {
namespace {

// For every value, the calls that use it.
std::vector<std::vector<int>> UsersOf(const Graph& graph) {
  std::vector<std::vector<int>> users(graph.values().size());
  for (int i = 0; i < static_cast<int>(graph.calls().size()); ++i) {
    for (ValueId a : graph.call(i).args) users[a].push_back(i);
  }
  return users;
}

// Whether every call of `members` but `last` has its value used only by members, and none is a
// graph output: then the members can become one call with `last`'s result.
bool OnlyLastEscapes(const Graph& graph, const std::vector<std::vector<int>>& users,
                     const std::set<int>& members, int last) {
  std::set<ValueId> outputs(graph.outputs().begin(), graph.outputs().end());
  for (int m : members) {
    if (m == last) continue;
    ValueId v = graph.call(m).output;
    if (outputs.count(v)) return false;
    for (int u : users[v]) {
      if (!members.count(u)) return false;
    }
  }
  return true;
}

std::string CompositeName(const Graph& graph, const std::string& prefix,
                          const std::vector<int>& members) {
  std::string name = prefix;
  for (int call : members) {
    std::string next = name + "_" + graph.call(call).op;
    if (next.size() > 64) return name + fmt::format("_and_{}_more", members.size());
    name = next;
  }
  return name;
}

const std::string* CodegenOf(const Call& call) {
  if (call.kind != CallKind::kGraph) return nullptr;
  auto it = call.attrs.values().find(kCodegenAttr);
  if (it == call.attrs.values().end()) return nullptr;
  return std::get_if<std::string>(&it->second);
}

}  // namespace

std::shared_ptr<const Graph> MatchedSubgraph(const Graph& graph, const PatternMatch& match,
                                             std::vector<ValueId>* args) {
  return detail::GroupBody(graph, match.calls, args);
}

PatternFusionResult FuseOpsByPattern(const Graph& graph,
                                     const std::vector<FusionPattern>& patterns) {
  ValidateGraph(graph);
  std::set<std::string> names;
  for (const FusionPattern& p : patterns) {
    if (p.name.empty() || p.name.find('.') == 0 || p.name.find('.') == std::string::npos) {
      TT_USER_ERROR("fusion pattern '{}' ({}): its name must be BACKEND.KIND, e.g. dnnl.conv2d",
                    p.name, p.pattern.str());
    }
    if (!names.insert(p.name).second) TT_USER_ERROR("two fusion patterns are named '{}'", p.name);
  }
  const int n = static_cast<int>(graph.calls().size());
  const std::vector<std::vector<int>> users = UsersOf(graph);
  std::vector<int> group_of(n);
  std::vector<const FusionPattern*> composite_of(n, nullptr);
  for (int i = 0; i < n; ++i) group_of[i] = i;

  PatternFusionResult result;
  for (const FusionPattern& p : patterns) {
    int& count = result.matches[p.name];
    for (int root = n - 1; root >= 0; --root) {
      if (graph.call(root).kind != CallKind::kOp || composite_of[root] != nullptr) continue;
      std::optional<PatternMatch> m = MatchPattern(graph, p.pattern, graph.call(root).output);
      if (!m || m->calls.empty() || m->calls.back() != root) continue;
      std::set<int> members(m->calls.begin(), m->calls.end());
      bool taken = false;
      for (int c : members) taken = taken || composite_of[c] != nullptr;
      if (taken || !OnlyLastEscapes(graph, users, members, root)) continue;
      if (p.check && !p.check(graph, *m)) continue;
      for (int c : members) {
        composite_of[c] = &p;
        group_of[c] = root;
      }
      ++count;
    }
  }
  result.graph = detail::GroupCalls(graph, group_of, [&](const std::vector<int>& group) {
    std::optional<Call> composite;
    const FusionPattern* p = composite_of[group.back()];
    if (p == nullptr) return composite;
    composite.emplace();
    composite->op = CompositeName(graph, "composite_" + p->Backend(), group);
    composite->attrs.Set(kCompositeAttr, p->name);
    composite->attrs.Set(kCodegenAttr, p->Backend());
    composite->pattern = OpPattern::kOpaque;
    return composite;
  });
  ValidateGraph(result.graph);
  return result;
}

Graph MergeCompositeFunctions(const Graph& graph) {
  ValidateGraph(graph);
  const int n = static_cast<int>(graph.calls().size());
  const std::vector<std::vector<int>> users = UsersOf(graph);
  // Regions by their members; region_of[i] is the region's id (its first member), -1 for a call
  // that is not a composite.
  std::vector<int> region_of(n, -1);
  std::map<int, std::set<int>> regions;
  for (int i = 0; i < n; ++i) {
    if (CodegenOf(graph.call(i)) != nullptr) regions[region_of[i] = i] = {i};
  }
  // Producer-consumer edges between composites of one backend, in order: merge when the union
  // still has one result (every member but the last used only inside it, none a graph output),
  // which also means no path leaves the union and comes back: no cycle.
  for (int j = 0; j < n; ++j) {
    const std::string* backend = CodegenOf(graph.call(j));
    if (backend == nullptr) continue;
    for (ValueId a : graph.call(j).args) {
      const Value& v = graph.value(a);
      if (v.kind != ValueKind::kCall) continue;
      int i = v.producer;
      const std::string* other = CodegenOf(graph.call(i));
      if (other == nullptr || *other != *backend || region_of[i] == region_of[j]) continue;
      std::set<int> merged = regions.at(region_of[i]);
      merged.insert(regions.at(region_of[j]).begin(), regions.at(region_of[j]).end());
      if (!OnlyLastEscapes(graph, users, merged, *merged.rbegin())) continue;
      int keep = region_of[i], drop = region_of[j];
      for (int m : regions.at(drop)) region_of[m] = keep;
      regions.erase(drop);
      regions[keep] = std::move(merged);
    }
  }
  std::vector<int> group_of(n);
  for (int i = 0; i < n; ++i) group_of[i] = region_of[i] >= 0 ? region_of[i] + n : i;
  int made = 0;
  Graph out = detail::GroupCalls(graph, group_of, [&](const std::vector<int>& group) {
    std::optional<Call> region;
    if (group.size() < 2) return region;
    const std::string& backend = *CodegenOf(graph.call(group.front()));
    region.emplace();
    region->op = fmt::format("region_{}_{}", backend, made++);
    region->attrs.Set(kCodegenAttr, backend);
    region->pattern = OpPattern::kOpaque;
    return region;
  });
  ValidateGraph(out);
  return out;
}

}  // namespace tirtune::graph
