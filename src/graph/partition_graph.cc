// PartitionGraph: post-dominator grouping of calls by their fusion patterns (the algorithm of
// TVM's GraphPartitioner, described in passes.h and seed 000).
//
// Step 1. An indexed forward graph: one node per call in topological order, edges to the calls
//         that use its value, each edge labelled with the consumer's pattern (a broadcast
//         consumer reading an argument of its own shape counts as elemwise on that edge).
// Step 2. The post-dominator tree, built from the sinks up: a node's immediate post-dominator is
//         the lowest common ancestor of its consumers; a graph output has none.
// Step 3. Three phases over the nodes in order: a node whose group may absorb the path to its
//         post-dominator (CheckPath) is merged with every node on it (CommitFuse), within the
//         depth and argument limits.
#include <algorithm>
#include <functional>
#include <set>

#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph {
namespace {

struct Edge {
  int node;  // the consumer
  OpPattern pattern;
};

struct ForwardNode {
  int call;  // index in Graph::calls()
  OpPattern pattern;
  bool is_output;  // its value is a graph output, so it must end a group
  std::vector<Edge> outputs;
};

// Step 1.
std::vector<ForwardNode> BuildForwardGraph(const Graph& graph) {
  std::vector<int> order = TopologicalOrder(graph);
  std::vector<int> node_of_call(graph.calls().size());
  std::vector<ForwardNode> nodes;
  std::set<ValueId> outputs(graph.outputs().begin(), graph.outputs().end());
  for (int call : order) {
    node_of_call[call] = static_cast<int>(nodes.size());
    nodes.push_back(ForwardNode{
        call, graph.call(call).pattern, outputs.count(graph.call(call).output) > 0, {}});
  }
  for (int consumer = 0; consumer < static_cast<int>(nodes.size()); ++consumer) {
    const Call& call = graph.call(nodes[consumer].call);
    const TensorType& out_type = graph.value(call.output).type;
    for (ValueId a : call.args) {
      const Value& v = graph.value(a);
      if (v.kind != ValueKind::kCall) continue;
      std::vector<Edge>& edges = nodes[node_of_call[v.producer]].outputs;
      if (std::any_of(edges.begin(), edges.end(),
                      [&](const Edge& e) { return e.node == consumer; }))
        continue;
      OpPattern pattern = call.pattern;
      if (pattern == OpPattern::kBroadcast && v.type.shape == out_type.shape) {
        pattern = OpPattern::kElemWise;
      }
      edges.push_back(Edge{consumer, pattern});
    }
  }
  return nodes;
}

struct DomNode {
  int parent = -1;  // the immediate post-dominator, -1 for none
  int depth = 1;
  OpPattern pattern = OpPattern::kOpaque;  // the largest edge pattern on the way to `parent`
};

// Step 2.
std::vector<DomNode> BuildPostDominatorTree(const std::vector<ForwardNode>& nodes) {
  std::vector<DomNode> tree(nodes.size());
  auto lca = [&](int a, int b, OpPattern* pattern) {
    while (a != b) {
      if (a < 0 || b < 0) return -1;
      if (tree[a].depth < tree[b].depth) {
        *pattern = std::max(*pattern, tree[b].pattern);
        b = tree[b].parent;
      } else if (tree[a].depth > tree[b].depth) {
        *pattern = std::max(*pattern, tree[a].pattern);
        a = tree[a].parent;
      } else {
        *pattern = std::max({*pattern, tree[a].pattern, tree[b].pattern});
        a = tree[a].parent;
        b = tree[b].parent;
      }
    }
    return a;
  };
  for (int i = static_cast<int>(nodes.size()) - 1; i >= 0; --i) {
    const ForwardNode& node = nodes[i];
    if (node.is_output || node.outputs.empty()) continue;  // a root
    OpPattern pattern = OpPattern::kElemWise;
    int parent = node.outputs[0].node;
    for (const Edge& e : node.outputs) {
      pattern = std::max(pattern, e.pattern);
      parent = lca(parent, e.node, &pattern);
    }
    tree[i].parent = parent;
    tree[i].pattern = pattern;
    tree[i].depth = parent < 0 ? 1 : tree[parent].depth + 1;
  }
  return tree;
}

// Step 3: union-find groups over the forward graph.
class Partitioner {
 public:
  Partitioner(const Graph& graph, const FuseConfig& config)
      : graph_(graph), config_(config), nodes_(BuildForwardGraph(graph)) {
    tree_ = BuildPostDominatorTree(nodes_);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      groups_.push_back(Group{-1, nodes_[i].pattern, {static_cast<int>(i)}});
    }
  }

  std::vector<int> Run() {
    for (int phase = 0; phase < 3; ++phase) RunPhase(phase);
    // Group id: the largest call index among the members.
    std::vector<int> group_of_call(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const Group& root = groups_[FindRoot(static_cast<int>(i))];
      int last = -1;
      for (int m : root.members) last = std::max(last, nodes_[m].call);
      group_of_call[nodes_[i].call] = last;
    }
    return group_of_call;
  }

