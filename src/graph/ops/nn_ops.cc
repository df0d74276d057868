// Operators with reductions: convolution, matrix products, pooling, softmax and layer norm, all
// through the te operator library (NHWC activations, [KH, KW, CI / groups, CO] conv weights).
#include <functional>

#include "op_families.h"
#include "tirtune/support/error.h"
#include "tirtune/te/convolution.h"
#include "tirtune/te/layout.h"
#include "tirtune/te/linear_algebra.h"
#include "tirtune/te/normalization.h"
#include "tirtune/te/pooling.h"

namespace tirtune::graph {
namespace {

using te::Tensor;

// Applies `rows` (softmax or layer norm of the library, which normalize the rows of a matrix)
// along the last axis of `x` of any rank: the leading axes are folded into rows and unfolded
// afterwards. Only the last axis is supported.
Tensor AlongLastAxis(const Tensor& x, const Attrs& attrs, const char* op,
                     const std::function<Tensor(const Tensor&)>& rows) {
  if (x.ndim() < 1) TT_USER_ERROR("{}: {} is a scalar", op, x.name());
  if (NormalizeAxis(attrs.GetInt("axis"), x.ndim(), op) != x.ndim() - 1) {
    TT_USER_ERROR("{}: only the last axis is supported", op);
  }
  if (x.ndim() == 2) return rows(x);
  std::vector<int64_t> shape;
  int64_t outer = 1;
  for (int d = 0; d < x.ndim(); ++d) {
    shape.push_back(x.dim(d));
    if (d + 1 < x.ndim()) outer *= x.dim(d);
  }
  Tensor matrix = te::Reshape(x, {outer, x.dim(x.ndim() - 1)}, std::string(op) + "_rows");
  return te::Reshape(rows(matrix), shape, std::string("T_") + op);
}

te::ConvParams ConvParamsOf(const Attrs& attrs) {
  return te::ConvParams{.stride = attrs.GetInt("stride"),
                        .pad = attrs.GetInt("pad"),
                        .dilation = attrs.GetInt("dilation"),
                        .groups = attrs.GetInt("groups")};
}

OpDef Pool(std::string name,
           Tensor (*pool)(const Tensor&, int64_t, int64_t, int64_t, std::string)) {
  return OpDef{
      .name = std::move(name),
      .inputs = {"data"},
      .variadic = false,
      .attrs = {AttrSpec{"kernel", AttrType::kInt, true, int64_t{1}}, IntAttr("stride", 1),
                IntAttr("pad", 0)},
      .pattern = OpPattern::kCommReduce,
      .compute =
          [pool](const std::vector<Tensor>& in, const Attrs& attrs) {
            return pool(in[0], attrs.GetInt("kernel"), attrs.GetInt("stride"), attrs.GetInt("pad"),
                        "pool");
          },
      .example_inputs = {F32({1, 6, 7, 3})},
      .example_attrs = {{"kernel", 3}, {"stride", 2}, {"pad", 1}},
  };
}

OpDef MatrixProduct(std::string name, Tensor (*product)(const Tensor&, const Tensor&, std::string),
                    std::vector<std::string> inputs, std::vector<TensorType> example) {
  std::string out = "T_" + name;
  return OpDef{
      .name = std::move(name),
      .inputs = std::move(inputs),
      .variadic = false,
      .attrs = {},
      .pattern = OpPattern::kOutEWiseFusable,
      .compute = [product, out](const std::vector<Tensor>& in,
                                const Attrs&) { return product(in[0], in[1], out); },
      .example_inputs = std::move(example),
      .example_attrs = {},
  };
}

}  // namespace

std::vector<OpDef> NnOps() {
  std::vector<OpDef> ops;
  ops.push_back(OpDef{
      .name = "conv2d",
      .inputs = {"data", "weight"},
      .variadic = false,
      .attrs = {IntAttr("stride", 1), IntAttr("pad", 0), IntAttr("dilation", 1),
                IntAttr("groups", 1)},
      .pattern = OpPattern::kOutEWiseFusable,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            return te::Conv2dNHWC(in[0], in[1], ConvParamsOf(attrs));
          },
      .example_inputs = {F32({1, 6, 6, 4}), F32({3, 3, 2, 6})},
      .example_attrs = {{"pad", 1}, {"groups", 2}},
  });
  // conv1d (NLC, weight [K, CI / groups, CO]) and conv3d (NDHWC, weight [KD, KH, KW, CI / groups,
  // CO]) take the attributes of conv2d.
  const OpDef conv2d = ops.back();
  OpDef conv1d = conv2d;
  conv1d.name = "conv1d";
  conv1d.compute = [](const std::vector<Tensor>& in, const Attrs& attrs) {
    return te::Conv1dNLC(in[0], in[1], ConvParamsOf(attrs));
  };
  conv1d.example_inputs = {F32({1, 7, 4}), F32({3, 2, 6})};
  ops.push_back(conv1d);
  OpDef conv3d = conv2d;
  conv3d.name = "conv3d";
  conv3d.compute = [](const std::vector<Tensor>& in, const Attrs& attrs) {
    return te::Conv3dNDHWC(in[0], in[1], ConvParamsOf(attrs));
  };
  conv3d.example_inputs = {F32({1, 4, 4, 4, 2}), F32({3, 3, 3, 1, 4})};
  ops.push_back(conv3d);
  ops.push_back(OpDef{
      .name = "conv2d_transpose",
      .inputs = {"data", "weight"},
      .variadic = false,
      .attrs = {IntAttr("stride", 1), IntAttr("pad", 0)},
      .pattern = OpPattern::kOutEWiseFusable,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            return te::Conv2dTransposeNHWC(in[0], in[1], attrs.GetInt("stride"),
                                           attrs.GetInt("pad"));
          },
      .example_inputs = {F32({1, 3, 4, 2}), F32({3, 3, 2, 3})},
      .example_attrs = {{"stride", 2}, {"pad", 1}},
  });
  ops.push_back(MatrixProduct("dense", te::Dense, {"data", "weight"}, {F32({3, 5}), F32({4, 5})}));
  ops.push_back(MatrixProduct("matmul", te::Matmul, {"lhs", "rhs"}, {F32({3, 5}), F32({5, 4})}));
  ops.push_back(MatrixProduct("batch_matmul", te::BatchMatmul, {"lhs", "rhs"},
                              {F32({2, 3, 5}), F32({2, 5, 4})}));
  ops.push_back(Pool("max_pool2d", te::MaxPool2dNHWC));
  ops.push_back(Pool("avg_pool2d", te::AvgPool2dNHWC));
  ops.push_back(OpDef{
      .name = "global_avg_pool2d",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {},
      .pattern = OpPattern::kCommReduce,
      .compute = [](const std::vector<Tensor>& in,
                    const Attrs&) { return te::GlobalAvgPool2dNHWC(in[0]); },
      .example_inputs = {F32({1, 4, 5, 3})},
      .example_attrs = {},
  });
  ops.push_back(OpDef{
      .name = "softmax",
      .inputs = {"data"},
      .variadic = false,
      .attrs = {IntAttr("axis", -1)},
      .pattern = OpPattern::kCommReduce,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            return AlongLastAxis(in[0], attrs, "softmax",
                                 [](const Tensor& rows) { return te::Softmax(rows); });
          },
      .example_inputs = {F32({2, 3, 7})},
      .example_attrs = {},
  });
  ops.push_back(OpDef{
      .name = "layer_norm",
      .inputs = {"data", "gamma", "beta"},
      .variadic = false,
      .attrs = {IntAttr("axis", -1), FloatAttr("epsilon", 1e-5)},
      .pattern = OpPattern::kCommReduce,
      .compute =
          [](const std::vector<Tensor>& in, const Attrs& attrs) {
            double epsilon = attrs.GetFloat("epsilon");
            return AlongLastAxis(in[0], attrs, "layer_norm", [&](const Tensor& rows) {
              return te::LayerNorm(rows, in[1], in[2], epsilon);
            });
          },
      .example_inputs = {F32({3, 7}), F32({7}), F32({7})},
      .example_attrs = {},
  });
  return ops;
}

}  // namespace tirtune::graph
