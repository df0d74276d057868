// Resize and Upsample: every coordinate mode and interpolation of ONNX's reference, as gathers
// of precomputed taps (the coordinates are computed here, in double precision, since shapes are
// static) weighted by constant coefficients.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "converters.h"

namespace tirtune::graph::onnx_import {

namespace {

// One axis of a Resize: for every output position, the input indices it reads (`taps` of them,
// clamped into the axis as ONNX's edge padding does) and their weights.
struct AxisResample {
  std::vector<std::vector<int64_t>> index;  // [tap][output position]
  std::vector<std::vector<double>> weight;  // [tap][output position]
};

// The coordinates and coefficients of ONNX's Resize reference, computed in double precision
// here, where the shapes are static.
// The cubic convolution kernel of coefficient `a` at distance `x`.
double CubicKernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

AxisResample ResampleAxis(ImportContext& ctx, int64_t in, int64_t out, double scale,
                          const std::string& mode, const std::string& transform,
                          const std::string& nearest, double cubic_a, bool exclude_outside,
                          bool antialias) {
  // Antialiasing (linear and cubic, when shrinking) stretches the kernel by 1 / scale: taps at
  // offsets first .. 1 - first around the left neighbour, weights normalized to sum to 1.
  bool stretched = antialias && mode != "nearest" && scale < 1;
  int64_t first = mode == "linear" ? 0 : -1;
  if (stretched) {
    first = static_cast<int64_t>(std::floor((mode == "linear" ? -1.0 : -2.0) / scale)) + 1;
  }
  int64_t taps = mode == "nearest" ? 1 : 2 - 2 * first;
  AxisResample r;
  r.index.assign(taps, std::vector<int64_t>(out));
  r.weight.assign(taps, std::vector<double>(out));
  double out_width = scale * static_cast<double>(in);
  for (int64_t o = 0; o < out; ++o) {
    double x = static_cast<double>(o), src = 0;
    if (transform == "half_pixel") {
      src = (x + 0.5) / scale - 0.5;
    } else if (transform == "half_pixel_symmetric") {  // opset 19: centred on the input
      double adjustment = static_cast<double>(out) / out_width;
      double center = static_cast<double>(in) / 2;
      src = center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    } else if (transform == "pytorch_half_pixel") {
      src = out_width > 1 ? (x + 0.5) / scale - 0.5 : -0.5;
    } else if (transform == "align_corners") {
      src = out_width == 1 ? 0 : x * static_cast<double>(in - 1) / (out_width - 1);
    } else if (transform == "asymmetric") {
      src = x / scale;
    } else if (transform == "tf_half_pixel_for_nn") {
      src = (x + 0.5) / scale;
    } else {
      ctx.Fail("coordinate_transformation_mode '{}' is not supported", transform);
    }
    double floor = std::floor(src);
    double ratio = src == floor ? 1.0 : src - floor;  // (0, 1]: the left neighbour preferred
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    int64_t f = static_cast<int64_t>(floor);
    if (mode == "nearest") {
      bool up = false;
      if (ratio == 1.0) {
        up = true;  // an integer coordinate: itself (the right of its two neighbours)
      } else if (nearest == "round_prefer_floor") {
        up = ratio > 0.5;
      } else if (nearest == "round_prefer_ceil") {
        up = ratio >= 0.5;
      } else if (nearest == "ceil") {
        up = true;
      } else if (nearest != "floor") {
        ctx.Fail("nearest_mode '{}' is not supported", nearest);
      }
      // The two neighbours are floor(src) and floor(src) + 1, or src - 1 and src for an
      // integer src.
      int64_t left = ratio == 1.0 ? f - 1 : f;
      r.index[0][o] = clamp(up ? left + 1 : left);
      r.weight[0][o] = 1;
    } else if (stretched) {
      int64_t left = ratio == 1.0 ? f - 1 : f;
      std::vector<double> c(static_cast<size_t>(taps));
      double sum = 0;
      for (int64_t k = 0; k < taps; ++k) {
        double d = scale * static_cast<double>(first + k - ratio);
        c[k] = mode == "linear" ? std::max(0.0, 1 - std::fabs(d)) : CubicKernel(d, cubic_a);
        sum += c[k];
      }
      double kept = 0;
      for (int64_t k = 0; k < taps; ++k) {
        c[k] /= sum;
        int64_t at = left + first + k;
        if (exclude_outside && (at < 0 || at >= in)) c[k] = 0;
        kept += c[k];
      }
      for (int64_t k = 0; k < taps; ++k) {
        r.index[k][o] = clamp(left + first + k);
        r.weight[k][o] = exclude_outside && kept != 0 ? c[k] / kept : c[k];
      }
    } else if (mode == "linear") {
      int64_t left = ratio == 1.0 ? f - 1 : f;
      r.index[0][o] = clamp(left);
      r.index[1][o] = clamp(left + 1);
      r.weight[0][o] = 1 - ratio;
      r.weight[1][o] = ratio;
    } else {
      double a = cubic_a, t = ratio;
      double c[4] = {((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
                     ((a + 2) * t - (a + 3)) * t * t + 1,
                     ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                     ((a * ((1 - t) + 1) - 5 * a) * ((1 - t) + 1) + 8 * a) * ((1 - t) + 1) - 4 * a};
      int64_t left = ratio == 1.0 ? f - 1 : f;
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        int64_t at = left - 1 + k;
        if (exclude_outside && (at < 0 || at >= in)) c[k] = 0;
        sum += c[k];
      }
      for (int k = 0; k < 4; ++k) {
        r.index[k][o] = clamp(left - 1 + k);
        r.weight[k][o] = exclude_outside && sum != 0 ? c[k] / sum : c[k];
      }
    }
  }
  return r;
}

}  // namespace

// Resize (opset 10 on) and Upsample: per resized axis, the output reads input positions through
// `take` with index arrays computed here (nearest: one; linear: two; cubic: four, weighted and
// summed), axis after axis, which is ONNX's separable interpolation. The scales or sizes must be
// known at import time (sizes with keep_aspect_ratio_policy not_larger / not_smaller: one scale,
// the sizes as bounds); antialias stretches the linear and cubic kernels when shrinking;
// tf_crop_and_resize is refused.
void ConvertResize(ImportContext& ctx) {
  ctx.RequireFloat(0);
  const std::vector<int64_t>& in = ctx.Input(0).shape;
  int rank = static_cast<int>(in.size());
  bool upsample = ctx.node().op_type() == "Upsample";
  std::string mode = ctx.AttrString("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") {
    ctx.Fail("mode '{}' (nearest, linear or cubic expected)", mode);
  }
  std::string transform = upsample || ctx.opset() < 11
                              ? std::string("asymmetric")
                              : ctx.AttrString("coordinate_transformation_mode", "half_pixel");
  if (transform == "tf_crop_and_resize") ctx.Fail("tf_crop_and_resize is not supported");
  std::string policy = ctx.AttrString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    ctx.Fail("keep_aspect_ratio_policy '{}' (stretch, not_larger or not_smaller expected)", policy);
  }
  std::vector<int64_t> axes = ctx.AttrInts("axes", {});
  if (axes.empty()) {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) ctx.Fail("axis {} out of range for rank {}", a, rank);
    if (a < 0) a += rank;
  }
  // Scales (input 1 for Upsample and opset 10, else 2) or sizes (input 3).
  int scales_input = upsample || ctx.opset() < 11 ? 1 : 2;
  std::vector<double> scale(rank, 1.0);
  std::vector<int64_t> out = in;
  bool have_sizes = !upsample && ctx.opset() >= 11 && ctx.HasInput(3);
  if (have_sizes) {
    std::vector<int64_t> sizes = HostInts(ctx.HostInput(3, "sizes"));
    if (sizes.size() != axes.size()) ctx.Fail("{} sizes for {} axes", sizes.size(), axes.size());
    for (size_t k = 0; k < axes.size(); ++k) {
      if (sizes[k] < 1) ctx.Fail("size {} (at least 1 expected)", sizes[k]);
      out[axes[k]] = sizes[k];
      scale[axes[k]] = static_cast<double>(sizes[k]) / static_cast<double>(in[axes[k]]);
    }
    if (policy != "stretch") {  // one scale for every axis: the sizes are bounds
      double one = scale[axes[0]];
      for (int64_t a : axes)
        one = policy == "not_larger" ? std::min(one, scale[a]) : std::max(one, scale[a]);
      for (int64_t a : axes) {
        scale[a] = one;
        out[a] = static_cast<int64_t>(std::nearbyint(one * static_cast<double>(in[a])));
        if (out[a] < 1) ctx.Fail("axis {} would be empty", a);
      }
    }
  } else {
    const NDArray& given = ctx.HostInput(scales_input, "scales");
    if (given.size() != static_cast<int64_t>(axes.size())) {
      ctx.Fail("{} scales for {} axes", given.size(), axes.size());
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      double s = given.GetDouble(static_cast<int64_t>(k));
      if (!(s > 0)) ctx.Fail("scale {} (positive expected)", s);
      scale[axes[k]] = s;
      out[axes[k]] = static_cast<int64_t>(std::floor(static_cast<double>(in[axes[k]]) * s));
      if (out[axes[k]] < 1) ctx.Fail("axis {} would be empty", axes[k]);
    }
  }
  ctx.CheckHostShape(out);
  // Upsample and Resize-10 take the floor (their asymmetric coordinates, the index below).
  std::string nearest = upsample || ctx.opset() < 11
                            ? std::string("floor")
                            : ctx.AttrString("nearest_mode", "round_prefer_floor");
  double cubic_a = ctx.AttrFloat("cubic_coeff_a", -0.75f);
  bool exclude = ctx.AttrInt("exclude_outside", 0) != 0;
  ValueId y = ctx.Plain(0);
  std::vector<int64_t> shape = in;
  for (int d = 0; d < rank; ++d) {
    if (out[d] == in[d] && scale[d] == 1.0) continue;
    AxisResample r = ResampleAxis(ctx, in[d], out[d], scale[d], mode, transform, nearest, cubic_a,
                                  exclude, ctx.AttrInt("antialias", 0) != 0);
    shape[d] = out[d];
    Ints along(rank, 1);
    along[d] = out[d];
    ValueId sum = -1;
    for (size_t t = 0; t < r.index.size(); ++t) {
      ValueId taken = ctx.Emit("take", {y, ctx.Constant(MakeInts(r.index[t]))}, {{"axis", d}});
      if (mode != "nearest") {
        NDArray w = NDArray::Empty(along, DataType::Float(32));
        for (int64_t o = 0; o < out[d]; ++o) w.SetDouble(o, r.weight[t][o]);
        taken = ctx.Emit("multiply", {taken, ctx.Constant(w)});
      }
      sum = sum < 0 ? taken : ctx.Emit("add", {sum, taken});
    }
    y = sum;
  }
  if (shape == in) {
    ctx.Alias(0, 0);
    return;
  }
  ctx.SetPlain(0, y);
}

}  // namespace tirtune::graph::onnx_import
