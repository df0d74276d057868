// Winograd convolution F(m x m, 3 x 3) for the oneDNN backend: a 3x3, stride-1 convolution in
// NHWC computed as m x m output tiles. Each (m+2) x (m+2) input tile is transformed (B^T d B),
// the (m+2)^2 positions of every tile multiply the transformed weights (G g G^T, computed once
// at Build) in one batched oneDNN matmul, and each tile is transformed back (A^T M A) with the
// bias and the post-ops (sum, relu, clip) applied on the way out. m = 4 multiplies 4x fewer
// times than the direct convolution, m = 2 2.25x fewer; the transforms cost memory traffic, so
// which of the three is fastest depends on the shape, and the tuner measures each.
#pragma once

#include <cstdint>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../composite_body.h"
#include "tirtune/support/byte_range.h"

namespace tirtune::offload {

struct WinogradConvSpec {
  int m = 4;                                  // output tile: 2 or 4
  int64_t n = 1, h = 0, w = 0, c = 0, k = 0;  // input [n, h, w, c], weight [3, 3, c, k]
  int64_t out_h = 0, out_w = 0, pad = 1;      // output [n, out_h, out_w, k]
  int threads = 1;
};

/// An elementwise step after the bias, in order: add the addend (the call's argument of the same
/// shape as the output), max(x, 0), or min(max(x, lo), hi).
struct WinogradPostOp {
  enum Kind { kSum, kRelu, kClip } kind;
  float lo = 0, hi = 0;
};

class WinogradConv {
 public:
  /// `weight` [3, 3, c, k] and `bias` [k] (or null) are copied (transformed) here. Throws
  /// std::invalid_argument for a spec it does not take (WinogradUnsupported says why) and
  /// dnnl::error when oneDNN refuses the product.
  WinogradConv(const WinogradConvSpec& spec, const float* weight, const float* bias,
               std::vector<WinogradPostOp> post);
  ~WinogradConv();
  WinogradConv(const WinogradConv&) = delete;
  WinogradConv& operator=(const WinogradConv&) = delete;

  /// y = post(conv(x) + bias); `addend` is read by a kSum post-op (may alias nothing else). The
  /// transformed tiles and products live in a scratch buffer of the calling thread, shared by
  /// every WinogradConv that thread runs; one object is not run by two threads at once.
  void Run(const float* x, const float* addend, float* y);

  /// "Winograd F(4x4, 3x3), oneDNN matmul brg:avx2".
  std::string Describe() const;
  /// The transformed weights and the bias: what a timer with cold constants evicts.
  std::vector<ByteRange> ConstantMemory() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Why WinogradConv does not take `spec` (not 2 or 4, channels not a multiple of 16, an output
/// shape that is not the 3x3 stride-1 one), empty when it does.
std::string WinogradUnsupported(const WinogradConvSpec& spec);

/// The algorithms of the oneDNN backend that run a composite as WinogradConv: "winograd4" and
/// "winograd2" (F(4x4, 3x3) and F(2x2, 3x3)).
inline constexpr const char* kWinogradAlgorithms[] = {"winograd4", "winograd2"};

/// A composite read as a WinogradConv: its spec, post-ops, and the argument a sum adds (-1).
struct WinogradPlan {
  WinogradConvSpec spec;
  std::vector<WinogradPostOp> post;
  int addend = -1;
};

/// The WinogradPlan of a composite whose body `plan` reads (a batch norm already folded into its
/// weight and bias), with arguments of `args` and a primitive result of `main_type`, for
/// `algorithm` (one of kWinogradAlgorithms); or the reason in `why` and nullopt: not a float32
/// 2-D convolution of a 3x3 constant weight, stride 1, dilation 1, one group, a post-op besides a
/// sum, relu and clip, or what WinogradUnsupported says.
std::optional<WinogradPlan> PlanWinograd(const body::Plan& plan,
                                         const std::vector<graph::TensorType>& args,
                                         const graph::TensorType& main_type,
                                         const std::string& algorithm, int threads,
                                         std::string* why);

/// The kWinogradAlgorithms that run composite call `call` of `graph` (PlanWinograd after a batch
/// norm's fold, its weight and bias constants): the oneDNN backend's Algorithms.
std::vector<std::string> WinogradAlgorithms(const graph::Graph& graph, const graph::Call& call);

}  // namespace tirtune::offload
