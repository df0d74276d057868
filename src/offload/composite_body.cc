// Reading a composite's body (composite_body.h).
#include "composite_body.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace tirtune::offload::body {

using graph::Call;
using graph::CallKind;
using graph::Graph;
using graph::ValueId;
using graph::ValueKind;

[[noreturn]] void Decline(const std::string& library, const Call& call, const std::string& why) {
  throw LibraryDeclined(fmt::format("{} cannot run {}: {}", library, call.op, why));
}

namespace {

// The scalar value of composite argument `a` when it is a constant of one element; NaN otherwise.
double ScalarConstant(const Graph& outer, const Call& call, int a) {
  if (a < 0) return std::nan("");
  const graph::Value& v = outer.value(call.args[a]);
  if (v.kind != ValueKind::kConstant || v.data.size() != 1) return std::nan("");
  return v.data.GetDouble(0);
}

// GELU as exporters write it out, x * (erf(x / sqrt(2)) + 1) * 0.5, in calls[i..i+4] on x =
// `current`: divide, erf, add, multiply by x, multiply by 0.5. Returns the last result, or -1.
ValueId GeluChain(const Graph& outer, const Call& call, const std::function<int(ValueId)>& arg,
                  const std::vector<Call>& calls, size_t i, ValueId x) {
  if (i + 4 >= calls.size()) return -1;
  const Call& div = calls[i];
  const Call& erf = calls[i + 1];
  const Call& add = calls[i + 2];
  const Call& mul = calls[i + 3];
  const Call& half = calls[i + 4];
  auto other = [](const Call& c, ValueId v) {
    if (c.args.size() != 2) return ValueId{-1};
    if (c.args[0] == v) return c.args[1];
    return c.args[1] == v ? c.args[0] : ValueId{-1};
  };
  auto near = [](double value, double expected) { return std::fabs(value - expected) < 1e-4; };
  if (div.op != "divide" || div.args.size() != 2 || div.args[0] != x ||
      !near(ScalarConstant(outer, call, arg(div.args[1])), std::sqrt(2.0))) {
    return -1;
  }
  if (erf.op != "erf" || erf.args.size() != 1 || erf.args[0] != div.output) return -1;
  if (add.op != "add" || !near(ScalarConstant(outer, call, arg(other(add, erf.output))), 1.0)) {
    return -1;
  }
  if (mul.op != "multiply" || other(mul, add.output) != x) return -1;
  if (half.op != "multiply" ||
      !near(ScalarConstant(outer, call, arg(other(half, mul.output))), 0.5)) {
    return -1;
  }
  return half.output;
}

}  // namespace

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::optional<View> Reshaped(const View& v, const std::vector<int64_t>& shape) {
  // The dimensions of more than one element; those of one may have any stride.
  std::vector<int64_t> dims, strides;
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (v.dims[i] == 1) continue;
    dims.push_back(v.dims[i]);
    strides.push_back(v.strides[i]);
  }
  View out{shape, std::vector<int64_t>(shape.size(), 0)};
  std::vector<bool> set(shape.size(), false);
  // Groups of old dimensions [i, i2) and new ones [j, j2) of one extent: the old ones must be
  // one run of memory (each stride its inner neighbour's times its extent); the new ones split
  // that run.
  size_t i = 0, j = 0;
  while (j < shape.size()) {
    if (shape[j] == 1) {
      ++j;
      continue;
    }
    if (i == dims.size()) return std::nullopt;
    size_t i2 = i + 1, j2 = j + 1;
    int64_t old_extent = dims[i], new_extent = shape[j];
    while (old_extent != new_extent) {
      if (old_extent < new_extent) {
        if (i2 == dims.size()) return std::nullopt;
        old_extent *= dims[i2++];
      } else {
        if (j2 == shape.size()) return std::nullopt;
        new_extent *= shape[j2++];
      }
    }
    for (size_t k = i; k + 1 < i2; ++k) {
      if (strides[k] != strides[k + 1] * dims[k + 1]) return std::nullopt;
    }
    int64_t stride = strides[i2 - 1];
    for (size_t k = j2; k-- > j;) {
      out.strides[k] = stride;
      set[k] = true;
      stride *= shape[k];
    }
    i = i2;
    j = j2;
  }
  if (i != dims.size()) return std::nullopt;
  // A dimension of one element: the stride that keeps its neighbours' order.
  for (size_t k = shape.size(); k-- > 0;) {
    if (!set[k]) out.strides[k] = k + 1 < shape.size() ? out.strides[k + 1] * shape[k + 1] : 1;
  }
  return out;
}

