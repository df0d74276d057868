// Every workload of the operator library, run by the reference interpreter at its small shape (and
// the convolutions at extra stride/pad/dilation/groups combinations), matches an independent plain
// C++ loop nest written here from the operator's textbook definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include "tirtune/interp/interpreter.h"
#include "tirtune/ir/expr.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

// Row-major read access to an input array, possibly viewed under another shape of the same size.
struct In {
  const NDArray* array;
  std::vector<int64_t> shape;
  explicit In(const NDArray* a) : array(a), shape(a->shape()) {}
  In(const In& other, std::vector<int64_t> view) : array(other.array), shape(std::move(view)) {}
  double operator()(std::initializer_list<int64_t> index) const {
    EXPECT_EQ(index.size(), shape.size());
    int64_t flat = 0;
    size_t d = 0;
    for (int64_t i : index) flat = flat * shape[d++] + i;
    return array->GetDouble(flat);
  }
};

// The expected output: a dense row-major array of doubles.
struct Out {
  std::vector<int64_t> shape;
  std::vector<double> data;
  explicit Out(std::vector<int64_t> s) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    data.assign(n, 0.0);
  }
  double& operator()(std::initializer_list<int64_t> index) {
    int64_t flat = 0;
    size_t d = 0;
    for (int64_t i : index) flat = flat * shape[d++] + i;
    return data[flat];
  }
};

// args are the spec's arguments with the optional ones filled in; `in` the input arrays.
using Reference = std::function<Out(const std::vector<int64_t>& args, const std::vector<In>& in)>;

int64_t OutExtent(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

// Grouped, dilated 3-d convolution, data [N, D, H, W, CI], weight [KD, KH, KW, CI/g, CO];
// conv1d and conv2d are the cases with unit leading spatial dimensions.
Out Conv3dReference(const In& data, const In& weight, int64_t n, const int64_t (&in)[3],
                    const int64_t (&k)[3], int64_t ci, int64_t co, const int64_t (&stride)[3],
                    const int64_t (&pad)[3], int64_t dilation, int64_t groups) {
  int64_t o[3];
  for (int i = 0; i < 3; ++i) o[i] = OutExtent(in[i], k[i], stride[i], pad[i], dilation);
  Out out({n, o[0], o[1], o[2], co});
  int64_t gi = ci / groups, go = co / groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t z = 0; z < o[0]; ++z)
      for (int64_t y = 0; y < o[1]; ++y)
        for (int64_t x = 0; x < o[2]; ++x)
          for (int64_t f = 0; f < co; ++f) {
            double acc = 0;
            for (int64_t kz = 0; kz < k[0]; ++kz)
              for (int64_t ky = 0; ky < k[1]; ++ky)
                for (int64_t kx = 0; kx < k[2]; ++kx)
                  for (int64_t c = 0; c < gi; ++c) {
                    int64_t iz = z * stride[0] + kz * dilation - pad[0];
                    int64_t iy = y * stride[1] + ky * dilation - pad[1];
                    int64_t ix = x * stride[2] + kx * dilation - pad[2];
                    if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2]) {
                      continue;
                    }
                    acc += data({b, iz, iy, ix, f / go * gi + c}) * weight({kz, ky, kx, c, f});
                  }
            out({b, z, y, x, f}) = acc;
          }
  return out;
}

// Reshapes the output of Conv3dReference (only the shape changes).
Out WithShape(Out out, std::vector<int64_t> shape) {
  out.shape = std::move(shape);
  return out;
}

double Gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

Out Elementwise(const std::vector<int64_t>& s, const std::function<double(int64_t)>& f) {
  Out out({s[0], s[1], s[2], s[3]});
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = f(static_cast<int64_t>(i));
  return out;
}

// A flat view of an input for element-wise references.
double Flat(const In& x, int64_t i) { return x.array->GetDouble(i); }

