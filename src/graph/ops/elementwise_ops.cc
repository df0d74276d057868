// Elementwise and broadcast operators: activations, NumPy-broadcasting arithmetic (and power),
// where, cast, broadcast_to, bias_add and batch_norm (inference).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "op_families.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"
#include "tirtune/te/elementwise.h"
#include "tirtune/te/normalization.h"

namespace tirtune::graph {
namespace {

using te::Tensor;

// out[i...] = f(x[i...]).
Tensor Map(const Tensor& x, const std::function<Expr(Expr)>& f, std::string name) {
  return te::Compute(
      x.shape(), [&](const std::vector<Var>& v) { return f(x(te::AsIndices(v))); },
      std::move(name));
}

// The NumPy broadcast of `a` and `b`: trailing dimensions aligned, an extent of 1 stretched.
std::vector<int64_t> BroadcastShape(const Tensor& a, const Tensor& b, const char* op) {
  int ndim = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> shape(ndim);
  for (int d = 0; d < ndim; ++d) {
    int da = d - (ndim - a.ndim()), db = d - (ndim - b.ndim());
    int64_t ea = da >= 0 ? a.dim(da) : 1, eb = db >= 0 ? b.dim(db) : 1;
    if (ea != eb && ea != 1 && eb != 1) {
      TT_USER_ERROR("{}: shapes of {} and {} do not broadcast (dimension {}: {} vs {})", op,
                    a.name(), b.name(), d, ea, eb);
    }
    shape[d] = std::max(ea, eb);
  }
  return shape;
}

// The indices of `t` for output axes `v`: its trailing axes, 0 where it is stretched.
std::vector<Expr> BroadcastIndices(const Tensor& t, const std::vector<Var>& v,
                                   const std::vector<int64_t>& out_shape) {
  std::vector<Expr> indices;
  int offset = static_cast<int>(v.size()) - t.ndim();
  for (int d = 0; d < t.ndim(); ++d) {
    bool stretched = t.dim(d) == 1 && out_shape[d + offset] != 1;
    indices.push_back(stretched ? Expr(int64_t{0}) : Expr(v[d + offset]));
  }
  return indices;
}

// The NumPy broadcast of `shape` and `t`'s shape.
std::vector<int64_t> BroadcastWith(const std::vector<int64_t>& shape, const Tensor& t,
                                   const char* op) {
  int ndim = std::max(static_cast<int>(shape.size()), t.ndim());
  std::vector<int64_t> out(ndim);
  for (int d = 0; d < ndim; ++d) {
    int ds = d - (ndim - static_cast<int>(shape.size())), dt = d - (ndim - t.ndim());
    int64_t es = ds >= 0 ? shape[ds] : 1, et = dt >= 0 ? t.dim(dt) : 1;
    if (es != et && es != 1 && et != 1) {
      TT_USER_ERROR("{}: {} does not broadcast to [{}] (dimension {}: {} vs {})", op, t.name(),
                    fmt::join(shape, ", "), d, et, es);
    }
    out[d] = std::max(es, et);
  }
  return out;
}

// where(condition, lhs, rhs): lhs where the condition (bool, or a number: nonzero) holds, else
// rhs; all three broadcast together.
Tensor Where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    TT_USER_ERROR("where: {} is {} but {} is {}", a.name(), a.dtype().str(), b.name(),
                  b.dtype().str());
  }
  std::vector<int64_t> shape = BroadcastShape(a, b, "where");
  shape = BroadcastWith(shape, cond, "where");
  return te::Compute(
      std::vector<Expr>(shape.begin(), shape.end()),
      [&](const std::vector<Var>& v) {
        Expr c = cond(BroadcastIndices(cond, v, shape));
        return Select(Ne(c, MakeConst(cond.dtype(), 0)), a(BroadcastIndices(a, v, shape)),
                      b(BroadcastIndices(b, v, shape)));
      },
      "T_where");
}

