// The text form of a graph, for tests, messages and `--dump` style debugging. Not parsed back.
//
//   graph(%x: float32[1, 8, 8, 3], %w: const float32[3, 3, 3, 4]) {
//     %conv = conv2d(%x, %w) {pad=1, stride=1} : float32[1, 8, 8, 4]
//     %y = call_tir @relu(%conv) : float32[1, 8, 8, 4]  # elemwise
//     %z = @fused_add_relu(%y, %x) : float32[1, 8, 8, 4] {    # a group, its body indented
//       ...
//     }
//     return %y
//   }
#pragma once

#include <string>

#include "tirtune/graph/graph.h"

namespace tirtune::graph {

std::string PrintGraph(const Graph& graph);

}  // namespace tirtune::graph
