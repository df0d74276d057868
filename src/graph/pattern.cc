// Patterns over the graph IR and their matcher (pattern.h).
//
// The matcher walks the pattern tree from the root value towards the inputs in continuation-
// passing style: matching a node calls `then` with the state extended by that node, so an
// alternative that matched locally but leaves the rest of the pattern unmatchable is undone and
// the next alternative tried (full backtracking; patterns are small).
#include "tirtune/graph/pattern.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "tirtune/support/error.h"

namespace tirtune::graph {

Pattern MakePattern(PatternNode node) {
  Pattern p;
  p.node_ = std::make_shared<const PatternNode>(std::move(node));
  return p;
}

namespace {

Pattern Refined(const Pattern& p, const std::function<void(PatternNode*)>& change) {
  PatternNode node = p.node();
  change(&node);
  return MakePattern(std::move(node));
}

}  // namespace

Pattern Pattern::HasAttr(const std::string& name, AttrValue value) const {
  return Refined(*this, [&](PatternNode* n) { n->attrs[name] = value; });
}
Pattern Pattern::HasDtype(DataType dtype) const {
  return Refined(*this, [&](PatternNode* n) { n->dtype = dtype; });
}
Pattern Pattern::HasRank(int rank) const {
  return Refined(*this, [&](PatternNode* n) { n->rank = rank; });
}
Pattern Pattern::HasShape(std::vector<int64_t> shape) const {
  return Refined(*this, [&](PatternNode* n) { n->shape = shape; });
}
Pattern Pattern::Where(std::function<bool(const Graph&, ValueId)> check) const {
  return Refined(*this, [&](PatternNode* n) { n->checks.push_back(check); });
}
Pattern Pattern::Named(const std::string& name) const {
  return Refined(*this, [&](PatternNode* n) { n->name = name; });
}

std::string Pattern::str() const {
  const PatternNode& n = node();
  std::string s;
  switch (n.kind) {
    case PatternKind::kWildcard:
      s = "*";
      break;
    case PatternKind::kConstant:
      s = "const";
      break;
    case PatternKind::kInput:
      s = "input";
      break;
    case PatternKind::kOp: {
      std::vector<std::string> args;
      for (const Pattern& a : n.args) args.push_back(a.str());
      s = fmt::format("{}({})", n.op, fmt::join(args, ", "));
      break;
    }
    case PatternKind::kAlternatives: {
      std::vector<std::string> choices;
      for (const Pattern& a : n.args) choices.push_back(a.str());
      s = fmt::format("({})", fmt::join(choices, " | "));
      break;
    }
  }
  if (!n.name.empty()) s += " as " + n.name;
  return s;
}

namespace {

Pattern Node(PatternKind kind, std::string op = "", std::vector<Pattern> args = {}) {
  PatternNode node;
  node.kind = kind;
  node.op = std::move(op);
  node.args = std::move(args);
  return MakePattern(std::move(node));
}

}  // namespace

Pattern Wildcard() { return Node(PatternKind::kWildcard); }
Pattern IsConstant() { return Node(PatternKind::kConstant); }
Pattern IsInput() { return Node(PatternKind::kInput); }

Pattern IsOp(const std::string& op, std::vector<Pattern> args) {
  if (op.empty()) TT_USER_ERROR("IsOp needs an operator name (or \"*\" for any)");
  return Node(PatternKind::kOp, op, std::move(args));
}

Pattern operator|(const Pattern& a, const Pattern& b) {
  return Node(PatternKind::kAlternatives, "", {a, b});
}

Pattern Optional(const std::string& op, const Pattern& input, std::vector<Pattern> extra_args) {
  std::vector<Pattern> args = {input};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  return IsOp(op, std::move(args)) | input;
}

namespace {

struct MatchState {
  std::set<int> calls;
  std::vector<ValueId> leaves;
  std::map<std::string, ValueId> named;
};

using Continuation = std::function<bool(MatchState&)>;

class Matcher {
 public:
  explicit Matcher(const Graph& graph) : graph_(graph) {}

