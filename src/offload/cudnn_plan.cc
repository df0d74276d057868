// A cuDNN composite read as one convolution and the steps after it (cudnn_plan.h).
#include "tirtune/offload/cudnn_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <optional>
#include <vector>

#include "composite_body.h"
#include "tirtune/offload/library.h"

namespace tirtune::offload {
namespace {

using body::PostOp;
using graph::Call;
using graph::CallKind;
using graph::Graph;

const char kLibrary[] = "cuDNN";

[[noreturn]] void Decline(const Call& call, const std::string& why) {
  body::Decline(kLibrary, call, why);
}

// A channels-last tensor [N, spatial..., C] of row-major memory as cuDNN's (N, C, spatial...),
// with a unit height first when there is one spatial dimension.
cuda::DnnTensor ChannelsLast(const std::vector<int64_t>& shape) {
  const std::vector<int64_t> rm = body::RowMajorStrides(shape);
  const size_t r = shape.size();
  cuda::DnnTensor t{{shape[0], shape[r - 1]}, {rm[0], rm[r - 1]}};
  if (r == 3) {
    t.dims.push_back(1);
    t.strides.push_back(rm[0]);
  }
  for (size_t d = 1; d + 1 < r; ++d) {
    t.dims.push_back(shape[d]);
    t.strides.push_back(rm[d]);
  }
  return t;
}

// A constant per output channel, broadcast over the rest: (1, K, 1, ...).
cuda::DnnTensor PerChannel(int64_t channels, size_t rank) {
  cuda::DnnTensor t{std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 1)};
  t.dims[1] = channels;
  t.strides[0] = channels;
  return t;
}

}  // namespace

