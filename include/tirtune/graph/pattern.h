// Patterns over the graph IR and the passes that use them: FuseOpsByPattern groups each matched
// subgraph into a composite call annotated with the backend that will run it (a library), and
// MergeCompositeFunctions merges neighbouring composites of one backend into one region.
//
//   // conv2d, then bias_add, then relu or nothing: the weight must be a constant
//   Pattern conv = IsOp("conv2d", {Wildcard(), IsConstant()}).Named("conv");
//   Pattern bias = IsOp("bias_add", {conv, IsConstant()});
//   Pattern root = Optional("relu", bias);
//   std::optional<PatternMatch> m = MatchPattern(graph, root, value);
//
// Patterns match operator calls (CallKind::kOp), so they run on the graph as imported, before
// LegalizeOps. A pattern is a tree; the same value may be reached along two branches.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/graph/graph.h"

namespace tirtune::graph {

struct PatternNode;

/// A pattern of values. Build with Wildcard, IsConstant, IsInput, IsOp, Optional and `|`;
/// refine with the Has* and Where methods (each returns a new pattern).
class Pattern {
 public:
  /// The attribute `name` of the matched operator call equals `value`.
  Pattern HasAttr(const std::string& name, AttrValue value) const;
  /// The matched value's element type.
  Pattern HasDtype(DataType dtype) const;
  /// The matched value's rank.
  Pattern HasRank(int rank) const;
  /// The matched value's shape.
  Pattern HasShape(std::vector<int64_t> shape) const;
  /// Any other condition on the matched value.
  Pattern Where(std::function<bool(const Graph&, ValueId)> check) const;
  /// Captures the matched value as `name` in PatternMatch::named (a name matched twice must be
  /// the same value).
  Pattern Named(const std::string& name) const;

  /// "conv2d(*, const)", for messages.
  std::string str() const;
  const PatternNode& node() const { return *node_; }

 private:
  friend Pattern MakePattern(PatternNode node);
  std::shared_ptr<const PatternNode> node_;
};

/// What a pattern node matches before its refinements.
enum class PatternKind : uint8_t { kWildcard, kConstant, kInput, kOp, kAlternatives };

struct PatternNode {
  PatternKind kind = PatternKind::kWildcard;
  std::string op;             // kOp: the operator's name, or "*" for any operator
  std::vector<Pattern> args;  // kOp: one per argument; kAlternatives: the choices, in order
  std::map<std::string, AttrValue> attrs;
  std::optional<DataType> dtype;
  std::optional<int> rank;
  std::optional<std::vector<int64_t>> shape;
  std::vector<std::function<bool(const Graph&, ValueId)>> checks;
  std::string name;  // Named
};

/// Any value: an input, a constant or a call's result (which is not part of the match).
Pattern Wildcard();
/// A constant (weights).
Pattern IsConstant();
/// A graph input.
Pattern IsInput();
/// A call of operator `op` ("*": any operator) whose arguments match `args` one by one; an op
/// with another number of arguments does not match.
Pattern IsOp(const std::string& op, std::vector<Pattern> args);
/// `a`, else `b` (the first that leads to a whole match wins).
Pattern operator|(const Pattern& a, const Pattern& b);
/// `op(input, extra_args...)` or `input` alone: an optional operator after `input`.
Pattern Optional(const std::string& op, const Pattern& input, std::vector<Pattern> extra_args = {});

/// One match of a pattern rooted at a value.
struct PatternMatch {
  ValueId root = -1;
  /// The operator calls the pattern's op nodes matched, by index in Graph::calls(), ascending.
  std::vector<int> calls;
  /// Values matched by Wildcard/IsConstant/IsInput leaves, in the order the pattern meets them
  /// (each once): the inputs of the matched subgraph.
  std::vector<ValueId> leaves;
  /// The Named captures.
  std::map<std::string, ValueId> named;
};

/// Matches `pattern` against the value `root` of `graph`, trying alternatives in order and
/// backtracking until the whole pattern matches; nullopt when it cannot.
std::optional<PatternMatch> MatchPattern(const Graph& graph, const Pattern& pattern, ValueId root);

/// The nested graph a match becomes in FuseOpsByPattern (its calls, inputs for the values they
/// use from outside, in order of first use, appended to `args`): for checks that read the
/// composite as a backend will.
std::shared_ptr<const Graph> MatchedSubgraph(const Graph& graph, const PatternMatch& match,
                                             std::vector<ValueId>* args);

/// A pattern for FuseOpsByPattern: matches become composite calls named after it.
struct FusionPattern {
  /// The composite's name, "dnnl.conv2d_bias_relu": the backend, a dot, the kind of call.
  std::string name;
  Pattern pattern;
  /// Refuses a match (for instance a shape the library does not take); nullptr: every match.
  std::function<bool(const Graph&, const PatternMatch&)> check = nullptr;
  /// The backend, the part of `name` before the first dot.
  std::string Backend() const;
};

/// The attributes of the calls FuseOpsByPattern and MergeCompositeFunctions make.
inline constexpr const char* kCompositeAttr = "Composite";  // the FusionPattern's name
inline constexpr const char* kCodegenAttr = "Codegen";      // the backend
// The backend's algorithm for the composite (LibraryBackend::Algorithms), absent for its default.
inline constexpr const char* kAlgorithmAttr = "Algorithm";

/// Groups every match of `patterns` into a composite call (CallKind::kGraph, pattern opaque,
/// attributes Composite = the pattern's name and Codegen = its backend; op
/// "composite_<backend>_<op>_<op>..."), earlier patterns first (priority), each pattern's roots
/// tried from the graph's last call to its first. A match is kept when its check accepts it, none
/// of its calls is in a composite already, and no value it computes but the root is used outside
/// it or is a graph output (a composite has one result). The other calls are left as they are
/// for FuseOps. A pattern that matches nothing is not an error: the result lists what matched.
struct PatternFusionResult {
  Graph graph;
  /// Composites made per pattern name (0 for a pattern that matched nothing).
  std::map<std::string, int> matches;
};
PatternFusionResult FuseOpsByPattern(const Graph& graph, const std::vector<FusionPattern>& patterns);

/// Merges composite calls of one backend that feed each other into one call per region
/// (CallKind::kGraph, attribute Codegen, op "region_<backend>_<n>"), whose body calls the
/// composites. Two composites are merged only when no path between them leaves the region: a
/// merge never creates a cycle.
Graph MergeCompositeFunctions(const Graph& graph);

}  // namespace tirtune::graph