Plan ReadBody(const Graph& outer, const Call& call, const std::string& library) {
  const Graph& body = *call.body;
  std::map<ValueId, int> arg_of;  // body input -> composite argument
  std::vector<ValueId> inputs = body.Inputs();
  for (size_t i = 0; i < inputs.size(); ++i) arg_of[inputs[i]] = static_cast<int>(i);
  auto arg = [&](ValueId v) { return arg_of.count(v) ? arg_of.at(v) : -1; };
  Plan plan;
  ValueId current = -1;
  // The transposes and reshapes before the primitive: each result a view of an argument.
  std::map<ValueId, std::pair<int, View>> views;
  auto view_of = [&](ValueId v) -> std::optional<std::pair<int, View>> {
    if (views.count(v)) return views.at(v);
    if (arg(v) < 0) return std::nullopt;
    const std::vector<int64_t>& shape = body.value(v).type.shape;
    return std::make_pair(arg(v), View{shape, RowMajorStrides(shape)});
  };
  const std::vector<Call>& calls = body.calls();
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    if (c.kind != CallKind::kOp) Decline(library, call, "its body is not operator calls");
    if (plan.main == nullptr && (c.op == "transpose" || c.op == "reshape")) {
      std::optional<std::pair<int, View>> from = view_of(c.args[0]);
      if (!from) Decline(library, call, fmt::format("{} of a value computed inside it", c.op));
      View& v = from->second;
      if (c.op == "transpose") {
        View moved = v;
        const graph::Ints perm = AttrsOf(c).GetInts("perm");
        const auto rank = static_cast<int64_t>(v.dims.size());
        for (size_t d = 0; d < perm.size(); ++d) {
          const int64_t from_axis = perm[d] < 0 ? perm[d] + rank : perm[d];
          moved.dims[d] = v.dims[from_axis];
          moved.strides[d] = v.strides[from_axis];
        }
        v = moved;
      } else {
        std::optional<View> reshaped = Reshaped(v, body.value(c.output).type.shape);
        if (!reshaped)
          Decline(library, call, "a reshape of a transposed operand that strides cannot say");
        v = *reshaped;
      }
      views[c.output] = *from;
      continue;
    }
    if (plan.main == nullptr) {
      static const std::set<std::string> kMain = {
          "conv1d", "conv2d",       "conv3d",     "conv2d_transpose", "dense",
          "matmul", "batch_matmul", "max_pool2d", "avg_pool2d",       "softmax"};
      if (!kMain.count(c.op)) Decline(library, call, fmt::format("it starts with {}", c.op));
      plan.main = &c;
      plan.data = arg(c.args[0]);
      plan.weight = c.args.size() > 1 ? arg(c.args[1]) : -1;
      if (!views.empty()) {
        if (c.op != "matmul" && c.op != "batch_matmul") {
          Decline(library, call, fmt::format("{} of a transposed or reshaped operand", c.op));
        }
        std::optional<std::pair<int, View>> a = view_of(c.args[0]), b = view_of(c.args[1]);
        if (a && b) {
          plan.data = a->first;
          plan.data_view = a->second;
          plan.weight = b->first;
          plan.weight_view = b->second;
        }
      }
      if (plan.data < 0 || (c.args.size() > 1 && plan.weight < 0)) {
        Decline(library, call, "an operand is computed inside it");
      }
      current = c.output;
      continue;
    }
    const auto n_current = std::count(c.args.begin(), c.args.end(), current);
    if (n_current != 1)
      Decline(library, call, fmt::format("{} does not take the previous result once", c.op));
    if (plan.weight < 0) Decline(library, call, fmt::format("{} after {}", c.op, plan.main->op));
    const graph::TensorType& type = body.value(current).type;
    if (ValueId gelu = GeluChain(outer, call, arg, calls, i, current); gelu >= 0) {
      plan.post.push_back({PostOp::kGelu});
      current = gelu;
      i += 4;
      continue;
    }
    if (c.op == "reshape") {
      // A row-major view that keeps the channels last (a matrix product's [M, N] seen as
      // [1, M, N]): the same memory, so the post-ops go on.
      if (body.value(c.output).type.shape.back() != type.shape.back() ||
          plan.main->op.rfind("conv", 0) == 0) {
        Decline(library, call, "a reshape that moves the channels");
      }
    } else if (c.op == "relu") {
      plan.post.push_back({PostOp::kRelu});
    } else if (c.op == "gelu") {
      plan.post.push_back({PostOp::kGelu});
    } else if (c.op == "gelu_tanh") {
      plan.post.push_back({PostOp::kGeluTanh});
    } else if (c.op == "clip") {
      graph::Attrs attrs = AttrsOf(c);
      plan.post.push_back({PostOp::kClip, -1, static_cast<float>(attrs.GetFloat("min")),
                           static_cast<float>(attrs.GetFloat("max"))});
    } else if (c.op == "bias_add" || c.op == "add" || c.op == "multiply") {
      // A bias (right after the primitive), a sum (a whole tensor added), or a per-channel
      // constant added or multiplied (a binary post-op: a batch norm's scale and shift).
      ValueId other = c.args[0] == current ? c.args[1] : c.args[0];
      int other_arg = arg(other);
      if (other_arg < 0)
        Decline(library, call, fmt::format("{} takes a value computed inside it", c.op));
      const graph::TensorType& t = body.value(other).type;
      const int64_t channels = type.shape.back();
      bool per_channel =
          !t.shape.empty() && t.NumElements() == channels && t.shape.back() == channels;
      bool constant = outer.value(call.args[other_arg]).kind == ValueKind::kConstant;
      if (c.op != "multiply" && t == type) {
        int sums = 0;
        for (const PostOp& p : plan.post) sums += p.kind == PostOp::kSum;
        if (sums > 0) Decline(library, call, "a second sum");
        plan.post.push_back({PostOp::kSum, other_arg});
      } else if (c.op != "multiply" && per_channel && plan.bias < 0 && plan.post.empty()) {
        plan.bias = other_arg;
      } else if (per_channel && constant) {
        plan.post.push_back({c.op == "multiply" ? PostOp::kMul : PostOp::kAdd, other_arg});
      } else {
        Decline(library, call,
                fmt::format("{} of {} and {} is neither a bias, a sum nor a per-channel "
                            "constant",
                            c.op, t.str(), type.str()));
      }
    } else {
      Decline(library, call, fmt::format("{} is not a {} post-op", c.op, library));
    }
    current = c.output;
  }
  if (plan.main == nullptr) Decline(library, call, "an empty body");
  for (int a : {plan.data, plan.weight}) {
    if (a >= 0 && outer.value(call.args[a]).type.dtype != DataType::Float(32)) {
      Decline(library, call, "not float32");
    }
  }
  return plan;
}