CudnnPlan PlanCudnn(const Graph& outer, const Call& call) {
  if (call.kind != CallKind::kGraph || !call.body) Decline(call, "not a composite");
  body::Plan p = body::ReadBody(outer, call, kLibrary);
  const Call& main = *p.main;
  if (main.op != "conv1d" && main.op != "conv2d" && main.op != "conv3d") {
    Decline(call, fmt::format("cuDNN runs convolutions here, not {}", main.op));
  }
  const std::vector<int64_t>& x = outer.value(call.args[p.data]).type.shape;
  const std::vector<int64_t>& w = outer.value(call.args[p.weight]).type.shape;
  const std::vector<int64_t>& y = call.body->value(main.output).type.shape;
  const graph::Attrs attrs = body::AttrsOf(main);
  const int64_t stride = attrs.GetInt("stride"), pad = attrs.GetInt("pad");
  const int64_t dilation = attrs.GetInt("dilation"), groups = attrs.GetInt("groups");
  const size_t spatial = x.size() - 2;
  for (const std::vector<int64_t>* shape : {&x, &w, &y}) {
    for (int64_t d : *shape) {
      if (d == 0) Decline(call, "an empty tensor");
    }
  }
  // cuDNN pads both sides alike: its output must be the graph's.
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t out = (x[i + 1] + 2 * pad - dilation * (w[i] - 1) - 1) / stride + 1;
    if (out != y[i + 1]) {
      Decline(call, fmt::format("an output of {} where padding {} on both sides gives {}", y[i + 1],
                                pad, out));
    }
  }

  CudnnPlan plan;
  cuda::DnnConvDesc& d = plan.conv;
  d.x = ChannelsLast(x);
  d.y = ChannelsLast(y);
  // The weight [spatial..., C / groups, K] as (K, C / groups, spatial...) at its own strides.
  const std::vector<int64_t> ws = body::RowMajorStrides(w);
  d.weight = {{w[spatial + 1], w[spatial]}, {ws[spatial + 1], ws[spatial]}};
  if (spatial == 1) {
    d.weight.dims.push_back(1);
    d.weight.strides.push_back(ws[0] * w[0]);
    d.pad = {0};
    d.stride = {1};
    d.dilation = {1};
  }
  for (size_t i = 0; i < spatial; ++i) {
    d.weight.dims.push_back(w[i]);
    d.weight.strides.push_back(ws[i]);
    d.pad.push_back(pad);
    d.stride.push_back(stride);
    d.dilation.push_back(dilation);
  }
  d.groups = groups;
  // A constant weight is packed once into memory of its own; any other in the workspace, on
  // every run, leaving the rest for the convolution.
  d.weight_constant = outer.value(call.args[p.weight]).kind == graph::ValueKind::kConstant;
  if (!d.weight_constant && cuda::PackedFilterBytes(d) > kGpuLibraryWorkspaceBytes / 2) {
    Decline(call, fmt::format("a weight of {} bytes that is not a constant (the library "
                              "workspace holds up to {})",
                              cuda::PackedFilterBytes(d), kGpuLibraryWorkspaceBytes / 2));
  }
  plan.data = p.data;
  plan.weight = p.weight;

  const int64_t channels = y.back();
  const size_t rank = d.y.dims.size();
  std::vector<std::string> notes;
  auto step = [&](cuda::DnnStep s, int operand, std::string note) {
    d.steps.push_back(std::move(s));
    plan.step_operands.push_back(operand);
    notes.push_back(std::move(note));
  };
  if (std::optional<body::FoldedScaleShift> f = body::FoldScaleShift(outer, call, p, channels)) {
    plan.folded_weight = std::move(f->weight);
    plan.folded_bias = std::move(f->bias);
    p.post.erase(p.post.begin(), p.post.begin() + static_cast<std::ptrdiff_t>(f->post_ops));
    step({cuda::DnnStep::kAdd, PerChannel(channels, rank)}, kFoldedBias,
         p.bias >= 0 ? "bias with scale and shift folded in" : "scale and shift folded in");
  } else if (p.bias >= 0) {
    step({cuda::DnnStep::kAdd, PerChannel(channels, rank)}, p.bias, "bias");
  }
  for (const PostOp& post : p.post) {
    switch (post.kind) {
      case PostOp::kSum:
        step({cuda::DnnStep::kAdd, d.y}, post.addend, "sum");
        break;
      case PostOp::kAdd:
        step({cuda::DnnStep::kAdd, PerChannel(channels, rank)}, post.addend, "add");
        break;
      case PostOp::kMul:
        step({cuda::DnnStep::kMultiply, PerChannel(channels, rank)}, post.addend, "multiply");
        break;
      case PostOp::kRelu:
        step({cuda::DnnStep::kRelu, {}}, -1, "ReLU");
        break;
      case PostOp::kClip:
        if (post.alpha != 0) {
          Decline(call, fmt::format("clip from {} (cuDNN's clipped ReLU starts at 0)", post.alpha));
        }
        if (post.beta >= std::numeric_limits<float>::max()) {  // clip's default: none
          step({cuda::DnnStep::kRelu, {}}, -1, "ReLU");
        } else {
          step({cuda::DnnStep::kClippedRelu, {}, post.beta}, -1,
               fmt::format("clip(0, {})", post.beta));
        }
        break;
      case PostOp::kGelu:
      case PostOp::kGeluTanh:
        Decline(call, "GELU is not one of cuDNN's activations");
    }
  }
  std::vector<std::string> shape;
  for (size_t i = 0; i < spatial; ++i) shape.push_back(std::to_string(w[i]));
  std::vector<std::string> details;
  if (stride != 1) details.push_back(fmt::format("stride {}", stride));
  if (pad != 0) details.push_back(fmt::format("pad {}", pad));
  if (dilation != 1) details.push_back(fmt::format("dilation {}", dilation));
  if (groups != 1) details.push_back(fmt::format("groups {}", groups));
  std::string tail = fmt::format("{}", fmt::join(details, ", "));
  if (!notes.empty()) {
    tail += fmt::format("{}{}", tail.empty() ? "" : "; ", fmt::join(notes, ", "));
  }
  plan.summary =
      fmt::format("{} {}, {} -> {} channels on {}{}", main.op, fmt::join(shape, "x"), x.back(),
                  channels, fmt::join(std::vector<int64_t>(x.begin(), x.end() - 1), "x"),
                  tail.empty() ? "" : fmt::format(" ({})", tail));
  return plan;
}

}  // namespace tirtune::offload