std::map<std::string, Reference> References() {
  std::map<std::string, Reference> refs;
  refs["gemm"] = [](const auto& s, const auto& in) {
    Out c({s[0], s[1]});
    for (int64_t i = 0; i < s[0]; ++i)
      for (int64_t j = 0; j < s[1]; ++j)
        for (int64_t k = 0; k < s[2]; ++k) c({i, j}) += in[0]({i, k}) * in[1]({k, j});
    return c;
  };
  refs["batch_matmul"] = [](const auto& s, const auto& in) {
    Out c({s[0], s[1], s[2]});
    for (int64_t b = 0; b < s[0]; ++b)
      for (int64_t i = 0; i < s[1]; ++i)
        for (int64_t j = 0; j < s[2]; ++j)
          for (int64_t k = 0; k < s[3]; ++k) c({b, i, j}) += in[0]({b, i, k}) * in[1]({b, k, j});
    return c;
  };
  refs["dense"] = [](const auto& s, const auto& in) {
    Out c({s[0], s[1]});
    for (int64_t i = 0; i < s[0]; ++i)
      for (int64_t j = 0; j < s[1]; ++j)
        for (int64_t k = 0; k < s[2]; ++k) c({i, j}) += in[0]({i, k}) * in[1]({j, k});
    return c;
  };
  // conv1d: N, L, CI, CO, kernel, stride, pad, dilation, groups.
  refs["conv1d"] = [](const auto& s, const auto& in) {
    In data(in[0], {s[0], 1, 1, s[1], s[2]});
    In weight(in[1], {1, 1, s[4], s[2] / s[8], s[3]});
    Out o = Conv3dReference(data, weight, s[0], {1, 1, s[1]}, {1, 1, s[4]}, s[2], s[3],
                            {1, 1, s[5]}, {0, 0, s[6]}, s[7], s[8]);
    return WithShape(o, {s[0], o.shape[3], s[3]});
  };
  // conv2d: N, H, W, CI, CO, kernel, stride, pad, dilation, groups.
  refs["conv2d"] = [](const auto& s, const auto& in) {
    In data(in[0], {s[0], 1, s[1], s[2], s[3]});
    In weight(in[1], {1, s[5], s[5], s[3] / s[9], s[4]});
    Out o = Conv3dReference(data, weight, s[0], {1, s[1], s[2]}, {1, s[5], s[5]}, s[3], s[4],
                            {1, s[6], s[6]}, {0, s[7], s[7]}, s[8], s[9]);
    return WithShape(o, {s[0], o.shape[2], o.shape[3], s[4]});
  };
  // conv3d: N, D, H, W, CI, CO, kernel, stride, pad, dilation, groups.
  refs["conv3d"] = [](const auto& s, const auto& in) {
    return Conv3dReference(in[0], in[1], s[0], {s[1], s[2], s[3]}, {s[6], s[6], s[6]}, s[4], s[5],
                           {s[7], s[7], s[7]}, {s[8], s[8], s[8]}, s[9], s[10]);
  };
  // depthwise_conv2d: N, H, W, C, kernel, stride, pad, dilation.
  refs["depthwise_conv2d"] = [](const auto& s, const auto& in) {
    int64_t oh = OutExtent(s[1], s[4], s[5], s[6], s[7]);
    int64_t ow = OutExtent(s[2], s[4], s[5], s[6], s[7]);
    Out out({s[0], oh, ow, s[3]});
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t h = 0; h < oh; ++h)
        for (int64_t w = 0; w < ow; ++w)
          for (int64_t c = 0; c < s[3]; ++c)
            for (int64_t kh = 0; kh < s[4]; ++kh)
              for (int64_t kw = 0; kw < s[4]; ++kw) {
                int64_t ih = h * s[5] + kh * s[7] - s[6], iw = w * s[5] + kw * s[7] - s[6];
                if (ih < 0 || ih >= s[1] || iw < 0 || iw >= s[2]) continue;
                out({n, h, w, c}) += in[0]({n, ih, iw, c}) * in[1]({kh, kw, c});
              }
    return out;
  };
  // conv2d_transpose: N, H, W, CI, CO, kernel, stride, pad. Written as the scatter each input
  // element does into the output, not as the gather the compute does.
  refs["conv2d_transpose"] = [](const auto& s, const auto& in) {
    int64_t k = s[5], st = s[6], p = s[7];
    int64_t oh = (s[1] - 1) * st - 2 * p + k, ow = (s[2] - 1) * st - 2 * p + k;
    Out out({s[0], oh, ow, s[4]});
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t ih = 0; ih < s[1]; ++ih)
        for (int64_t iw = 0; iw < s[2]; ++iw)
          for (int64_t ci = 0; ci < s[3]; ++ci)
            for (int64_t kh = 0; kh < k; ++kh)
              for (int64_t kw = 0; kw < k; ++kw)
                for (int64_t co = 0; co < s[4]; ++co) {
                  int64_t h = ih * st + kh - p, w = iw * st + kw - p;
                  if (h < 0 || h >= oh || w < 0 || w >= ow) continue;
                  out({n, h, w, co}) += in[0]({n, ih, iw, ci}) * in[1]({kh, kw, ci, co});
                }
    return out;
  };
  // capsule_conv2d: N, H, W, CI, CO, kernel, stride, pad; 4x4 capsules.
  refs["capsule_conv2d"] = [](const auto& s, const auto& in) {
    int64_t k = s[5], st = s[6], p = s[7];
    int64_t oh = OutExtent(s[1], k, st, p, 1), ow = OutExtent(s[2], k, st, p, 1);
    Out out({s[0], oh, ow, 4, 4, s[4]});
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t h = 0; h < oh; ++h)
        for (int64_t w = 0; w < ow; ++w)
          for (int64_t i = 0; i < 4; ++i)
            for (int64_t j = 0; j < 4; ++j)
              for (int64_t co = 0; co < s[4]; ++co)
                for (int64_t kh = 0; kh < k; ++kh)
                  for (int64_t kw = 0; kw < k; ++kw)
                    for (int64_t m = 0; m < 4; ++m)
                      for (int64_t ci = 0; ci < s[3]; ++ci) {
                        int64_t ih = h * st + kh - p, iw = w * st + kw - p;
                        if (ih < 0 || ih >= s[1] || iw < 0 || iw >= s[2]) continue;
                        out({n, h, w, i, j, co}) +=
                            in[0]({n, ih, iw, i, m, ci}) * in[1]({kh, kw, m, j, ci, co});
                      }
    return out;
  };
  refs["norm"] = [](const auto& s, const auto& in) {
    Out d({s[0]});
    for (int64_t b = 0; b < s[0]; ++b) {
      double sum = 0;
      for (int64_t i = 0; i < s[1]; ++i)
        for (int64_t j = 0; j < s[2]; ++j) sum += in[0]({b, i, j}) * in[0]({b, i, j});
      d({b}) = std::sqrt(sum);
    }
    return d;
  };
  refs["softmax"] = [](const auto& s, const auto& in) {
    Out out({s[0], s[1]});
    for (int64_t i = 0; i < s[0]; ++i) {
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < s[1]; ++j) mx = std::max(mx, in[0]({i, j}));
      for (int64_t j = 0; j < s[1]; ++j) sum += std::exp(in[0]({i, j}) - mx);
      for (int64_t j = 0; j < s[1]; ++j) out({i, j}) = std::exp(in[0]({i, j}) - mx) / sum;
    }
    return out;
  };
  // cbr: N, H, W, CI, CO, kernel, stride, pad; inputs data, kernel, bias, bn_scale, bn_offset.
  refs["cbr"] = [](const auto& s, const auto& in) {
    In data(in[0], {s[0], 1, s[1], s[2], s[3]});
    In weight(in[1], {1, s[5], s[5], s[3], s[4]});
    Out o = Conv3dReference(data, weight, s[0], {1, s[1], s[2]}, {1, s[5], s[5]}, s[3], s[4],
                            {1, s[6], s[6]}, {0, s[7], s[7]}, 1, 1);
    Out out = WithShape(o, {s[0], o.shape[2], o.shape[3], s[4]});
    for (size_t i = 0; i < out.data.size(); ++i) {
      int64_t c = static_cast<int64_t>(i) % s[4];
      double v = (out.data[i] + in[2]({c})) * in[3]({c}) + in[4]({c});
      out.data[i] = std::max(v, 0.0);
    }
    return out;
  };
  // tbg: batch, seq, heads, dim; out[b, h, i, j] = sum_d query[b, i, h, d] * value[b, j, h, d].
  refs["tbg"] = [](const auto& s, const auto& in) {
    Out out({s[0], s[2], s[1], s[1]});
    for (int64_t b = 0; b < s[0]; ++b)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t i = 0; i < s[1]; ++i)
          for (int64_t j = 0; j < s[1]; ++j)
            for (int64_t d = 0; d < s[3]; ++d)
              out({b, h, i, j}) += in[0]({b, i, h, d}) * in[1]({b, j, h, d});
    return out;
  };
  refs["mbg"] = [](const auto& s, const auto& in) {
    Out out({s[0], s[1]});
    for (int64_t i = 0; i < s[0]; ++i)
      for (int64_t j = 0; j < s[1]; ++j) {
        double acc = in[2]({j});
        for (int64_t k = 0; k < s[2]; ++k) acc += in[0]({i, k}) * in[1]({k, j});
        out({i, j}) = Gelu(acc);
      }
    return out;
  };
  // batch_norm inputs: data, gamma, beta, moving_mean, moving_var.
  refs["batch_norm"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) {
      int64_t c = i % s[3];
      return (Flat(in[0], i) - in[3]({c})) / std::sqrt(in[4]({c}) + 1e-5) * in[1]({c}) + in[2]({c});
    });
  };
  refs["layer_norm"] = [](const auto& s, const auto& in) {
    Out out({s[0], s[1]});
    for (int64_t i = 0; i < s[0]; ++i) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < s[1]; ++j) mean += in[0]({i, j}) / s[1];
      for (int64_t j = 0; j < s[1]; ++j) var += std::pow(in[0]({i, j}) - mean, 2) / s[1];
      for (int64_t j = 0; j < s[1]; ++j) {
        out({i, j}) = (in[0]({i, j}) - mean) / std::sqrt(var + 1e-5) * in[1]({j}) + in[2]({j});
      }
    }
    return out;
  };
  refs["add"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) { return Flat(in[0], i) + Flat(in[1], i); });
  };
  refs["mul"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) { return Flat(in[0], i) * Flat(in[1], i); });
  };
  refs["relu"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) { return std::max(Flat(in[0], i), 0.0); });
  };
  refs["gelu"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) { return Gelu(Flat(in[0], i)); });
  };
  refs["clip"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) { return std::clamp(Flat(in[0], i), 0.0, 6.0); });
  };
  refs["sigmoid"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) { return 1.0 / (1.0 + std::exp(-Flat(in[0], i))); });
  };
  refs["tanh"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) { return std::tanh(Flat(in[0], i)); });
  };
  refs["exp"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) { return std::exp(Flat(in[0], i)); });
  };
  refs["bias_add"] = [](const auto& s, const auto& in) {
    return Elementwise(s, [&](int64_t i) { return Flat(in[0], i) + in[1]({i % s[3]}); });
  };
  // Pooling windows over the unpadded input: N, H, W, C, kernel, stride, pad.
  auto pool = [](bool max) {
    return [max](const std::vector<int64_t>& s, const std::vector<In>& in) {
      int64_t oh = OutExtent(s[1], s[4], s[5], s[6], 1), ow = OutExtent(s[2], s[4], s[5], s[6], 1);
      Out out({s[0], oh, ow, s[3]});
      for (int64_t n = 0; n < s[0]; ++n)
        for (int64_t h = 0; h < oh; ++h)
          for (int64_t w = 0; w < ow; ++w)
            for (int64_t c = 0; c < s[3]; ++c) {
              double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
              int64_t count = 0;
              for (int64_t kh = 0; kh < s[4]; ++kh)
                for (int64_t kw = 0; kw < s[4]; ++kw) {
                  int64_t ih = h * s[5] + kh - s[6], iw = w * s[5] + kw - s[6];
                  if (ih < 0 || ih >= s[1] || iw < 0 || iw >= s[2]) continue;
                  double v = in[0]({n, ih, iw, c});
                  acc = max ? std::max(acc, v) : acc + v;
                  ++count;
                }
              out({n, h, w, c}) = max ? acc : acc / count;
            }
      return out;
    };
  };
  refs["max_pool2d"] = pool(true);
  refs["avg_pool2d"] = pool(false);
  refs["global_avg_pool2d"] = [](const auto& s, const auto& in) {
    Out out({s[0], 1, 1, s[3]});
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t c = 0; c < s[3]; ++c) {
        for (int64_t h = 0; h < s[1]; ++h)
          for (int64_t w = 0; w < s[2]; ++w) out({n, 0, 0, c}) += in[0]({n, h, w, c});
        out({n, 0, 0, c}) /= static_cast<double>(s[1] * s[2]);
      }
    return out;
  };
  // pad: N, H, W, C, pad.
  refs["pad"] = [](const auto& s, const auto& in) {
    int64_t p = s[4];
    Out out({s[0], s[1] + 2 * p, s[2] + 2 * p, s[3]});
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t h = 0; h < s[1]; ++h)
        for (int64_t w = 0; w < s[2]; ++w)
          for (int64_t c = 0; c < s[3]; ++c) out({n, h + p, w + p, c}) = in[0]({n, h, w, c});
    return out;
  };
  refs["reshape"] = [](const auto& s, const auto& in) {
    Out out({s[0], s[1] * s[2] * s[3]});
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = Flat(in[0], i);
    return out;
  };
  refs["transpose"] = [](const auto& s, const auto& in) {
    Out out({s[0], s[3], s[1], s[2]});
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t h = 0; h < s[1]; ++h)
        for (int64_t w = 0; w < s[2]; ++w)
          for (int64_t c = 0; c < s[3]; ++c) out({n, c, h, w}) = in[0]({n, h, w, c});
    return out;
  };
  // concat: N, H, W, C1, C2.
  refs["concat"] = [](const auto& s, const auto& in) {
    Out out({s[0], s[1], s[2], s[3] + s[4]});
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t h = 0; h < s[1]; ++h)
        for (int64_t w = 0; w < s[2]; ++w) {
          for (int64_t c = 0; c < s[3]; ++c) out({n, h, w, c}) = in[0]({n, h, w, c});
          for (int64_t c = 0; c < s[4]; ++c) out({n, h, w, s[3] + c}) = in[1]({n, h, w, c});
        }
    return out;
  };
  return refs;
}

