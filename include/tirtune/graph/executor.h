// The reference executor: runs a graph on the interpreter, call by call. It is the numerical
// oracle of the graph passes, and what FoldConstants evaluates with.
#pragma once

#include <vector>

#include "tirtune/graph/graph.h"
#include "tirtune/support/ndarray.h"

namespace tirtune::graph {

/// The graph's outputs for `inputs` (one array per graph input, in order, of the input's type).
/// Operator calls are legalized on the fly, groups run their bodies. Throws GraphError for an
/// invalid graph and UserError for inputs of the wrong number or type.
std::vector<NDArray> RunGraph(const Graph& graph, const std::vector<NDArray>& inputs);

/// Evaluates one call on the arrays of its arguments.
NDArray RunCall(const Graph& graph, const Call& call, const std::vector<NDArray>& args);

/// Random inputs for the graph (input i filled with seed + i, as Interpret's MakeRandomArgs).
std::vector<NDArray> MakeRandomInputs(const Graph& graph, uint64_t seed);

}  // namespace tirtune::graph
