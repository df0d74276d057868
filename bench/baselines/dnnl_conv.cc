// The oneDNN baselines of the convolution family, on tirtune's layouts (channels-last data,
// weights [kernel..., CI/groups, CO], transposed-conv weights [kh, kw, CI, CO]): conv1d, conv2d
// and conv3d with groups and dilation, depthwise_conv2d (a convolution with one group per
// channel), conv2d_transpose (the deconvolution primitive) and the cbr subgraph (convolution, then
// bias + batch-norm scale/shift + ReLU as one binary primitive with post-ops; fused: all of it as
// the convolution's bias and post-ops). Each primitive runs on the memory formats oneDNN prefers;
// the reorders into them happen once, before timing.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "baselines/dnnl_memory.h"
#include "baselines/dnnl_operators.h"

namespace tirtune::bench {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using Args = std::unordered_map<int, memory>;
constexpr memory::data_type kF32 = memory::data_type::f32;

/// A convolution's arguments as tirtune's operators take them; dilation 1 means none.
struct ConvShape {
  int64_t n = 1;
  /// Spatial extents of the input: 1 to 3 of them.
  std::vector<int64_t> in;
  int64_t ci = 1, co = 1, kernel = 1, stride = 1, pad = 0, dilation = 1, groups = 1;

  int nd() const { return static_cast<int>(in.size()); }
  int64_t ci_g() const { return ci / groups; }
  int64_t co_g() const { return co / groups; }
  std::vector<int64_t> Out() const {
    std::vector<int64_t> out;
    for (int64_t x : in) out.push_back((x + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1);
    return out;
  }
  int64_t Taps() const {
    int64_t taps = 1;
    for (int i = 0; i < nd(); ++i) taps *= kernel;
    return taps;
  }
  /// Output elements.
  int64_t OutSize() const {
    int64_t size = n * co;
    for (int64_t x : Out()) size *= x;
    return size;
  }
};

/// Parses N, spatial..., CI, CO, kernel, stride, pad[, dilation[, groups]].
ConvShape ParseConv(const std::vector<int64_t>& args, int nd, const std::string& params) {
  CheckArgs(args, 6 + nd, 8 + nd, params, /*may_be_zero=*/5 + nd);
  ConvShape s;
  s.n = args[0];
  s.in.assign(args.begin() + 1, args.begin() + 1 + nd);
  s.ci = args[1 + nd];
  s.co = args[2 + nd];
  s.kernel = args[3 + nd];
  s.stride = args[4 + nd];
  s.pad = args[5 + nd];
  if (args.size() > 6 + static_cast<size_t>(nd)) s.dilation = args[6 + nd];
  if (args.size() > 7 + static_cast<size_t>(nd)) s.groups = args[7 + nd];
  return s;
}

void Validate(const ConvShape& s) {
  if (s.ci % s.groups != 0 || s.co % s.groups != 0) {
    throw BadArguments(fmt::format("{} input and {} output channels are not divisible by {} groups",
                                   s.ci, s.co, s.groups));
  }
  int64_t span = s.dilation * (s.kernel - 1) + 1;
  for (int64_t x : s.in) {
    if (x + 2 * s.pad < span) {
      throw BadArguments(
          fmt::format("kernel {} with dilation {} does not fit an input of {} "
                      "padded by {}",
                      s.kernel, s.dilation, x, s.pad));
    }
  }
}

/// oneDNN's logical dims of channels-last data: {n, c, spatial...}.
memory::dims DataDims(int64_t n, int64_t c, const std::vector<int64_t>& spatial) {
  memory::dims dims = {n, c};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  return dims;
}

tag ChannelsLast(int nd) { return nd == 1 ? tag::nwc : nd == 2 ? tag::nhwc : tag::ndhwc; }

/// The weight in tirtune's layout [k..., ci_g, co] (co = group * co_g + oc), described to oneDNN
/// by strides over its logical dims: {co, ci, k...}, or {groups, co_g, ci_g, k...} when grouped.
memory::desc UserWeights(const ConvShape& s) {
  memory::dims k_dims, k_strides;
  for (int j = 0; j < s.nd(); ++j) {
    int64_t stride = s.ci_g() * s.co;
    for (int i = j + 1; i < s.nd(); ++i) stride *= s.kernel;
    k_dims.push_back(s.kernel);
    k_strides.push_back(stride);
  }
  memory::dims dims, strides;
  if (s.groups == 1) {
    dims = {s.co, s.ci};
    strides = {1, s.co};
  } else {
    dims = {s.groups, s.co_g(), s.ci_g()};
    strides = {s.co_g(), 1, s.co};
  }
  dims.insert(dims.end(), k_dims.begin(), k_dims.end());
  strides.insert(strides.end(), k_strides.begin(), k_strides.end());
  return Strided(dims, strides);
}

/// Output element `i` (layout [n, out..., co]) of the convolution, in double.
double ReferenceConv(const ConvShape& s, const float* data, const float* weight, int64_t i) {
  std::vector<int64_t> out = s.Out();
  int64_t oc = i % s.co, rest = i / s.co;
  std::vector<int64_t> pos(s.nd());
  for (int j = s.nd() - 1; j >= 0; --j) {
    pos[j] = rest % out[j];
    rest /= out[j];
  }
  int64_t batch = rest, group = oc / s.co_g(), ci_g = s.ci_g();
  double sum = 0;
  for (int64_t tap = 0; tap < s.Taps(); ++tap) {
    // The tap's kernel index along each spatial axis, and the input position it reads.
    int64_t offset = batch, t = tap, divisor = s.Taps();
    bool inside = true;
    for (int j = 0; j < s.nd(); ++j) {
      divisor /= s.kernel;
      int64_t k = t / divisor;
      t %= divisor;
      int64_t x = pos[j] * s.stride + k * s.dilation - s.pad;
      inside = inside && x >= 0 && x < s.in[j];
      offset = offset * s.in[j] + x;
    }
    if (!inside) continue;
    const float* in = data + offset * s.ci + group * ci_g;
    const float* w = weight + tap * ci_g * s.co + oc;
    for (int64_t rc = 0; rc < ci_g; ++rc) sum += static_cast<double>(in[rc]) * w[rc * s.co];
  }
  return sum;
}

/// The per-channel tensors of the cbr tail, and the post-ops that apply them.
struct CbrTail {
  NDArray bias, scale, offset;

