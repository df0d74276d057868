// libFuzzer target for ONNX import (built by scripts/fuzz.sh onnx, and replayed over its
// committed corpus by the fuzz_replay tests): the input is read as a serialized ModelProto, as
// `tirtune compile --model` and `tune --model` read a file, with ONNX's checker on and then off
// (the checker refuses much that the importer must then refuse by itself). A model may only be
// refused with a UserError naming what is wrong; an imported graph must pass the graph
// validator.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tirtune/graph/onnx_import.h"
#include "tirtune/graph/validate.h"
#include "tirtune/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tirtune;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (bool checker : {true, false}) {
    graph::OnnxImportOptions options;
    options.run_checker = checker;
    graph::Graph g;
    try {
      g = graph::ImportOnnxFromBytes(bytes, options);
    } catch (const UserError&) {
      continue;  // refused with a message
    }
    graph::ValidateGraph(g);  // a GraphError here is the importer's bug: a finding
  }
  return 0;
}
