// Elementwise ONNX operators. Inputs known at import time are computed now; otherwise the graph
// operator is applied in whichever layout the input already has, so a chain of convolutions,
// batch norms, additions and activations stays channel-last without transposes.
#include <cmath>
#include <map>

#include "converters.h"

namespace tirtune::graph::onnx_import {
namespace {

// Input i in channel-last form for an output of rank `rank` (>= its own): a lower-rank operand
// gets leading 1s first, as NumPy broadcasting would give it.
ValueId ChannelsLastForRank(ImportContext& ctx, int i, int rank) {
  const ImportedValue& v = ctx.Input(i);
  int own = static_cast<int>(v.shape.size());
  if (own == rank) return ctx.ChannelsLast(i);
  std::vector<int64_t> shape(rank - own, 1);
  shape.insert(shape.end(), v.shape.begin(), v.shape.end());
  if (v.is_host()) {
    return ctx.Constant(
        HostTranspose(HostReshape(ConstantData(v), shape), ToChannelsLastPerm(rank)));
  }
  ValueId reshaped = ctx.Emit("reshape", {ctx.Plain(i)}, {{"shape", shape}});
  return ctx.Emit("transpose", {reshaped}, {{"perm", ToChannelsLastPerm(rank)}});
}

bool IsChannelsLastOnly(const ImportedValue& v) {
  return !v.is_host() && v.plain < 0 && v.channels_last >= 0;
}

// Output 0 = op(inputs 0 and 1) in the graph, channel-last when an operand of the full rank is
// only channel-last.
void EmitBinary(ImportContext& ctx, const std::string& op) {
  ctx.UnifyTypes({0, 1});
  ctx.RequireNumber(0);
  ctx.RequireNumber(1);
  const ImportedValue& a = ctx.Input(0);
  const ImportedValue& b = ctx.Input(1);
  int rank = static_cast<int>(std::max(a.shape.size(), b.shape.size()));
  bool channels_last = rank >= 3 && ((IsChannelsLastOnly(a) && a.shape.size() == size_t(rank)) ||
                                     (IsChannelsLastOnly(b) && b.shape.size() == size_t(rank)));
  if (channels_last) {
    ValueId lhs = ChannelsLastForRank(ctx, 0, rank);
    ValueId rhs = ChannelsLastForRank(ctx, 1, rank);
    ctx.SetChannelsLast(0, ctx.Emit(op, {lhs, rhs}));
  } else {
    ValueId lhs = ctx.Plain(0);
    ValueId rhs = ctx.Plain(1);
    ctx.SetPlain(0, ctx.Emit(op, {lhs, rhs}));
  }
}

// Output 0 = op(input 0) in input 0's layout.
void EmitUnary(ImportContext& ctx, const std::string& op, Attrs attrs = {}) {
  ctx.RequireFloat(0);
  if (IsChannelsLastOnly(ctx.Input(0))) {
    ctx.SetChannelsLast(0, ctx.Emit(op, {ctx.ChannelsLast(0)}, std::move(attrs)));
  } else {
    ctx.SetPlain(0, ctx.Emit(op, {ctx.Plain(0)}, std::move(attrs)));
  }
}

}  // namespace

void ConvertUnary(ImportContext& ctx) {
  static const std::map<std::string, std::string> ops = {
      {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"},    {"Erf", "erf"},
      {"Sqrt", "sqrt"}, {"Exp", "exp"},         {"Neg", "negative"},
  };
  const std::string& op = ops.at(ctx.node().op_type());
  const ImportedValue& x = ctx.Input(0);
  if (x.is_host() && x.dtype == DataType::Int(64) && op == "negative") {
    ctx.SetHost(0,
                HostBinary(FloatScalar(0), x.host, x.dtype, [](double, double v) { return -v; }));
    return;
  }
  EmitUnary(ctx, op);
}

void ConvertActivation(ImportContext& ctx) {
  struct Op {
    const char* name;                                  // the graph operator
    std::vector<std::pair<const char*, float>> attrs;  // ONNX's float attributes, defaults
  };
  static const std::map<std::string, Op> ops = {
      {"Abs", {"abs", {}}},
      {"Log", {"log", {}}},
      {"Floor", {"floor", {}}},
      {"Ceil", {"ceil", {}}},
      {"Round", {"round", {}}},
      {"Sin", {"sin", {}}},
      {"Cos", {"cos", {}}},
      {"Tan", {"tan", {}}},
      {"Sign", {"sign", {}}},
      {"Softsign", {"softsign", {}}},
      {"Softplus", {"softplus", {}}},
      {"Mish", {"mish", {}}},
      {"HardSwish", {"hard_swish", {}}},
      {"HardSigmoid", {"hard_sigmoid", {{"alpha", 0.2f}, {"beta", 0.5f}}}},
      {"LeakyRelu", {"leaky_relu", {{"alpha", 0.01f}}}},
      {"ThresholdedRelu", {"thresholded_relu", {{"alpha", 1.0f}}}},
      {"Elu", {"elu", {{"alpha", 1.0f}}}},
      {"Celu", {"celu", {{"alpha", 1.0f}}}},
      {"Selu",
       {"selu", {{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}}}},
  };
  const Op& op = ops.at(ctx.node().op_type());
  Attrs attrs;
  for (const auto& [name, fallback] : op.attrs) {
    attrs.Set(name, static_cast<double>(ctx.AttrFloat(name, fallback)));
  }
  EmitUnary(ctx, op.name, std::move(attrs));
}

// Max, Min, Sum and Mean: a chain of broadcasting binary operators (Mean divides at the end).
void ConvertVariadic(ImportContext& ctx) {
  const std::string& type = ctx.node().op_type();
  int n = ctx.NumInputs();
  if (n < 1) ctx.Fail("{} needs at least one input", type);
  DataType dtype = ctx.UnifyTypes(ctx.InputIndices());
  for (int i = 0; i < n; ++i) ctx.RequireNumber(i);
  if (type == "Mean" && !dtype.is_float()) ctx.Fail("Mean of {} tensors", dtype.str());
  if (n == 1) {
    ctx.Alias(0, 0);
    return;
  }
  const char* op = type == "Max" ? "maximum" : type == "Min" ? "minimum" : "add";
  ValueId y = ctx.Plain(0);
  for (int i = 1; i < n; ++i) y = ctx.Emit(op, {y, ctx.Plain(i)});
  if (type == "Mean") y = ctx.Emit("divide", {y, ctx.Constant(HostCast(FloatScalar(n), dtype))});
  ctx.SetPlain(0, y);
}

// PRelu: max(x, 0) + slope * min(x, 0), the slope broadcast to x.
void ConvertPRelu(ImportContext& ctx) {
  ctx.RequireFloat(0);
  ctx.RequireFloat(1);
  ValueId x = ctx.Plain(0), zero = ctx.ScalarConstant(0.0);
  ValueId negative = ctx.Emit("multiply", {ctx.Plain(1), ctx.Emit("minimum", {x, zero})});
  ctx.SetPlain(0, ctx.Emit("add", {ctx.Emit("maximum", {x, zero}), negative}));
}

// Mod: on the host when both operands are known, else the graph operator mod (float32 or int64).
void ConvertMod(ImportContext& ctx) {
  const ImportedValue& a = ctx.Input(0);
  const ImportedValue& b = ctx.Input(1);
  int64_t fmod = ctx.AttrInt("fmod", 0);
  DataType dtype = ctx.UnifyTypes({0, 1});
  if (a.is_host() && b.is_host() && a.dtype != b.dtype) {
    ctx.Fail("inputs are {} and {}", a.dtype.str(), b.dtype.str());
  }
  bool is_int = dtype.is_integral();
  ctx.RequireNumber(0);
  if (a.is_host() && b.is_host()) {
    ctx.SetHost(0, HostBinary(a.host, b.host, a.dtype, [&](double x, double y) {
      if (y == 0) return is_int ? 0.0 : std::nan("");
      return fmod != 0 ? std::fmod(x, y) : x - std::floor(x / y) * y;
    }));
    return;
  }
  ctx.SetPlain(0, ctx.Emit("mod", {ctx.Plain(0), ctx.Plain(1)}, {{"fmod", fmod}}));
}

// Gelu (opset 20): erf's exact form, or tanh's approximation.
void ConvertGelu(ImportContext& ctx) {
  std::string approximate = ctx.AttrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    ctx.Fail("approximate = '{}' (none or tanh expected)", approximate);
  }
  EmitUnary(ctx, approximate == "none" ? "gelu" : "gelu_tanh");
}

void ConvertReciprocal(ImportContext& ctx) {
  ctx.RequireFloat(0);
  ValueId one = ctx.ScalarConstant(1.0);
  if (IsChannelsLastOnly(ctx.Input(0))) {
    ctx.SetChannelsLast(0, ctx.Emit("divide", {one, ctx.ChannelsLast(0)}));
  } else {
    ctx.SetPlain(0, ctx.Emit("divide", {one, ctx.Plain(0)}));
  }
}

void ConvertBinary(ImportContext& ctx) {
  const std::string& type = ctx.node().op_type();
  const ImportedValue& a = ctx.Input(0);
  const ImportedValue& b = ctx.Input(1);
  if (a.is_host() && b.is_host()) {
    std::function<double(double, double)> f;
    if (type == "Add") f = [](double x, double y) { return x + y; };
    if (type == "Sub") f = [](double x, double y) { return x - y; };
    if (type == "Mul") f = [](double x, double y) { return x * y; };
    if (type == "Div") {
      if (a.dtype == DataType::Int(64)) {
        f = [](double x, double y) { return y == 0 ? 0.0 : std::trunc(x / y); };
      } else {
        f = [](double x, double y) { return static_cast<float>(x) / static_cast<float>(y); };
      }
    }
    if (a.dtype != b.dtype) ctx.Fail("inputs are {} and {}", a.dtype.str(), b.dtype.str());
    try {
      ctx.SetHost(0, HostBinary(a.host, b.host, a.dtype, f));
    } catch (const UserError& e) {
      ctx.Fail("{}", e.what());
    }
    return;
  }
  static const std::map<std::string, std::string> ops = {
      {"Add", "add"}, {"Sub", "subtract"}, {"Mul", "multiply"}, {"Div", "divide"}};
  EmitBinary(ctx, ops.at(type));
}

void ConvertPow(ImportContext& ctx) {
  const ImportedValue& x = ctx.Input(0);
  const ImportedValue& y = ctx.Input(1);
  if (x.is_host() && y.is_host()) {
    ctx.SetHost(
        0, HostBinary(x.host, y.host, x.dtype, [](double a, double b) { return std::pow(a, b); }));
    return;
  }
  ctx.RequireFloat(0);
  // A constant scalar exponent becomes multiplications or a square root (exact, and fusable),
  // unless its rank widens the result.
  bool ok = true;
  if (y.is_host() && y.host.size() == 1 && BroadcastShapes(x.shape, y.shape, &ok) == x.shape) {
    double e = y.host.GetDouble(0);
    if (e == 1.0) {
      ctx.Alias(0, 0);
      return;
    }
    bool channels_last = IsChannelsLastOnly(x);
    ValueId base = channels_last ? ctx.ChannelsLast(0) : ctx.Plain(0);
    ValueId out = -1;
    if (e == 2.0) out = ctx.Emit("multiply", {base, base});
    if (e == 3.0) out = ctx.Emit("multiply", {ctx.Emit("multiply", {base, base}), base});
    if (e == 0.5) out = ctx.Emit("sqrt", {base});
    if (e == -1.0) out = ctx.Emit("divide", {ctx.ScalarConstant(1.0), base});
    if (out < 0) out = ctx.Emit("power", {base, ctx.ScalarConstant(e)});
    channels_last ? ctx.SetChannelsLast(0, out) : ctx.SetPlain(0, out);
    return;
  }
  if (y.is_host() && y.dtype != DataType::Float(32)) {  // an integer exponent tensor
    ValueId base = ctx.Plain(0);
    ctx.SetPlain(0, ctx.Emit("power", {base, ctx.Constant(HostCast(y.host, DataType::Float(32)))}));
    return;
  }
  ctx.RequireFloat(1);
  EmitBinary(ctx, "power");
}

void ConvertClip(ImportContext& ctx) {
  double lo = -kLargestFloat32, hi = kLargestFloat32;
  bool dynamic_bounds = ctx.opset() >= 11 && ((ctx.HasInput(1) && !ctx.Input(1).is_host()) ||
                                              (ctx.HasInput(2) && !ctx.Input(2).is_host()));
  if (dynamic_bounds) {  // bounds computed by the graph: maximum, then minimum
    ctx.RequireFloat(0);
    ValueId y = ctx.Plain(0);
    if (ctx.HasInput(1)) y = ctx.Emit("maximum", {y, ctx.Plain(1)});
    if (ctx.HasInput(2)) y = ctx.Emit("minimum", {y, ctx.Plain(2)});
    ctx.SetPlain(0, y);
    return;
  }
  if (ctx.opset() < 11) {
    lo = ctx.AttrFloat("min", static_cast<float>(lo));
    hi = ctx.AttrFloat("max", static_cast<float>(hi));
  } else {
    if (ctx.HasInput(1)) lo = ctx.HostScalar(1, "min");
    if (ctx.HasInput(2)) hi = ctx.HostScalar(2, "max");
  }
  const ImportedValue& x = ctx.Input(0);
  if (x.is_host()) {
    NDArray out = HostBinary(x.host, FloatScalar(lo), x.dtype,
                             [](double v, double l) { return std::max(v, l); });
    ctx.SetHost(0, HostBinary(out, FloatScalar(hi), x.dtype,
                              [](double v, double h) { return std::min(v, h); }));
    return;
  }
  EmitUnary(ctx, "clip", {{"min", lo}, {"max", hi}});
}

// Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor and Not: on the host when
// every input is known at import time (shape and mask computations), else a graph operator
// giving a bool tensor.
void ConvertCompare(ImportContext& ctx) {
  const std::string& type = ctx.node().op_type();
  bool unary = type == "Not";
  bool logical = unary || type == "And" || type == "Or" || type == "Xor";
  bool host = ctx.Input(0).is_host() && (unary || ctx.Input(1).is_host());
  if (!host) {
    static const std::map<std::string, std::string> ops = {{"Equal", "equal"},
                                                           {"Less", "less"},
                                                           {"LessOrEqual", "less_equal"},
                                                           {"Greater", "greater"},
                                                           {"GreaterOrEqual", "greater_equal"},
                                                           {"And", "logical_and"},
                                                           {"Or", "logical_or"},
                                                           {"Xor", "logical_xor"},
                                                           {"Not", "logical_not"}};
    DataType dtype = unary ? ctx.Input(0).dtype : ctx.UnifyTypes({0, 1});
    if (logical && !dtype.is_bool())
      ctx.Fail("{} of {} tensors (bool expected)", type, dtype.str());
    std::vector<ValueId> args = {ctx.Plain(0)};
    if (!unary) args.push_back(ctx.Plain(1));
    ctx.SetPlain(0, ctx.Emit(ops.at(type), args));
    return;
  }
  const NDArray& a = ctx.Input(0).host;
  if (unary) {
    ctx.SetHost(
        0, HostBinary(a, a, DataType::Bool(), [](double x, double) { return x != 0 ? 0.0 : 1.0; }));
    return;
  }
  using Rule = double (*)(double, double);
  static const std::map<std::string, Rule> rules = {
      {"Equal", [](double x, double y) { return x == y ? 1.0 : 0.0; }},
      {"Less", [](double x, double y) { return x < y ? 1.0 : 0.0; }},
      {"Greater", [](double x, double y) { return x > y ? 1.0 : 0.0; }},
      {"LessOrEqual", [](double x, double y) { return x <= y ? 1.0 : 0.0; }},
      {"GreaterOrEqual", [](double x, double y) { return x >= y ? 1.0 : 0.0; }},
      {"And", [](double x, double y) { return x != 0 && y != 0 ? 1.0 : 0.0; }},
      {"Or", [](double x, double y) { return x != 0 || y != 0 ? 1.0 : 0.0; }},
      {"Xor", [](double x, double y) { return (x != 0) != (y != 0) ? 1.0 : 0.0; }},
  };
  ctx.SetHost(0, HostBinary(a, ctx.Input(1).host, DataType::Bool(), rules.at(type)));
}

void ConvertWhere(ImportContext& ctx) {
  const ImportedValue& cond = ctx.Input(0);
  const ImportedValue& x = ctx.Input(1);
  const ImportedValue& y = ctx.Input(2);
  if (cond.is_host() && x.is_host() && y.is_host()) {
    if (x.dtype != y.dtype) ctx.Fail("branches are {} and {}", x.dtype.str(), y.dtype.str());
    ctx.SetHost(0, HostWhere(cond.host, x.host, y.host));
    return;
  }
  ctx.UnifyTypes({1, 2});
  if (!cond.is_host() && !cond.dtype.is_bool()) ctx.Fail("the condition is {}", cond.dtype.str());
  ValueId c = cond.is_host() ? ctx.Constant(HostCast(cond.host, DataType::Bool())) : ctx.Plain(0);
  ctx.SetPlain(0, ctx.Emit("where", {c, ctx.Plain(1), ctx.Plain(2)}));
}

namespace {

// Output 0 = input 0 converted to `dtype` (an exact graph element type).
void CastTo(ImportContext& ctx, DataType dtype) {
  const ImportedValue& x = ctx.Input(0);
  if (x.is_host()) {
    // Rounded (float16, bfloat16) or saturated (narrow integers) in the target type, then held in
    // host form.
    ctx.SetHost(0, HostCast(HostCast(x.host, dtype), HostForm(dtype)));
    ctx.Lookup(ctx.node().output(0)).SetConstantType(dtype);
    return;
  }
  if (x.dtype == dtype) {
    ctx.Alias(0, 0);
    return;
  }
  ctx.SetPlain(0, ctx.Emit("cast", {ctx.Plain(0)}, {{"dtype", dtype.str()}}));
}

}  // namespace

void ConvertCast(ImportContext& ctx) {
  int to = static_cast<int>(ctx.AttrInt("to", 0));
  DataType dtype;
  if (!GraphDataType(to, &dtype)) ctx.Fail("casting to {} is not supported", ElemTypeName(to));
  CastTo(ctx, dtype);
}

// CastLike: Cast to the element type of input 1 (for one known at import time: the type its
// constant takes, int64 for an integer).
void ConvertCastLike(ImportContext& ctx) {
  const ImportedValue& like = ctx.Input(1);
  CastTo(ctx, like.is_host() ? like.constant_dtype.value_or(like.dtype) : like.dtype);
}

void ConvertIdentity(ImportContext& ctx) { ctx.Alias(0, 0); }

// Dropout: the identity at inference, and in training mode too when the ratio is 0 (exporters
// write attention dropout with p = 0 that way).
void ConvertDropout(ImportContext& ctx) {
  if (ctx.HasInput(2) && ctx.HostScalar(2, "training_mode") != 0.0) {
    double ratio = ctx.HasInput(1) ? ctx.HostScalar(1, "ratio") : 0.5;
    if (ratio != 0.0) {
      ctx.Fail("training_mode = true with ratio {} is not supported (random; inference only)",
               ratio);
    }
  }
  ctx.RequireUnusedOutput(1);
  ctx.Alias(0, 0);
}

}  // namespace tirtune::graph::onnx_import
