// The oneDNN baseline for conv2d: times one forward-inference convolution (NHWC f32 data, weight
// [kernel, kernel, CI/groups, CO], no bias, the arguments of tirtune's conv2d workload) in its own
// process and prints one JSON line. The primitive runs on the memory formats oneDNN prefers; the
// reorders into them happen once, before timing. Threads come from OMP_NUM_THREADS (oneDNN uses
// OpenMP), set by the calling script so that baseline and candidate run with the same count.
#include <dnnl_debug.h>
#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <dnnl.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tirtune/measure/timer.h"
#include "tirtune/support/ndarray.h"

namespace {

using tirtune::DataType;
using tirtune::NDArray;

// tirtune's conv2d arguments, dilation 1 meaning none (oneDNN counts from 0).
struct Conv2dArgs {
  int64_t n, h, w, ci, co, kernel, stride, pad, dilation = 1, groups = 1;

  int64_t OutExtent(int64_t in) const {
    return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
  }
  int64_t oh() const { return OutExtent(h); }
  int64_t ow() const { return OutExtent(w); }
  std::vector<int64_t> List() const {
    return {n, h, w, ci, co, kernel, stride, pad, dilation, groups};
  }
};

std::optional<int64_t> ParseInt(const char* s) {
  int64_t v = 0;
  const char* end = s + std::char_traits<char>::length(s);
  auto [ptr, ec] = std::from_chars(s, end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

// Parses argv[1..10] into `args`; returns an empty string or what is wrong with them.
std::string ParseArgs(int argc, char** argv, Conv2dArgs& args) {
  int64_t* fields[] = {&args.n,      &args.h,      &args.w,   &args.ci,       &args.co,
                       &args.kernel, &args.stride, &args.pad, &args.dilation, &args.groups};
  for (int i = 1; i < argc && i <= 10; ++i) {
    std::optional<int64_t> v = ParseInt(argv[i]);
    if (!v) return fmt::format("argument {} ('{}') is not an integer", i, argv[i]);
    *fields[i - 1] = *v;
  }
  if (args.n < 1 || args.h < 1 || args.w < 1 || args.ci < 1 || args.co < 1 || args.kernel < 1 ||
      args.stride < 1 || args.dilation < 1 || args.groups < 1 || args.pad < 0) {
    return "all arguments must be positive, except pad, which must be non-negative";
  }
  if (args.ci % args.groups != 0 || args.co % args.groups != 0) {
    return fmt::format("{} input and {} output channels are not divisible by {} groups", args.ci,
                       args.co, args.groups);
  }
  int64_t span = args.dilation * (args.kernel - 1) + 1;
  if (args.h + 2 * args.pad < span || args.w + 2 * args.pad < span) {
    return fmt::format("kernel {} with dilation {} does not fit a {}x{} input padded by {}",
                       args.kernel, args.dilation, args.h, args.w, args.pad);
  }
  return "";
}

// The weight in tirtune's layout [kh, kw, ci_in_group, co] (co = group * CO/groups + oc), described
// to oneDNN by strides over its logical dims: [CO, CI, kh, kw], or [groups, CO/groups, CI/groups,
// kh, kw] when grouped.
dnnl::memory::desc UserWeightDesc(const Conv2dArgs& a) {
  int64_t ci_g = a.ci / a.groups, co_g = a.co / a.groups, k = a.kernel;
  using dims = dnnl::memory::dims;
  if (a.groups == 1) {
    return {dims{a.co, a.ci, k, k}, dnnl::memory::data_type::f32,
            dims{1, a.co, k * a.ci * a.co, a.ci * a.co}};
  }
  return {dims{a.groups, co_g, ci_g, k, k}, dnnl::memory::data_type::f32,
          dims{co_g, 1, a.co, k * ci_g * a.co, ci_g * a.co}};
}

// The same convolution in plain loops, accumulated in double: the reference for the check.
std::vector<double> ReferenceConv2d(const Conv2dArgs& a, const float* data, const float* weight) {
  int64_t oh = a.oh(), ow = a.ow(), ci_g = a.ci / a.groups, co_g = a.co / a.groups;
  std::vector<double> out(a.n * oh * ow * a.co);
  for (int64_t n = 0; n < a.n; ++n) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        double* acc = &out[((n * oh + y) * ow + x) * a.co];
        for (int64_t kh = 0; kh < a.kernel; ++kh) {
          int64_t iy = y * a.stride + kh * a.dilation - a.pad;
          if (iy < 0 || iy >= a.h) continue;
          for (int64_t kw = 0; kw < a.kernel; ++kw) {
            int64_t ix = x * a.stride + kw * a.dilation - a.pad;
            if (ix < 0 || ix >= a.w) continue;
            const float* in = data + ((n * a.h + iy) * a.w + ix) * a.ci;
            const float* tap = weight + (kh * a.kernel + kw) * ci_g * a.co;
            for (int64_t g = 0; g < a.groups; ++g) {
              for (int64_t rc = 0; rc < ci_g; ++rc) {
                double v = in[g * ci_g + rc];
                const float* row = tap + rc * a.co + g * co_g;
                for (int64_t oc = 0; oc < co_g; ++oc) acc[g * co_g + oc] += v * row[oc];
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// Runs and checks the convolution, then times it; returns the process exit code.
int Run(const Conv2dArgs& a, const tirtune::TimerConfig& config) {
  using dnnl::memory;
  using tag = memory::format_tag;
  const memory::data_type f32 = memory::data_type::f32;
  int64_t oh = a.oh(), ow = a.ow();

  NDArray data = NDArray::Empty({a.n, a.h, a.w, a.ci}, DataType::Float(32));
  NDArray weight = NDArray::Empty({a.kernel, a.kernel, a.ci / a.groups, a.co}, DataType::Float(32));
  NDArray out = NDArray::Empty({a.n, oh, ow, a.co}, DataType::Float(32));
  data.FillRandom(1);
  weight.FillRandom(2);

  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  memory::desc user_src_md({a.n, a.ci, a.h, a.w}, f32, tag::nhwc);
  memory::desc user_dst_md({a.n, a.co, oh, ow}, f32, tag::nhwc);
  memory user_src(user_src_md, engine, data.raw());
  memory user_weight(UserWeightDesc(a), engine, weight.raw());
  memory user_dst(user_dst_md, engine, out.raw());

  // Direct rather than auto: auto may pick Winograd, which trades accuracy for speed.
  dnnl::convolution_forward::desc conv_desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      memory::desc(user_src_md.dims(), f32, tag::any),
      memory::desc(user_weight.get_desc().dims(), f32, tag::any),
      memory::desc(user_dst_md.dims(), f32, tag::any), /*strides=*/{a.stride, a.stride},
      /*dilates=*/{a.dilation - 1, a.dilation - 1}, /*padding_l=*/{a.pad, a.pad},
      /*padding_r=*/{a.pad, a.pad});
  dnnl::convolution_forward::primitive_desc conv_pd(conv_desc, engine);
  dnnl::convolution_forward conv(conv_pd);

  // Step 1. Reorder the inputs into the primitive's formats (untimed).
  auto to_format = [&](memory& user, const memory::desc& md) {
    if (md == user.get_desc()) return user;
    memory m(md, engine);
    dnnl::reorder(user, m).execute(stream, user, m);
    return m;
  };
  memory src = to_format(user_src, conv_pd.src_desc());
  memory wei = to_format(user_weight, conv_pd.weights_desc());
  memory dst = conv_pd.dst_desc() == user_dst_md ? user_dst : memory(conv_pd.dst_desc(), engine);
  stream.wait();
  auto run = [&] {
    conv.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    stream.wait();
  };

  // Step 2. Check one result against the plain-loop reference.
  run();
  if (dst != user_dst) dnnl::reorder(dst, user_dst).execute(stream, dst, user_dst);
  stream.wait();
  std::vector<double> ref = ReferenceConv2d(a, data.data<float>(), weight.data<float>());
  const float* got = out.data<float>();
  double max_ref = 0, max_err = 0;
  int64_t worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    max_ref = std::max(max_ref, std::abs(ref[i]));
    double err = std::abs(got[i] - ref[i]);
    if (err > max_err || std::isnan(err)) {
      max_err = std::isnan(err) ? INFINITY : err;
      worst = static_cast<int64_t>(i);
    }
  }
  if (!(max_err <= 1e-4 * max_ref)) {
    fmt::print(stderr,
               "onednn_conv2d: wrong result: output element {} is {} but the reference gives {} "
               "(max |error| {:.3g} > 1e-4 * max |reference| {:.3g})\n",
               worst, got[worst], ref[worst], max_err, max_ref);
    return 1;
  }

  // Step 3. Time the convolution alone.
  tirtune::TimingResult t = tirtune::TimeFunction(run, config);
  double flops = 2.0 * a.n * oh * ow * a.co * (a.ci / a.groups) * a.kernel * a.kernel;
  const char* threads = std::getenv("OMP_NUM_THREADS");
  fmt::print("{}\n", nlohmann::json{{"impl", "onednn_conv2d"},
                                    {"args", a.List()},
                                    {"threads", threads ? threads : "default"},
                                    {"layout", "onednn_preferred"},
                                    {"onednn_impl", conv_pd.impl_info_str()},
                                    {"median_seconds", t.median},
                                    {"cv", t.cv},
                                    {"gflops", flops / t.median / 1e9}}
                         .dump());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 9 || argc > 12) {
    fmt::print(stderr,
               "usage: {} N H W CI CO kernel stride pad [dilation=1] [groups=1] [min_repeat_ms]\n",
               argv[0]);
    return 2;
  }
  Conv2dArgs args;
  if (std::string error = ParseArgs(argc, argv, args); !error.empty()) {
    fmt::print(stderr, "{}: {}\n", argv[0], error);
    return 2;
  }
  tirtune::TimerConfig config;
  config.repeat = 7;
  if (argc > 11) {
    char* end = nullptr;
    config.min_repeat_ms = std::strtod(argv[11], &end);
    if (*end != '\0' || !(config.min_repeat_ms >= 0)) {
      fmt::print(stderr, "{}: min_repeat_ms ('{}') is not a non-negative number\n", argv[0],
                 argv[11]);
      return 2;
    }
  }
  try {
    return Run(args, config);
  } catch (const dnnl::error& e) {
    // The C++ API names the failed call in its message ("could not create a primitive descriptor
    // for a convolution forward propagation primitive").
    fmt::print(stderr, "onednn_conv2d: {} (status {})\n", e.what(), dnnl_status2str(e.status));
    return 1;
  }
}
