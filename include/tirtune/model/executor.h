// The graph executor: loads a compiled-model artifact (model/artifact.h) into this process — every
// kernel object linked with LoadObject, the weights read once, the intermediates allocated once
// (buffers reused once a value is dead) — and runs the calls in order. An artifact compiled for a
// cuda target runs on this host's GPU (device 0): its GpuPrograms loaded into the device's
// context, the constants uploaded once, every value kept in device memory between calls, only the
// inputs and outputs copied per run. A function a library runs (offload/library.h) gets one
// library kernel per call, built at load with that call's constants.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tirtune/codegen/build.h"
#include "tirtune/graph/graph.h"
#include "tirtune/model/artifact.h"
#include "tirtune/offload/library.h"
#include "tirtune/support/ndarray.h"

namespace tirtune::model {

class GraphExecutor {
 public:
  /// Loads the artifact in `dir`. UserError for a corrupt or incomplete artifact (naming the
  /// file), a target this host cannot parse, a kernel whose parameters do not match the graph, or
  /// a cuda artifact on a host without the NVIDIA driver or a GPU.
  explicit GraphExecutor(const std::string& dir);
  ~GraphExecutor();
  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;

  const Artifact& artifact() const { return artifact_; }
  const Target& target() const { return target_; }
  /// The types of the graph inputs and outputs, in order.
  std::vector<graph::TensorType> InputTypes() const;
  std::vector<graph::TensorType> OutputTypes() const;

  /// Runs the model. UserError for the wrong number of inputs or an input of the wrong shape or
  /// element type (naming the input), or a kernel that returns an error status.
  std::vector<NDArray> Run(const std::vector<NDArray>& inputs);
  /// The outputs as the last Run or RunTimedCalls left them.
  std::vector<NDArray> Outputs();

  /// Runs every call once on the inputs of the last Run and returns the seconds each took
  /// (indexed like artifact().calls; on a GPU, CUDA events around each call's launches). With
  /// `alone_repeats` > 0 each call then runs that many more times in a row and the median of
  /// those is returned instead: the call warm and alone, as warm tuning measures it (a call's
  /// output never shares storage with its arguments, so the values stay those of the model).
  std::vector<double> RunTimedCalls(int alone_repeats = 0);

  /// Bytes of intermediate storage after reuse, and without it (on a GPU: device memory, one
  /// buffer per value, no reuse yet).
  int64_t intermediate_bytes() const { return intermediate_bytes_; }
  int64_t intermediate_bytes_unshared() const { return intermediate_bytes_unshared_; }

  /// The graph with every call of the function as written (the .tir files), for running on the
  /// interpreter (graph/executor.h RunGraph) as a reference.
  graph::Graph ReferenceGraph() const;

 private:
  void RunCall(size_t c);
  void RunCalls(std::vector<double>* seconds, int alone_repeats);
  std::unique_ptr<offload::LibraryKernel> BuildLibraryKernel(
      const std::string& dir, const ArtifactCall& call, const ArtifactFunction& f,
      const offload::LibraryOptions& options) const;
  void LoadInputsAndConstants(const std::string& dir);
  void LoadGpu(const std::string& dir);
  void RunGpu();
  void RunGpuCalls(std::vector<double>* seconds, int alone_repeats);

  struct GpuState;

  Artifact artifact_;
  Target target_;
  std::vector<std::unique_ptr<Kernel>> kernels_;  // per function; null for a library's
  std::vector<std::unique_ptr<offload::LibraryKernel>> library_kernels_;  // per call
  std::vector<NDArray> blobs_;  // storage: inputs, constants, pooled intermediates
  std::vector<void*> data_;     // per value: where its elements live
  std::vector<std::vector<void*>> call_args_;
  int64_t intermediate_bytes_ = 0;
  int64_t intermediate_bytes_unshared_ = 0;
  std::unique_ptr<GpuState> gpu_;  // a cuda artifact's device side
};

}  // namespace tirtune::model