  bool Match(const Pattern& pattern, ValueId v, MatchState& state, const Continuation& then) {
    const PatternNode& n = pattern.node();
    if (n.kind == PatternKind::kAlternatives) {
      for (const Pattern& choice : n.args) {
        MatchState trial = state;
        // The refinements and the name of the alternatives node apply to whichever choice.
        if (MatchRefinements(n, v) &&
            Match(choice, v, trial, [&](MatchState& s) { return Bind(n, v, s, then); })) {
          state = std::move(trial);
          return true;
        }
      }
      return false;
    }
    if (!MatchRefinements(n, v)) return false;
    const Value& value = graph_.value(v);
    switch (n.kind) {
      case PatternKind::kWildcard:
      case PatternKind::kConstant:
      case PatternKind::kInput: {
        if (n.kind == PatternKind::kConstant && value.kind != ValueKind::kConstant) return false;
        if (n.kind == PatternKind::kInput && value.kind != ValueKind::kInput) return false;
        MatchState next = state;
        if (std::find(next.leaves.begin(), next.leaves.end(), v) == next.leaves.end()) {
          next.leaves.push_back(v);
        }
        if (!Bind(n, v, next, then)) return false;
        state = std::move(next);
        return true;
      }
      case PatternKind::kOp: {
        if (value.kind != ValueKind::kCall) return false;
        const Call& call = graph_.call(value.producer);
        if (call.kind != CallKind::kOp || (n.op != "*" && call.op != n.op)) return false;
        if (call.args.size() != n.args.size()) return false;
        for (const auto& [name, expected] : n.attrs) {
          auto it = call.attrs.values().find(name);
          if (it == call.attrs.values().end() || it->second != expected) return false;
        }
        MatchState next = state;
        next.calls.insert(value.producer);
        if (!MatchArgs(n, call, 0, next, [&](MatchState& s) { return Bind(n, v, s, then); })) {
          return false;
        }
        state = std::move(next);
        return true;
      }
      case PatternKind::kAlternatives:
        break;
    }
    TT_UNREACHABLE("pattern kind");
  }

 private:
  bool MatchArgs(const PatternNode& n, const Call& call, size_t i, MatchState& state,
                 const Continuation& then) {
    if (i == n.args.size()) return then(state);
    return Match(n.args[i], call.args[i], state,
                 [&](MatchState& s) { return MatchArgs(n, call, i + 1, s, then); });
  }

  bool MatchRefinements(const PatternNode& n, ValueId v) const {
    const TensorType& type = graph_.value(v).type;
    if (n.dtype && type.dtype != *n.dtype) return false;
    if (n.rank && type.ndim() != *n.rank) return false;
    if (n.shape && type.shape != *n.shape) return false;
    for (const auto& check : n.checks) {
      if (!check(graph_, v)) return false;
    }
    return true;
  }

  // Records a Named capture (the same name must name the same value) and goes on. `state` is
  // always a copy its caller drops on failure.
  static bool Bind(const PatternNode& n, ValueId v, MatchState& state, const Continuation& then) {
    if (!n.name.empty()) {
      auto [it, inserted] = state.named.emplace(n.name, v);
      if (!inserted && it->second != v) return false;
    }
    return then(state);
  }

  const Graph& graph_;
};

}  // namespace

std::optional<PatternMatch> MatchPattern(const Graph& graph, const Pattern& pattern, ValueId root) {
  if (root < 0 || root >= static_cast<ValueId>(graph.values().size())) {
    TT_USER_ERROR("MatchPattern: no value {} in the graph", root);
  }
  MatchState state;
  MatchState result;
  bool matched = Matcher(graph).Match(pattern, root, state, [&](MatchState& s) {
    result = s;
    return true;
  });
  if (!matched) return std::nullopt;
  PatternMatch m;
  m.root = root;
  m.calls.assign(result.calls.begin(), result.calls.end());
  m.leaves = std::move(result.leaves);
  m.named = std::move(result.named);
  return m;
}

std::string FusionPattern::Backend() const { return name.substr(0, name.find('.')); }

}  // namespace tirtune::graph