Tensor BroadcastBinary(const Tensor& a, const Tensor& b, const std::function<Expr(Expr, Expr)>& f,
                       const char* op) {
  if (a.dtype() != b.dtype()) {
    TT_USER_ERROR("{}: {} is {} but {} is {}", op, a.name(), a.dtype().str(), b.name(),
                  b.dtype().str());
  }
  std::vector<int64_t> shape = BroadcastShape(a, b, op);
  return te::Compute(
      std::vector<Expr>(shape.begin(), shape.end()),
      [&](const std::vector<Var>& v) {
        return f(a(BroadcastIndices(a, v, shape)), b(BroadcastIndices(b, v, shape)));
      },
      fmt::format("T_{}", op));
}

OpDef Unary(std::string name, OpPattern pattern, std::function<Tensor(const Tensor&)> f) {
  return OpDef{
      .name = std::move(name),
      .inputs = {"data"},
      .variadic = false,
      .attrs = {},
      .pattern = pattern,
      .compute = [f](const std::vector<Tensor>& in, const Attrs&) { return f(in[0]); },
      .example_inputs = {F32({2, 3, 4})},
      .example_attrs = {},
  };
}

// An element-wise operator given per element, with float attributes (their defaults ONNX's).
OpDef Activation(std::string name, std::vector<AttrSpec> attrs,
                 std::function<Expr(Expr, const Attrs&)> f) {
  OpDef op = Unary(name, OpPattern::kElemWise, nullptr);
  op.attrs = std::move(attrs);
  std::string tensor = "T_" + name;
  op.compute = [f, tensor](const std::vector<Tensor>& in, const Attrs& attrs) {
    return Map(
        in[0], [&](Expr e) { return f(e, attrs); }, tensor);
  };
  return op;
}

OpDef Binary(std::string name, std::function<Expr(Expr, Expr)> f) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .inputs = {"lhs", "rhs"},
      .variadic = false,
      .attrs = {},
      .pattern = OpPattern::kBroadcast,
      .compute = [f, op](const std::vector<Tensor>& in,
                         const Attrs&) { return BroadcastBinary(in[0], in[1], f, op.c_str()); },
      .example_inputs = {F32({2, 3, 4}), F32({3, 1})},
      .example_attrs = {},
  };
}

void RequireBool(const Tensor& t, const char* op) {
  if (!t.dtype().is_bool())
    TT_USER_ERROR("{}: {} is {}, bool expected", op, t.name(), t.dtype().str());
}

// A logical operator on two bool tensors, under broadcasting.
OpDef Logical(std::string name, std::function<Expr(Expr, Expr)> f) {
  std::string op = name;
  OpDef def = Binary(std::move(name), nullptr);
  def.compute = [f, op](const std::vector<Tensor>& in, const Attrs&) {
    RequireBool(in[0], op.c_str());
    RequireBool(in[1], op.c_str());
    return BroadcastBinary(in[0], in[1], f, op.c_str());
  };
  def.example_inputs = {TensorType{{2, 3, 4}, DataType::Bool()},
                        TensorType{{3, 1}, DataType::Bool()}};
  return def;
}

}  // namespace

