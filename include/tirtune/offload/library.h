// Library backends: composites of FuseOpsByPattern (graph/pattern.h) run by a vendor library
// instead of a tuned kernel. A backend names the patterns it takes and builds, for one
// composite, a LibraryKernel: the library's primitives created and constant weights reordered
// into the library's preferred layout once, then run on the call's arguments any number of times.
//
//   const LibraryBackend& dnnl = DnnlBackend();
//   PatternFusionResult r = FuseOpsByPattern(graph, dnnl.Patterns());
//   std::unique_ptr<LibraryKernel> k = dnnl.Build(composite_call, constant_args, {.threads = 2});
//   k->Run(args, &out);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/graph/graph.h"
#include "tirtune/graph/pattern.h"
#include "tirtune/support/error.h"
#include "tirtune/support/ndarray.h"

namespace tirtune::offload {

/// A library declined a composite (a shape, dtype or attribute it does not take); the message
/// says what. The function falls back to a tuned kernel.
class LibraryDeclined : public UserError {
 public:
  using UserError::UserError;
};

/// One composite, ready to run.
class LibraryKernel {
 public:
  virtual ~LibraryKernel() = default;
  /// Runs on `args` (the composite call's arguments, in order; constants included) and writes
  /// `out`, which has the call's type. Not thread-safe: one caller at a time.
  virtual void Run(const std::vector<const NDArray*>& args, NDArray* out) = 0;
  /// What the library runs, for messages: "oneDNN convolution (NHWC, weights reordered to
  /// Acdb16a) + sum + eltwise_relu".
  virtual std::string Describe() const = 0;
};

struct LibraryOptions {
  /// Threads the library may use (the target's cores).
  int threads = 1;
};

class LibraryBackend {
 public:
  virtual ~LibraryBackend() = default;
  /// "dnnl": the Codegen attribute of its composites.
  virtual std::string Name() const = 0;
  /// Its patterns for FuseOpsByPattern, in priority order; each pattern's check already refuses
  /// what Build would decline where that is known from the graph alone.
  virtual std::vector<graph::FusionPattern> Patterns() const = 0;
  /// The kernel of composite call `call` (CallKind::kGraph with the Composite attribute) of
  /// `graph`; `constants[i]` holds argument i's data when it is a constant. Throws
  /// LibraryDeclined when the library cannot run it.
  virtual std::unique_ptr<LibraryKernel> Build(const graph::Graph& graph, const graph::Call& call,
                                               const LibraryOptions& options) const = 0;
};

/// The oneDNN backend (CPU): conv1d/2d/3d (grouped, depthwise, strided, dilated), dense and
/// matmul, each with a bias and the post-ops oneDNN fuses (sum, relu, clip, gelu) in the
/// composite's order. nullptr when tirtune was built without oneDNN.
const LibraryBackend* DnnlBackend();

}  // namespace tirtune::offload
