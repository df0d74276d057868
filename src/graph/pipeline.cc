// The model pipeline's passes in their fixed order (passes.h).
#include "tirtune/graph/passes.h"

namespace tirtune::graph {

const std::vector<NamedPass>& PipelinePasses() {
  static const std::vector<NamedPass> passes = {
      {"SimplifyInference", SimplifyInference},
      {"LegalizeOps", LegalizeOps},
      {"AnnotateOpPattern", AnnotateOpPattern},
      {"FoldConstants", FoldConstants},
      {"FuseOps", [](const Graph& g) { return FuseOps(g); }},
      {"FuseTIR", FuseTIR},
      {"EliminateDeadCode", EliminateDeadCode},
  };
  return passes;
}

Graph RunPipeline(const Graph& graph) {
  Graph g = graph;
  for (const NamedPass& pass : PipelinePasses()) g = pass.run(g);
  return g;
}

}  // namespace tirtune::graph