// Optional trailing arguments, filled with their defaults (dilation 1, groups 1).
std::vector<int64_t> WithDefaults(const WorkloadDef& def, std::vector<int64_t> args) {
  while (args.size() < def.max_args) args.push_back(1);
  return args;
}

std::string Spec(const std::string& name, const std::vector<int64_t>& args) {
  std::string s = name + ":";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? "," : "") + std::to_string(args[i]);
  return s;
}

// Every workload at its small shape, plus convolutions at other stride, padding, dilation and
// group settings.
std::vector<std::string> Specs() {
  std::vector<std::string> specs;
  for (const WorkloadDef& def : AllWorkloads()) specs.push_back(Spec(def.name, def.small_shape));
  for (const char* extra : {
           "conv1d:2,10,4,6,3,1,2,2,2",         // dilated and grouped
           "conv1d:1,8,3,5,1,1,0",              // pointwise, no padding
           "conv2d:1,6,5,4,6,3,1,1,1,2",        // grouped
           "conv2d:1,9,9,3,4,3,1,2,2",          // dilated
           "conv2d:2,5,5,4,4,1,1,0",            // pointwise, no padding
           "conv2d:1,8,7,4,8,3,2,1,1,4",        // strided, four groups
           "conv3d:1,5,4,4,4,4,3,2,1,1,2",      // strided and grouped
           "depthwise_conv2d:1,9,9,2,3,1,2,2",  // dilated
           "conv2d_transpose:1,3,3,2,3,3,1,0",  // stride 1
           "conv2d_transpose:1,3,2,2,3,3,3,2",  // stride 3, padding 2
           "conv2d_transpose:1,3,4,2,3,3,2,1",  // stride 2 does not divide kernel 3
           "conv2d_transpose:1,2,3,2,2,5,3,0",  // kernel 5, stride 3, no padding
           "capsule_conv2d:1,4,4,2,2,2,1,0",    // no padding
           "max_pool2d:1,6,6,2,2,2,0",          // no padding
           "avg_pool2d:1,6,7,2,3,1,1",          // overlapping windows
           "cbr:1,5,5,4,3,1,1,0",               // pointwise
       }) {
    specs.push_back(extra);
  }
  return specs;
}

