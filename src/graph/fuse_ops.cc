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
#include "group_calls.h"

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

}  // namespace

Graph FuseOps(const Graph& graph, const FuseConfig& config) {
  return detail::GroupCalls(
      graph, PartitionGraph(graph, config),
      [&](const std::vector<int>& group) -> std::optional<Call> {
        if (group.size() == 1) return std::nullopt;
        Call fused;
        fused.kind = CallKind::kGraph;
        fused.op = GroupName(graph, group);
        fused.pattern = OpPattern::kElemWise;
        for (int m : group) fused.pattern = std::max(fused.pattern, graph.call(m).pattern);
        return fused;
      });
}

}  // namespace tirtune::graph
