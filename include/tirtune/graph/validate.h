// The graph validator: checks references, names, acyclicity, attribute schemas and types, and
// reports the first problem with the node it concerns.
#pragma once

#include <string>

#include "tirtune/graph/graph.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {

/// A malformed graph; the message names the node (`%name`) and what is wrong with it.
class GraphError : public UserError {
 public:
  explicit GraphError(const std::string& what) : UserError(what) {}
};

/// Throws GraphError unless:
///  1. every argument and output refers to a value of the graph, and call results are the
///     values that name them;
///  2. the calls form no cycle, and each argument is defined before the call that uses it;
///  3. an operator call names a registered operator, with the right number of arguments, the
///     attributes of its schema, and the output type its inference gives;
///  4. a PrimFunc call passes one argument per parameter (then the output), of the parameter's
///     shape and dtype;
///  5. a group's body is itself valid, takes arguments of its inputs' types and returns one value
///     of the call's type;
///  6. a constant's data has its value's shape and dtype; the graph has at least one output.
void ValidateGraph(const Graph& graph);

/// The indices of the calls in an order where every call comes after the calls producing its
/// arguments (the stored order when it already is one). Throws GraphError naming the calls on a
/// cycle.
std::vector<int> TopologicalOrder(const Graph& graph);

}  // namespace tirtune::graph