View ViewOrRowMajor(const std::optional<View>& view, const std::vector<int64_t>& shape) {
  return view ? *view : View{shape, RowMajorStrides(shape)};
}

graph::Pattern ViewedOperand(const graph::Pattern& x) {
  graph::Pattern moved = graph::IsOp("transpose", {x});
  return graph::IsOp("reshape", {moved}) | moved | graph::IsOp("reshape", {x});
}

std::optional<FoldedScaleShift> FoldScaleShift(const Graph& outer, const Call& call,
                                               const Plan& plan, int64_t channels) {
  if (plan.weight < 0 || plan.weight_view) return std::nullopt;
  const graph::Value& w = outer.value(call.args[plan.weight]);
  if (w.kind != ValueKind::kConstant || w.type.dtype != DataType::Float(32)) return std::nullopt;
  if (plan.bias >= 0 && outer.value(call.args[plan.bias]).kind != ValueKind::kConstant) {
    return std::nullopt;
  }
  FoldedScaleShift f;
  while (f.post_ops < plan.post.size() && (plan.post[f.post_ops].kind == PostOp::kMul ||
                                           plan.post[f.post_ops].kind == PostOp::kAdd)) {
    ++f.post_ops;
  }
  if (f.post_ops == 0) return std::nullopt;
  std::vector<float> scale(channels, 1.0f);
  f.bias.assign(channels, 0.0f);
  if (plan.bias >= 0) {
    const float* b = outer.value(call.args[plan.bias]).data.data<float>();
    f.bias.assign(b, b + channels);
  }
  for (size_t i = 0; i < f.post_ops; ++i) {
    const float* d = outer.value(call.args[plan.post[i].addend]).data.data<float>();
    for (int64_t c = 0; c < channels; ++c) {
      if (plan.post[i].kind == PostOp::kMul) {
        scale[c] *= d[c];
        f.bias[c] *= d[c];
      } else {
        f.bias[c] += d[c];
      }
    }
  }
  f.weight = NDArray::Empty(w.data.shape(), DataType::Float(32));
  const float* from = w.data.data<float>();
  float* to = f.weight.data<float>();
  const int64_t inner = plan.main->op == "dense" ? w.data.shape().back() : 1;
  for (int64_t i = 0; i < f.weight.size(); ++i) to[i] = from[i] * scale[(i / inner) % channels];
  return f;
}

void CheckByBuilding(std::vector<graph::FusionPattern>* patterns,
                     std::function<void(const Graph&, const Call&)> build) {
  for (graph::FusionPattern& p : *patterns) {
    p.check = [build](const Graph& g, const graph::PatternMatch& m) {
      Call probe;
      probe.kind = CallKind::kGraph;
      probe.op = "composite";
      probe.body = graph::MatchedSubgraph(g, m, &probe.args);
      probe.output = m.root;
      try {
        build(g, probe);
        return true;
      } catch (const LibraryDeclined&) {
        return false;
      }
    };
  }
}

}  // namespace tirtune::offload::body