std::vector<OpDef> ElementwiseOps() {
  std::vector<OpDef> ops;
  ops.push_back(Unary("relu", OpPattern::kElemWise, [](const Tensor& x) { return te::Relu(x); }));
  ops.push_back(
      Unary("sigmoid", OpPattern::kElemWise, [](const Tensor& x) { return te::Sigmoid(x); }));
  ops.push_back(Unary("tanh", OpPattern::kElemWise, [](const Tensor& x) { return te::Tanh(x); }));
  ops.push_back(Unary("exp", OpPattern::kElemWise, [](const Tensor& x) { return te::Exp(x); }));
  ops.push_back(Unary("gelu", OpPattern::kElemWise, [](const Tensor& x) { return te::Gelu(x); }));
  ops.push_back(Unary("erf", OpPattern::kElemWise, [](const Tensor& x) {
    return Map(
        x, [](Expr e) { return Erf(e); }, "T_erf");
  }));
  ops.push_back(Unary("sqrt", OpPattern::kElemWise, [](const Tensor& x) {
    return Map(
        x, [](Expr e) { return Sqrt(e); }, "T_sqrt");
  }));
  ops.push_back(Unary("negative", OpPattern::kElemWise, [](const Tensor& x) {
    // Not `-e`: ir/op.cc's unary minus reads its operand after moving it (reported).
    return Map(
        x, [](Expr e) { return MakeConst(e.dtype(), 0) - e; }, "T_negative");
  }));
  // Activations and math of ONNX, per element (x's type; constants in it).
  auto c = [](const Expr& like, double v) { return MakeConst(like.dtype(), v); };
  auto a = [](const Attrs& attrs, const char* name) { return attrs.GetFloat(name); };
  auto none = std::vector<AttrSpec>{};
  // ONNX's Gelu with approximate = "tanh" (opset 20).
  ops.push_back(Activation("gelu_tanh", none, [c](Expr x, const Attrs&) {
    Expr inner = c(x, 0.7978845608028654) * (x + c(x, 0.044715) * x * x * x);
    return c(x, 0.5) * x * (c(x, 1) + Tanh(inner));
  }));
  ops.push_back(Activation("abs", none, [](Expr x, const Attrs&) { return Fabs(x); }));
  ops.push_back(Activation("log", none, [](Expr x, const Attrs&) { return Log(x); }));
  ops.push_back(Activation("floor", none, [](Expr x, const Attrs&) { return Floor(x); }));
  ops.push_back(Activation("ceil", none, [](Expr x, const Attrs&) { return Ceil(x); }));
  ops.push_back(Activation("round", none, [](Expr x, const Attrs&) { return Round(x); }));
  ops.push_back(Activation("sin", none, [](Expr x, const Attrs&) { return Sin(x); }));
  ops.push_back(Activation("cos", none, [](Expr x, const Attrs&) { return Cos(x); }));
  ops.push_back(Activation("tan", none, [](Expr x, const Attrs&) { return Sin(x) / Cos(x); }));
  ops.push_back(Activation("sign", none, [c](Expr x, const Attrs&) {
    return Select((x > c(x, 0)), c(x, 1), Select((x < c(x, 0)), c(x, -1), c(x, 0)));
  }));
  ops.push_back(
      Activation("softsign", none, [c](Expr x, const Attrs&) { return x / (c(x, 1) + Fabs(x)); }));
  ops.push_back(
      Activation("softplus", none, [c](Expr x, const Attrs&) { return Log(Exp(x) + c(x, 1)); }));
  ops.push_back(Activation("mish", none,
                           [c](Expr x, const Attrs&) { return x * Tanh(Log(Exp(x) + c(x, 1))); }));
  ops.push_back(Activation("hard_swish", none, [c](Expr x, const Attrs&) {
    return x * Max(c(x, 0), Min(c(x, 1), x * c(x, 1.0 / 6) + c(x, 0.5)));
  }));
  ops.push_back(Activation(
      "hard_sigmoid", {FloatAttr("alpha", 0.2), FloatAttr("beta", 0.5)},
      [c, a](Expr x, const Attrs& at) {
        return Max(c(x, 0), Min(c(x, 1), x * c(x, a(at, "alpha")) + c(x, a(at, "beta"))));
      }));
  ops.push_back(
      Activation("leaky_relu", {FloatAttr("alpha", 0.01)}, [c, a](Expr x, const Attrs& at) {
        return Select((x < c(x, 0)), x * c(x, a(at, "alpha")), x);
      }));
  ops.push_back(Activation(
      "thresholded_relu", {FloatAttr("alpha", 1.0)},
      [c, a](Expr x, const Attrs& at) { return Select((x > c(x, a(at, "alpha"))), x, c(x, 0)); }));
  ops.push_back(Activation("elu", {FloatAttr("alpha", 1.0)}, [c, a](Expr x, const Attrs& at) {
    return Select((x < c(x, 0)), c(x, a(at, "alpha")) * (Exp(x) - c(x, 1)), x);
  }));
  ops.push_back(Activation("celu", {FloatAttr("alpha", 1.0)}, [c, a](Expr x, const Attrs& at) {
    Expr alpha = c(x, a(at, "alpha"));
    return Max(c(x, 0), x) + Min(c(x, 0), alpha * (Exp(x / alpha) - c(x, 1)));
  }));
  ops.push_back(Activation("selu",
                           {FloatAttr("alpha", 1.67326319217681884765625),
                            FloatAttr("gamma", 1.05070102214813232421875)},
                           [c, a](Expr x, const Attrs& at) {
                             Expr alpha = c(x, a(at, "alpha")), gamma = c(x, a(at, "gamma"));
                             return gamma * Select((x > c(x, 0)), x, alpha * Exp(x) - alpha);
                           }));

  OpDef clip = Unary("clip", OpPattern::kElemWise, nullptr);
  clip.attrs = {FloatAttr("min", -3.4028234663852886e38), FloatAttr("max", 3.4028234663852886e38)};
  clip.compute = [](const std::vector<Tensor>& in, const Attrs& attrs) {
    return te::Clip(in[0], attrs.GetFloat("min"), attrs.GetFloat("max"));
  };
  clip.example_attrs = {{"min", 0.0}, {"max", 6.0}};
  ops.push_back(clip);

  ops.push_back(Binary("add", [](Expr a, Expr b) { return a + b; }));
  ops.push_back(Binary("subtract", [](Expr a, Expr b) { return a - b; }));
  ops.push_back(Binary("multiply", [](Expr a, Expr b) { return a * b; }));
  // Integer division truncates toward zero, and a division by 0 gives 0 instead of a trap.
  ops.push_back(Binary("divide", [](Expr a, Expr b) {
    if (a.dtype().is_float()) return a / b;
    Expr zero = MakeConst(b.dtype(), 0);
    Expr safe = Select(Eq(b, zero), MakeConst(b.dtype(), 1), b);
    return Select(Eq(b, zero), zero, a / safe);
  }));
  ops.push_back(Binary("maximum", [](Expr a, Expr b) { return Max(a, b); }));
  ops.push_back(Binary("minimum", [](Expr a, Expr b) { return Min(a, b); }));

  ops.push_back(Binary("power", [](Expr a, Expr b) { return Pow(a, b); }));
  // Comparisons (ONNX's Equal, Less, ...): a bool per element of the broadcast.
  ops.push_back(Binary("equal", [](Expr a, Expr b) { return Eq(a, b); }));
  ops.push_back(Binary("less", [](Expr a, Expr b) { return a < b; }));
  ops.push_back(Binary("less_equal", [](Expr a, Expr b) { return a <= b; }));
  ops.push_back(Binary("greater", [](Expr a, Expr b) { return a > b; }));
  ops.push_back(Binary("greater_equal", [](Expr a, Expr b) { return a >= b; }));
  // Logic on bool tensors (ONNX's And, Or, Xor, Not).
  ops.push_back(Logical("logical_and", [](Expr a, Expr b) { return a && b; }));
  ops.push_back(Logical("logical_or", [](Expr a, Expr b) { return a || b; }));
  ops.push_back(Logical("logical_xor", [](Expr a, Expr b) { return Ne(a, b); }));
  OpDef logical_not = Unary("logical_not", OpPattern::kElemWise, [](const Tensor& x) {
    RequireBool(x, "logical_not");
    return Map(
        x, [](Expr e) { return !e; }, "T_logical_not");
  });
  logical_not.example_inputs = {TensorType{{2, 3}, DataType::Bool()}};
  ops.push_back(logical_not);
  // ONNX's Mod: with fmod the remainder of truncated division (C's fmod), else of floored
  // division (the divisor's sign, Python's %). An integer remainder by 0 is 0, not a trap.
  OpDef mod = Binary("mod", nullptr);
  mod.attrs = {IntAttr("fmod", 0)};
  mod.compute = [](const std::vector<Tensor>& in, const Attrs& attrs) {
    bool truncated = attrs.GetInt("fmod") != 0;
    return BroadcastBinary(
        in[0], in[1],
        [truncated](Expr a, Expr b) {
          if (a.dtype().is_float()) {
            Expr q = a / b;
            return a - (truncated ? Select(q < MakeConst(q.dtype(), 0), Ceil(q), Floor(q))
                                  : Floor(q)) * b;
          }
          Expr zero = MakeConst(b.dtype(), 0);
          Expr safe = Select(Eq(b, zero), MakeConst(b.dtype(), 1), b);
          Expr r = truncated ? a - (a / safe) * safe : FloorMod(a, safe);
          return Select(Eq(b, zero), zero, r);
        },
        "mod");
  };
  mod.example_attrs = {{"fmod", 1}};
  ops.push_back(mod);
  ops.push_back(OpDef{
      .name = "where",
      .inputs = {"condition", "lhs", "rhs"},
      .variadic = false,
      .attrs = {},
      .pattern = OpPattern::kBroadcast,
      .compute = [](const std::vector<Tensor>& in,
                    const Attrs&) { return Where(in[0], in[1], in[2]); },
      .example_inputs = {TensorType{{3, 1}, DataType::Bool()}, F32({2, 3, 4}), F32({4})},
      .example_attrs = {},
  });
  // cast: every element converted to `dtype` (any scalar number type or bool; float to integer
  // truncates toward zero and saturates, NaN gives 0; nonzero is true): a mask or position input
  // made float for the arithmetic after it, a float16 model input widened, a bool mask.
  ops.push_back(OpDef{
      .name = "cast",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {AttrSpec{"dtype", AttrType::kString, true, std::string()}},
      .pattern = OpPattern::kElemWise,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            const std::string& name = attrs.GetString("dtype");
            std::optional<DataType> to = DataType::Parse(name);
            if (!to || !IsTensorElementType(*to)) {
              TT_USER_ERROR("cast: to '{}' (a scalar number or bool type expected)", name);
            }
            return Map(
                in[0], [&](Expr e) { return Cast(*to, e); }, "T_cast");
          },
      .example_inputs = {TensorType{{2, 3}, DataType::Int(64)}},
      .example_attrs = {{"dtype", std::string("float32")}},
  });
  ops.push_back(OpDef{
      .name = "broadcast_to",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {RequiredIntsAttr("shape")},
      .pattern = OpPattern::kBroadcast,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            const Tensor& x = in[0];
            std::vector<int64_t> shape = BroadcastWith(attrs.GetInts("shape"), x, "broadcast_to");
            return te::Compute(
                std::vector<Expr>(shape.begin(), shape.end()),
                [&](const std::vector<Var>& v) { return x(BroadcastIndices(x, v, shape)); },
                "T_broadcast_to");
          },
      .example_inputs = {F32({3, 1})},
      .example_attrs = {{"shape", Ints{2, 3, 4}}},
  });
  ops.push_back(OpDef{
      .name = "bias_add",
      .inputs = {"data", "bias"},
      .variadic = false,
      .attrs = {},
      .pattern = OpPattern::kBroadcast,
      .compute = [](const std::vector<Tensor>& in,
                    const Attrs&) { return te::BiasAdd(in[0], in[1]); },
      .example_inputs = {F32({1, 3, 4, 5}), F32({5})},
      .example_attrs = {},
  });
  ops.push_back(OpDef{
      .name = "batch_norm",
      .inputs = {"data", "gamma", "beta", "moving_mean", "moving_var"},
      .variadic = false,
      .attrs = {FloatAttr("epsilon", 1e-5)},
      .pattern = OpPattern::kBroadcast,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            return te::BatchNormInference(in[0], in[1], in[2], in[3], in[4],
                                          attrs.GetFloat("epsilon"));
          },
      .example_inputs = {F32({1, 3, 4, 5}), F32({5}), F32({5}), F32({5}), F32({5})},
      .example_attrs = {},
  });
  return ops;
}

}  // namespace tirtune::graph
