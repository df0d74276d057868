// The compiled-model artifact: a directory holding
//   manifest.json   {"format": "tirtune-model", "version": 3, "target": T, "source": ...,
//                    "functions": [{"name", "object", "ir", "tuned", "best_seconds"?, "weight",
//                                   "workload_key", "fallback_reason"?}
//                                  or, for a function a library runs (version 3), "library": the
//                                  composite's description (offload/library.h CompositeToJson)
//                                  in place of "object"], "graph": "graph.json",
//                    "weights": "weights.bin",
//                    "files": {PATH: SHA-256 hex} for every other file (version 2; version 1
//                    artifacts, without it, still load)}
//   graph.json      {"values": [{"name", "kind": "input"|"constant"|"call", "dtype", "shape",
//                                "offset"?, "nbytes"?,  // constants: where in weights.bin
//                                "packed"?}],  // version 4: a constant stored in the layout its
//                                              // kernel reads (ir/packed_layout.h), "shape" packed
//                    "calls": [{"function": index into functions, "args": [value ids],
//                               "output": value id, "op": a readable hint}],  // topological order
//                    "inputs": [value ids], "outputs": [value ids]}
//   weights.bin     the constants, each at a 64-byte-aligned offset, raw little-endian elements
//   kernels/NAME.o  one relocatable object per function (codegen/build.h EmitObject), defining
//                   NAME; for a cuda target kernels/NAME.gpu, a GpuProgram
//                   (measure/gpu_program.h: the cubin, its launches and their intermediates)
//   kernels/NAME.tir  the function before scheduling (text IR), the reference for --verify
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tirtune/support/dtype.h"

namespace tirtune::model {

inline constexpr const char* kArtifactFormat = "tirtune-model";
inline constexpr int kArtifactVersion = 4;

struct ArtifactFunction {
  std::string name;
  std::string object_file;  // relative to the directory; empty for a library function
  std::string ir_file;      // relative to the directory
  bool tuned = false;
  /// A function a library runs: the composite's description (JSON text); empty otherwise.
  std::string library;
};

enum class ArtifactValueKind { kInput, kConstant, kCall };

struct ArtifactValue {
  std::string name;
  ArtifactValueKind kind = ArtifactValueKind::kInput;
  DataType dtype = DataType::Float(32);
  std::vector<int64_t> shape;
  int64_t offset = 0;  // kConstant: where its bytes start in weights.bin
  int64_t nbytes = 0;  // kConstant
  /// kConstant stored packed: the layout's JSON (PackedLayout::ToJson); `shape` is the packed
  /// shape. Empty otherwise.
  std::string layout;
  int64_t NumElements() const;
};

struct ArtifactCall {
  int function = -1;
  std::vector<int> args;
  int output = -1;
};

/// manifest.json and graph.json of an artifact directory, checked for consistency.
struct Artifact {
  std::string dir;
  std::string target;
  std::string weights_file;  // relative to dir
  std::vector<ArtifactFunction> functions;
  std::vector<ArtifactValue> values;
  std::vector<ArtifactCall> calls;
  std::vector<int> inputs;
  std::vector<int> outputs;
};

/// Reads and checks the artifact in `dir`. UserError naming the file and the problem for a
/// missing directory or file, a file whose SHA-256 is not the manifest's (damaged or changed
/// since compile), JSON that does not parse, another format or version, and references out of
/// range (the objects and weights are read by GraphExecutor).
Artifact ReadArtifact(const std::string& dir);

}  // namespace tirtune::model