 private:
  struct Group {
    int parent;  // -1 for a root
    OpPattern pattern;
    std::vector<int> members;  // valid on roots
  };
  using Condition = std::function<bool(OpPattern, bool is_sink)>;

  int FindRoot(int node) {
    int root = node;
    while (groups_[root].parent >= 0) root = groups_[root].parent;
    while (groups_[node].parent >= 0) {
      int next = groups_[node].parent;
      groups_[node].parent = root;
      node = next;
    }
    return root;
  }
  OpPattern PatternOf(int node) { return groups_[FindRoot(node)].pattern; }

  void RunPhase(int phase) {
    for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
      int sink = tree_[i].parent;
      if (sink < 0) continue;
      OpPattern pattern = PatternOf(i);
      if (pattern == OpPattern::kOpaque || FindRoot(i) == FindRoot(sink)) continue;
      OpPattern path = tree_[i].pattern;
      if (pattern == OpPattern::kOutEWiseFusable) {
        // Phase 0: conv2d/dense take an elementwise epilogue through broadcast-or-simpler ops.
        if (phase != 0 || path != OpPattern::kElemWise) continue;
        TryFuse(i, sink, [](OpPattern p, bool) { return p <= OpPattern::kBroadcast; });
      } else if (pattern <= OpPattern::kBroadcast) {
        // Every phase: into an injective or reduction post-dominator, or into a group that is
        // already anchored by an out_ewise_fusable op.
        if (path > OpPattern::kInjective && path != OpPattern::kCommReduce) continue;
        TryFuse(i, sink, [](OpPattern p, bool is_sink) {
          if (!is_sink) return p <= OpPattern::kInjective;
          return p <= OpPattern::kCommReduce || p == OpPattern::kOutEWiseFusable;
        });
      } else if (pattern == OpPattern::kInjective) {
        // Phase 1: injective chains; deferred so that phase 0 finishes the conv2d groups first.
        if (phase == 1) {
          TryFuse(i, sink, [](OpPattern p, bool) { return p <= OpPattern::kInjective; });
        } else if (phase == 2 && config_.fuse_injective_into_reduction) {
          TryFuse(i, sink, [](OpPattern p, bool is_sink) {
            return is_sink ? p == OpPattern::kCommReduce : p <= OpPattern::kInjective;
          });
        }
      }
      // A comm_reduce group never starts a fusion: reductions are only sinks.
    }
  }

  // True when every node on a path from `src` to `sink` (excluding src) satisfies `cond`.
  bool CheckPath(int src, int sink, const Condition& cond) {
    std::set<int> visited;
    std::function<bool(int)> visit = [&](int node) {
      if (!visited.insert(node).second) return true;
      if (!cond(PatternOf(node), node == sink)) return false;
      if (node == sink) return true;
      for (const Edge& e : nodes_[node].outputs) {
        if (!visit(e.node)) return false;
      }
      return true;
    };
    for (const Edge& e : nodes_[src].outputs) {
      if (!visit(e.node)) return false;
    }
    return true;
  }

  // The roots of the groups of every node on the paths from src to sink, both included.
  std::set<int> GroupsOnPath(int src, int sink) {
    std::set<int> visited, roots;
    std::function<void(int)> visit = [&](int node) {
      if (!visited.insert(node).second) return;
      roots.insert(FindRoot(node));
      if (node == sink) return;
      for (const Edge& e : nodes_[node].outputs) visit(e.node);
    };
    visit(src);
    return roots;
  }

  bool WithinLimits(const std::set<int>& roots) {
    std::set<int> members;
    for (int r : roots) members.insert(groups_[r].members.begin(), groups_[r].members.end());
    if (static_cast<int>(members.size()) > config_.max_depth) return false;
    std::set<int> member_calls;
    for (int m : members) member_calls.insert(nodes_[m].call);
    std::set<ValueId> inputs;
    for (int call : member_calls) {
      for (ValueId a : graph_.call(call).args) {
        const Value& v = graph_.value(a);
        if (v.kind != ValueKind::kCall || !member_calls.count(v.producer)) inputs.insert(a);
      }
    }
    return static_cast<int>(inputs.size()) + 1 <= config_.max_args;
  }

  void TryFuse(int src, int sink, const Condition& cond) {
    if (!CheckPath(src, sink, cond)) return;
    std::set<int> roots = GroupsOnPath(src, sink);
    if (!WithinLimits(roots)) return;
    int target = FindRoot(sink);
    for (int r : roots) {
      if (r == target) continue;
      Group& child = groups_[r];
      Group& parent = groups_[target];
      child.parent = target;
      parent.pattern = std::max(parent.pattern, child.pattern);
      parent.members.insert(parent.members.end(), child.members.begin(), child.members.end());
      child.members.clear();
    }
  }

  const Graph& graph_;
  FuseConfig config_;
  std::vector<ForwardNode> nodes_;
  std::vector<DomNode> tree_;
  std::vector<Group> groups_;
};

}  // namespace

std::vector<int> PartitionGraph(const Graph& graph, const FuseConfig& config) {
  ValidateGraph(graph);
  return Partitioner(graph, config).Run();
}

}  // namespace tirtune::graph