class WorkloadReference : public ::testing::TestWithParam<std::string> {};

TEST_P(WorkloadReference, InterpreterMatchesPlainLoops) {
  Workload w = MakeWorkload(GetParam());
  std::string name = w.spec.substr(0, w.spec.find(':'));
  const WorkloadDef* def = FindWorkload(name);
  static const std::map<std::string, Reference> refs = References();
  auto ref = refs.find(name);
  ASSERT_NE(ref, refs.end()) << "no reference loop nest for " << name;

  // Step 1. Seeded inputs; a variance must be positive.
  std::vector<NDArray> arrays;
  std::vector<In> inputs;
  const std::vector<Buffer>& params = w.func->params;
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<int64_t> shape;
    for (const Expr& e : params[i]->shape) shape.push_back(*AsConstInt(e));
    arrays.push_back(NDArray::Empty(shape, params[i]->dtype));
    bool positive = params[i]->name == "moving_var";
    if (i + 1 < params.size()) arrays.back().FillRandom(17 + i, positive ? 0.5 : -1.0, 1.5);
  }
  for (size_t i = 0; i + 1 < arrays.size(); ++i) inputs.push_back(In(&arrays[i]));

  // Step 2. Interpret, and compare the output with the plain loops.
  Interpret(w.func, arrays);
  std::string args_text = w.spec.substr(w.spec.find(':') + 1);
  std::vector<int64_t> args;
  for (size_t pos = 0; pos < args_text.size();) {
    size_t comma = args_text.find(',', pos);
    if (comma == std::string::npos) comma = args_text.size();
    args.push_back(std::stoll(args_text.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  Out expected = ref->second(WithDefaults(*def, args), inputs);
  const NDArray& got = arrays.back();
  ASSERT_EQ(got.shape(), expected.shape);
  int mismatches = 0;
  for (int64_t i = 0; i < got.size() && mismatches < 5; ++i) {
    double want = expected.data[i];
    double tolerance = 1e-4 * std::max(1.0, std::fabs(want));
    if (!(std::fabs(got.GetDouble(i) - want) <= tolerance)) {
      ADD_FAILURE() << "element " << i << ": interpreter " << got.GetDouble(i) << ", reference "
                    << want;
      ++mismatches;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, WorkloadReference, ::testing::ValuesIn(Specs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) name += std::isalnum(c) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace tirtune
