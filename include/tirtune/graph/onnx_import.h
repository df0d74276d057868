// ONNX import: reads an ONNX model (opset up to 17, the range of Debian's libonnx 1.12) into the
// graph IR. Activations that convolutions and pools touch are kept channel-last (the te library's
// NHWC), weights are transposed once at import, and the model's outputs keep ONNX's layout.
// Everything computable at import time (initializers, Constant, Shape → Gather → Concat chains,
// ConstantOfShape, ...) is folded to constants, so the graph holds only the float32 computation.
//
// Only this header is public: protobuf and the ONNX headers stay inside src/graph/onnx/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tirtune/graph/graph.h"
#include "tirtune/support/ndarray.h"

namespace tirtune::graph {

/// Options of ImportOnnx.
struct OnnxImportOptions {
  /// Static shapes for graph inputs whose declared shape has symbolic or missing dimensions
  /// (e.g. {"input", {1, 3, 224, 224}}); a dimension that is already static must agree. Default:
  /// none, so every input must be fully static.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// Graph inputs bound to values: each becomes a constant (and shape computations fold through
  /// it) instead of an input of the graph. Default: none.
  std::map<std::string, NDArray> constant_inputs;
  /// Runs onnx::checker::check_model before importing. Default: on.
  bool run_checker = true;
  /// The most bytes the tensors computed at import time (shape computations, constants folded
  /// through nodes) may hold in all, each at most 2^28 elements: a model asking for more is
  /// refused, naming the node, before it can exhaust the memory. Default 4 GiB.
  int64_t max_import_time_bytes = int64_t{4} << 30;
  /// The directory that initializers stored in external data files (models over 2 GiB) name
  /// their files relative to. ImportOnnx: the model file's directory unless set; empty with
  /// ImportOnnxFromBytes: such initializers are refused.
  std::string external_data_dir;
};

/// The graph of the ONNX model in the file at `path`. Its inputs are the model's graph inputs that
/// are not initializers (nor bound in `options`), in order, of float32 (or int64 for indices);
/// its outputs are the model's outputs in ONNX's layout. Throws UserError for a file that cannot
/// be read or is not a valid model, and for an unsupported operator, attribute, element type or a
/// symbolic dimension, naming the node (`node 12 "conv1" (Conv)`) or the value concerned.
Graph ImportOnnx(const std::string& path, const OnnxImportOptions& options = {});

/// The same for a serialized ModelProto held in memory.
Graph ImportOnnxFromBytes(const std::string& bytes, const OnnxImportOptions& options = {});

/// The ONNX operators (domain ai.onnx) the importer converts, sorted.
std::vector<std::string> SupportedOnnxOperators();

}  // namespace tirtune::graph
