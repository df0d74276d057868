// onnx_import_check MODEL.onnx [DATA_DIR] [--passes] [--print]: imports a model, prints the
// graph's operator census (or with --print the graph) and the time taken, and with DATA_DIR
// (input_N.pb / output_N.pb, as written by scripts/gen_onnx_models.py) runs the graph on the
// interpreter and compares its outputs with the expected ones. With --passes, also runs the graph
// pipeline down to the tasks and prints them. A manual check for models too large for the unit
// tests.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "onnx_testing.h"
#include "tirtune/graph/executor.h"
#include "tirtune/graph/extract_tasks.h"
#include "tirtune/graph/onnx_import.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/printer.h"
#include "tirtune/support/error.h"

namespace {

using namespace tirtune;
using namespace tirtune::graph;
namespace fs = std::filesystem;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

NDArray ReadTensor(const fs::path& path) {
  onnx::TensorProto proto;
  std::ifstream in(path, std::ios::binary);
  if (!in || !proto.ParseFromIstream(&in)) return NDArray();
  return tirtune::graph::testing::ArrayFromProto(proto);
}

int Run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: onnx_import_check MODEL.onnx [DATA_DIR] [--passes] [--print]\n");
    return 2;
  }
  std::string data_dir;
  bool passes = false, print = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--passes") {
      passes = true;
    } else if (arg == "--print") {
      print = true;
    } else {
      data_dir = arg;
    }
  }
  auto start = std::chrono::steady_clock::now();
  Graph graph = ImportOnnx(argv[1]);
  std::printf("import: %.2f s, %zu values, %zu calls\n", Seconds(start), graph.values().size(),
              graph.calls().size());
  std::map<std::string, int> census;
  for (const Call& call : graph.calls()) ++census[call.op];
  for (const auto& [op, count] : census) std::printf("  %-18s %d\n", op.c_str(), count);
  if (print) std::printf("%s\n", PrintGraph(graph).c_str());
  if (!data_dir.empty()) {
    std::vector<NDArray> inputs;
    for (int i = 0;; ++i) {
      fs::path p = fs::path(data_dir) / fmt::format("input_{}.pb", i);
      if (!fs::exists(p)) break;
      inputs.push_back(ReadTensor(p));
    }
    start = std::chrono::steady_clock::now();
    std::vector<NDArray> outputs = RunGraph(graph, inputs);
    std::printf("RunGraph (interpreter): %.2f s\n", Seconds(start));
    int bad = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      NDArray expected = ReadTensor(fs::path(data_dir) / fmt::format("output_{}.pb", i));
      if (expected.shape() != outputs[i].shape()) {
        std::printf("output %zu: shape differs\n", i);
        ++bad;
        continue;
      }
      double max_diff = 0, max_ref = 0;
      for (int64_t k = 0; k < expected.size(); ++k) {
        max_diff = std::max(max_diff, std::fabs(expected.GetDouble(k) - outputs[i].GetDouble(k)));
        max_ref = std::max(max_ref, std::fabs(expected.GetDouble(k)));
      }
      bool ok = max_diff <= 1e-3 * (1.0 + max_ref);
      bad += !ok;
      std::printf("output %zu: max |diff| %.3g (max |expected| %.3g) %s\n", i, max_diff, max_ref,
                  ok ? "OK" : "MISMATCH");
    }
    if (bad) return 1;
  }
  if (passes) {
    start = std::chrono::steady_clock::now();
    Graph g = SimplifyInference(graph);
    g = FuseTIR(FuseOps(FoldConstants(AnnotateOpPattern(LegalizeOps(g)))));
    g = EliminateDeadCode(g);
    std::vector<Task> tasks = ExtractTasks(g);
    std::printf("passes: %.2f s, %zu calls, %zu tasks\n", Seconds(start), g.calls().size(),
                tasks.size());
    for (const Task& t : tasks) std::printf("  %-48s x%d\n", t.name.c_str(), t.weight);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const tirtune::UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