  explicit CbrTail(int64_t co)
      : bias(RandomArray({co}, 3)), scale(RandomArray({co}, 4)), offset(RandomArray({co}, 5)) {}

  /// max((x + bias) * scale + offset, 0) on conv output element `i` (channel i % co).
  double Apply(double x, int64_t channel) const {
    return std::max((x + bias.data<float>()[channel]) * scale.data<float>()[channel] +
                        offset.data<float>()[channel],
                    0.0);
  }

  /// Post-ops multiplying by scale, adding offset and applying ReLU, with `per_channel` the desc
  /// of a per-channel operand; `call` gets their arguments.
  dnnl::primitive_attr ScaleShiftRelu(const memory::desc& per_channel, Args& call) {
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_mul, per_channel);
    ops.append_binary(dnnl::algorithm::binary_add, per_channel);
    ops.append_eltwise(/*scale=*/1.0f, dnnl::algorithm::eltwise_relu, /*alpha=*/0, /*beta=*/0);
    call[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = Wrap(scale, per_channel);
    call[DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1] = Wrap(offset, per_channel);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    return attr;
  }
};

/// A convolution (with the cbr tail when `cbr`), as a baseline.
BaselineRun Convolution(const ConvShape& s, bool cbr, Tail tail) {
  Validate(s);
  std::vector<int64_t> out = s.Out();
  std::vector<int64_t> data_shape = {s.n}, weight_shape, out_shape = {s.n};
  data_shape.insert(data_shape.end(), s.in.begin(), s.in.end());
  data_shape.push_back(s.ci);
  weight_shape.assign(s.nd(), s.kernel);
  weight_shape.insert(weight_shape.end(), {s.ci_g(), s.co});
  out_shape.insert(out_shape.end(), out.begin(), out.end());
  out_shape.push_back(s.co);
  NDArray data = RandomArray(data_shape, 1), weight = RandomArray(weight_shape, 2);
  NDArray result = NDArray::Empty(out_shape, DataType::Float(32));

  memory::desc user_src_md(DataDims(s.n, s.ci, s.in), kF32, ChannelsLast(s.nd()));
  memory::desc user_dst_md(DataDims(s.n, s.co, out), kF32, ChannelsLast(s.nd()));
  memory user_src = Wrap(data, user_src_md), user_weights = Wrap(weight, UserWeights(s));
  memory user_dst = Wrap(result, user_dst_md);
  auto any = [](const memory::desc& md) { return memory::desc(md.dims(), kF32, tag::any); };
  memory::dims strides(s.nd(), s.stride), dilates(s.nd(), s.dilation - 1), pads(s.nd(), s.pad);
  // A per-channel operand broadcast over the output: {1, co, 1...}.
  memory::dims channel_dims(2 + s.nd(), 1);
  channel_dims[1] = s.co;
  memory::dims channel_strides(2 + s.nd(), 1);
  channel_strides[0] = s.co;
  memory::desc per_channel = Strided(channel_dims, channel_strides);

  // Step 1. The convolution; for a fused cbr with the bias and the tail as post-ops. Direct
  // rather than auto: auto may pick Winograd, which trades accuracy for speed.
  std::optional<CbrTail> cbr_tail;
  if (cbr) cbr_tail.emplace(s.co);
  Args conv_call;
  dnnl::primitive_attr conv_attr;
  std::optional<dnnl::convolution_forward::desc> conv_desc;
  if (cbr && tail == Tail::kFused) {
    memory::desc bias_md({s.co}, kF32, tag::a);
    conv_desc.emplace(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                      any(user_src_md), any(user_weights.get_desc()), bias_md, any(user_dst_md),
                      strides, dilates, pads, pads);
    conv_attr = cbr_tail->ScaleShiftRelu(per_channel, conv_call);
    conv_call[DNNL_ARG_BIAS] = Wrap(cbr_tail->bias, bias_md);
  } else {
    conv_desc.emplace(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                      any(user_src_md), any(user_weights.get_desc()), any(user_dst_md), strides,
                      dilates, pads, pads);
  }
  dnnl::convolution_forward::primitive_desc pd(*conv_desc, conv_attr, Engine());
  dnnl::convolution_forward conv(pd);
  memory dst = OutputIn(user_dst, pd.dst_desc());
  conv_call[DNNL_ARG_SRC] = InFormat(user_src, pd.src_desc());
  conv_call[DNNL_ARG_WEIGHTS] = InFormat(user_weights, pd.weights_desc());
  conv_call[DNNL_ARG_DST] = dst;

  BaselineRun r;
  r.info = {{"primitive", "convolution"},
            {"onednn_impl", std::string(pd.impl_info_str())},
            {"layout", "onednn_preferred"}};
  if (cbr && tail == Tail::kSeparate) {
    // Step 2. The separate tail: one binary primitive, in place on the convolution's output in
    // the format the convolution wrote it.
    Args tail_call = {{DNNL_ARG_SRC_0, dst},
                      {DNNL_ARG_SRC_1, Wrap(cbr_tail->bias, per_channel)},
                      {DNNL_ARG_DST, dst}};
    dnnl::primitive_attr tail_attr = cbr_tail->ScaleShiftRelu(per_channel, tail_call);
    dnnl::binary::primitive_desc tail_pd(
        dnnl::binary::desc(dnnl::algorithm::binary_add, dst.get_desc(), per_channel,
                           dst.get_desc()),
        tail_attr, Engine());
    dnnl::binary tail_op(tail_pd);
    r.run = [=] {
      conv.execute(Stream(), conv_call);
      tail_op.execute(Stream(), tail_call);
      Stream().wait();
    };
    r.info["tail_primitive"] = "binary add (bias) + binary mul, binary add, eltwise relu post-ops";
    r.info["onednn_tail_impl"] = std::string(tail_pd.impl_info_str());
  } else {
    r.run = [=] {
      conv.execute(Stream(), conv_call);
      Stream().wait();
    };
  }
  r.output = [=] {
    ReadBack(dst, user_dst);
    return static_cast<const float*>(result.raw());
  };
  r.output_size = s.OutSize();
  r.reference = [=](int64_t i) {
    double x = ReferenceConv(s, data.data<float>(), weight.data<float>(), i);
    return cbr_tail ? cbr_tail->Apply(x, i % s.co) : x;
  };
  r.flops = 2.0 * s.OutSize() * s.Taps() * s.ci_g() + (cbr ? 4.0 * s.OutSize() : 0.0);
  r.reduction_length = s.Taps() * s.ci_g();
  return r;
}

/// conv1d, conv2d or conv3d (`nd` spatial axes).
BaselineOperator ConvOperator(std::string name, int nd, std::string params) {
  auto make = [nd, params](const std::vector<int64_t>& args, Tail) {
    return Convolution(ParseConv(args, nd, params), /*cbr=*/false, Tail::kSeparate);
  };
  return {std::move(name), params, make, /*has_fused_tail=*/false};
}

BaselineRun DepthwiseConv2d(const std::vector<int64_t>& args, Tail) {
  const std::string params = "N,H,W,C,kernel,stride,pad[,dilation]";
  CheckArgs(args, 7, 8, params, /*may_be_zero=*/6);
  // A grouped convolution with one group per channel: tirtune's weight [k, k, C] is the grouped
  // weight [k, k, 1, C].
  std::vector<int64_t> conv = {args[0], args[1], args[2],
                               args[3], args[3], args[4],
                               args[5], args[6], args.size() > 7 ? args[7] : 1,
                               args[3]};
  return Convolution(ParseConv(conv, 2, params), /*cbr=*/false, Tail::kSeparate);
}

BaselineRun ConvBatchNormRelu(const std::vector<int64_t>& args, Tail tail) {
  const std::string params = "N,H,W,CI,CO,kernel,stride,pad";
  CheckArgs(args, 8, 8, params, /*may_be_zero=*/7);
  return Convolution(ParseConv(args, 2, params), /*cbr=*/true, tail);
}

/// conv2d_transpose: out[n, y, x, co] = sum of data[n, iy, ix, ci] * weight[kh, kw, ci, co] over
/// y = iy * stride - pad + kh, x = ix * stride - pad + kw.
BaselineRun Conv2dTranspose(const std::vector<int64_t>& args, Tail) {
  CheckArgs(args, 8, 8, "N,H,W,CI,CO,kernel,stride,pad", /*may_be_zero=*/7);
  int64_t n = args[0], h = args[1], w = args[2], ci = args[3], co = args[4], k = args[5];
  int64_t stride = args[6], pad = args[7];
  int64_t oh = (h - 1) * stride - 2 * pad + k, ow = (w - 1) * stride - 2 * pad + k;
  if (oh < 1 || ow < 1) throw BadArguments(fmt::format("padding {} leaves no output", pad));
  NDArray data = RandomArray({n, h, w, ci}, 1), weight = RandomArray({k, k, ci, co}, 2);
  NDArray result = NDArray::Empty({n, oh, ow, co}, DataType::Float(32));
  memory::desc user_src_md({n, ci, h, w}, kF32, tag::nhwc);
  memory::desc user_dst_md({n, co, oh, ow}, kF32, tag::nhwc);
  memory::desc user_weights_md = Strided({co, ci, k, k}, {1, co, k * ci * co, ci * co});
  memory user_src = Wrap(data, user_src_md), user_dst = Wrap(result, user_dst_md);
  memory user_weights = Wrap(weight, user_weights_md);
  auto any = [](const memory::desc& md) { return memory::desc(md.dims(), kF32, tag::any); };
  dnnl::deconvolution_forward::primitive_desc pd(
      dnnl::deconvolution_forward::desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
          any(user_src_md), any(user_weights_md), any(user_dst_md), /*strides=*/{stride, stride},
          /*padding_l=*/{pad, pad}, /*padding_r=*/{pad, pad}),
      Engine());
  dnnl::deconvolution_forward deconv(pd);
  memory dst = OutputIn(user_dst, pd.dst_desc());
  Args call = {{DNNL_ARG_SRC, InFormat(user_src, pd.src_desc())},
               {DNNL_ARG_WEIGHTS, InFormat(user_weights, pd.weights_desc())},
               {DNNL_ARG_DST, dst}};
  BaselineRun r;
  r.run = [=] {
    deconv.execute(Stream(), call);
    Stream().wait();
  };
  r.output = [=] {
    ReadBack(dst, user_dst);
    return static_cast<const float*>(result.raw());
  };
  r.output_size = n * oh * ow * co;
  r.reference = [=](int64_t i) {
    int64_t oc = i % co, x = i / co % ow, y = i / (co * ow) % oh, b = i / (co * ow * oh);
    double sum = 0;
    for (int64_t kh = 0; kh < k; ++kh) {
      int64_t sy = y + pad - kh;
      if (sy < 0 || sy % stride != 0 || sy / stride >= h) continue;
      for (int64_t kw = 0; kw < k; ++kw) {
        int64_t sx = x + pad - kw;
        if (sx < 0 || sx % stride != 0 || sx / stride >= w) continue;
        const float* in = data.data<float>() + ((b * h + sy / stride) * w + sx / stride) * ci;
        const float* wt = weight.data<float>() + (kh * k + kw) * ci * co + oc;
        for (int64_t c = 0; c < ci; ++c) sum += static_cast<double>(in[c]) * wt[c * co];
      }
    }
    return sum;
  };
  // tirtune counts every tap of the kernel window, the ones that fall between inputs included.
  r.flops = 2.0 * n * oh * ow * co * k * k * ci;
  r.reduction_length = k * k * ci;
  r.info = {{"primitive", "deconvolution"},
            {"onednn_impl", std::string(pd.impl_info_str())},
            {"layout", "onednn_preferred"}};
  return r;
}

}  // namespace

std::vector<BaselineOperator> ConvBaselines() {
  return {
      ConvOperator("conv1d", 1, "N,L,CI,CO,kernel,stride,pad[,dilation,groups]"),
      ConvOperator("conv2d", 2, "N,H,W,CI,CO,kernel,stride,pad[,dilation,groups]"),
      ConvOperator("conv3d", 3, "N,D,H,W,CI,CO,kernel,stride,pad[,dilation,groups]"),
      {"depthwise_conv2d", "N,H,W,C,kernel,stride,pad[,dilation]", DepthwiseConv2d,
       /*has_fused_tail=*/false},
      {"conv2d_transpose", "N,H,W,CI,CO,kernel,stride,pad", Conv2dTranspose,
       /*has_fused_tail=*/false},
      {"cbr", "N,H,W,CI,CO,kernel,stride,pad", ConvBatchNormRelu, /*has_fused_tail=*/true},
  };
}

}  // namespace tirtune::bench
