// The conv2d relatives with their own index patterns: depthwise, transposed and capsule
// convolutions (NHWC), and their workloads.
#include <algorithm>

#include "shape_checks.h"
#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"
#include "tirtune/te/convolution.h"
#include "tirtune/te/create_prim_func.h"
#include "tirtune/te/layout.h"
#include "workload_families.h"

namespace tirtune::te {
namespace {

void CheckOutputExtent(int64_t out, const char* op) {
  if (out < 1) TT_USER_ERROR("{}: the kernel does not fit the padded input", op);
}

}  // namespace

Tensor DepthwiseConv2dNHWC(const Tensor& data, const Tensor& weight, const ConvParams& p,
                           std::string name) {
  const char* op = "depthwise_conv2d";
  CheckRank(data, 4, op);
  CheckRank(weight, 3, op);
  CheckDimsMatch(data, 3, weight, 2, op);
  int64_t out_h = ConvOutputExtent(data.dim(1), weight.dim(0), p);
  int64_t out_w = ConvOutputExtent(data.dim(2), weight.dim(1), p);
  CheckOutputExtent(std::min(out_h, out_w), op);
  Tensor padded = p.pad > 0 ? Pad(data, {0, p.pad, p.pad, 0}, {0, p.pad, p.pad, 0}) : data;
  IterVar rh = ReduceAxis(weight.dim(0), "rh");
  IterVar rw = ReduceAxis(weight.dim(1), "rw");
  return Compute(
      {data.dim(0), out_h, out_w, data.dim(3)}, {"n", "h", "w", "c"},
      [&](const std::vector<Var>& v) {
        Expr h = v[1] * p.stride + rh.var * p.dilation;
        Expr w = v[2] * p.stride + rw.var * p.dilation;
        return Sum(padded(v[0], h, w, v[3]) * weight(rh.var, rw.var, v[3]), {rh, rw});
      },
      std::move(name));
}

Tensor Conv2dTransposeNHWC(const Tensor& data, const Tensor& weight, int64_t stride, int64_t pad,
                           std::string name) {
  const char* op = "conv2d_transpose";
  CheckRank(data, 4, op);
  CheckRank(weight, 4, op);
  CheckDimsMatch(data, 3, weight, 2, op);
  int64_t kh = weight.dim(0), kw = weight.dim(1);
  if (pad > kh - 1 || pad > kw - 1) {
    TT_USER_ERROR("{}: padding {} exceeds kernel size - 1", op, pad);
  }
  // The gather form of the scatter: output h is a convolution of the stride-dilated input (zeros
  // between elements, padded by kh - 1 - pad) with the flipped kernel. Of its kh taps only those
  // landing on an input element count, the rh with (h + rh + border_h) % stride == 0: rh =
  // first(h) + stride * th for th < ceil(kh / stride), first(h) = (-(h + border_h)) mod stride,
  // reading input row ceil((h + border_h) / stride) + th. Summing over th alone does the useful
  // multiply-adds only, stride^2 fewer than over the dilated input.
  // Step 1. Pad by ceil(backward padding / stride) so that the dilated input is padded by at least
  // the backward padding (`border` skips what the rounding added), plus one row and column at the
  // end for the taps past the kernel when stride does not divide it.
  int64_t back_h = kh - 1 - pad, back_w = kw - 1 - pad;
  int64_t pad_h = (back_h + stride - 1) / stride, pad_w = (back_w + stride - 1) / stride;
  int64_t border_h = (stride - back_h % stride) % stride;
  int64_t border_w = (stride - back_w % stride) % stride;
  int64_t taps_h = (kh + stride - 1) / stride, taps_w = (kw + stride - 1) / stride;
  bool ragged = kh % stride != 0 || kw % stride != 0;
  int64_t extra = ragged ? 1 : 0;
  Tensor padded = Pad(data, {0, pad_h, pad_w, 0}, {0, pad_h + extra, pad_w + extra, 0});
  int64_t out_h = (data.dim(1) - 1) * stride - 2 * pad + kh;
  int64_t out_w = (data.dim(2) - 1) * stride - 2 * pad + kw;
  CheckOutputExtent(std::min(out_h, out_w), op);

  // Step 2. Sum over the taps that hit input elements.
  IterVar th = ReduceAxis(taps_h, "th");
  IterVar tw = ReduceAxis(taps_w, "tw");
  IterVar rc = ReduceAxis(data.dim(3), "rc");
  return Compute(
      {data.dim(0), out_h, out_w, weight.dim(3)}, {"n", "h", "w", "co"},
      [&](const std::vector<Var>& v) {
        Expr h = v[1] + border_h, w = v[2] + border_w;
        Expr rh = stride == 1 ? Expr(th.var) : FloorMod(-h, stride) + stride * th.var;
        Expr rw = stride == 1 ? Expr(tw.var) : FloorMod(-w, stride) + stride * tw.var;
        Expr ih = stride == 1 ? h + th.var : FloorDiv(h + (stride - 1), stride) + th.var;
        Expr iw = stride == 1 ? w + tw.var : FloorDiv(w + (stride - 1), stride) + tw.var;
        Expr wh = kh - 1 - rh, ww = kw - 1 - rw;
        if (ragged) {  // a tap past the kernel reads weight row 0 and contributes nothing
          wh = Max(wh, 0);
          ww = Max(ww, 0);
        }
        Expr input = padded(v[0], ih, iw, rc.var);
        if (ragged) input = Select(rh < kh && rw < kw, input, MakeConst(data.dtype(), 0));
        return Sum(input * weight(wh, ww, rc.var, v[3]), {th, tw, rc});
      },
      std::move(name));
}

Tensor CapsuleConv2dNHWIJC(const Tensor& data, const Tensor& weight, int64_t stride, int64_t pad,
                           std::string name) {
  const char* op = "capsule_conv2d";
  CheckRank(data, 6, op);
  CheckRank(weight, 6, op);
  CheckDimsMatch(data, 3, weight, 2, op);
  CheckDimsMatch(data, 4, weight, 2, op);
  CheckDimsMatch(data, 4, weight, 3, op);
  CheckDimsMatch(data, 5, weight, 4, op);
  ConvParams p{.stride = stride, .pad = pad};
  int64_t out_h = ConvOutputExtent(data.dim(1), weight.dim(0), p);
  int64_t out_w = ConvOutputExtent(data.dim(2), weight.dim(1), p);
  CheckOutputExtent(std::min(out_h, out_w), op);
  Tensor padded = pad > 0 ? Pad(data, {0, pad, pad, 0, 0, 0}, {0, pad, pad, 0, 0, 0}) : data;
  IterVar rh = ReduceAxis(weight.dim(0), "rh");
  IterVar rw = ReduceAxis(weight.dim(1), "rw");
  IterVar cap_k = ReduceAxis(data.dim(4), "cap_k");
  IterVar rc = ReduceAxis(data.dim(5), "rc");
  int64_t capsule = data.dim(3);
  return Compute(
      {data.dim(0), out_h, out_w, capsule, capsule, weight.dim(5)},
      {"n", "h", "w", "cap_i", "cap_j", "co"},
      [&](const std::vector<Var>& v) {
        Expr h = v[1] * stride + rh.var;
        Expr w = v[2] * stride + rw.var;
        return Sum(padded(v[0], h, w, v[3], cap_k.var, rc.var) *
                       weight(rh.var, rw.var, cap_k.var, v[4], rc.var, v[5]),
                   {rh, rw, cap_k, rc});
      },
      std::move(name));
}

std::vector<WorkloadDef> Conv2dVariantWorkloads() {
  std::vector<WorkloadDef> defs;
  defs.push_back(WorkloadDef{
      .name = "depthwise_conv2d",
      .params = "N,H,W,C,kernel,stride,pad,dilation",
      .summary = "depthwise conv2d NHWC, weight [kernel, kernel, C]",
      .min_args = 7,
      .max_args = 8,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor data = Input({s[0], s[1], s[2], s[3]}, "data");
            Tensor weight = Input({s[4], s[4], s[3]}, "weight");
            ConvParams p{.stride = s[5], .pad = s[6], .dilation = ArgOr(s, 7, 1)};
            return CreatePrimFunc({data, weight, DepthwiseConv2dNHWC(data, weight, p)},
                                  "depthwise_conv2d");
          },
      .flops =
          [](const std::vector<int64_t>& s) {
            ConvParams p{.stride = s[5], .pad = s[6], .dilation = ArgOr(s, 7, 1)};
            return 2.0 * s[0] * ConvOutputExtent(s[1], s[4], p) * ConvOutputExtent(s[2], s[4], p) *
                   s[3] * s[4] * s[4];
          },
      .benchmark_shapes = {{1, 112, 112, 32, 3, 1, 1},
                           {1, 112, 112, 64, 3, 2, 1},
                           {1, 14, 14, 512, 3, 2, 1},
                           {1, 7, 7, 1024, 3, 1, 1}},
      .small_shape = {1, 7, 8, 3, 3, 2, 1},
  });
  defs.push_back(WorkloadDef{
      .name = "conv2d_transpose",
      .params = "N,H,W,CI,CO,kernel,stride,pad",
      .summary = "transposed conv2d NHWC, weight [kernel, kernel, CI, CO]",
      .min_args = 8,
      .max_args = 8,
      .build =
          [](const std::vector<int64_t>& s) {
            Tensor data = Input({s[0], s[1], s[2], s[3]}, "data");
            Tensor weight = Input({s[5], s[5], s[3], s[4]}, "weight");
            return CreatePrimFunc({data, weight, Conv2dTransposeNHWC(data, weight, s[6], s[7])},
                                  "conv2d_transpose");
          },
      .flops =
          [](const std::vector<int64_t>& s) {
            // The taps that hit input elements, ceil(kernel / stride) per axis, as the compute
            // runs them.
            double out_h = static_cast<double>((s[1] - 1) * s[6] - 2 * s[7] + s[5]);
            double out_w = static_cast<double>((s[2] - 1) * s[6] - 2 * s[7] + s[5]);
            double taps = static_cast<double>((s[5] + s[6] - 1) / s[6]);
            return 2.0 * s[0] * out_h * out_w * s[4] * taps * taps * s[3];
          },
      .benchmark_shapes = {{1, 4, 4, 512, 256, 4, 2, 1}, {1, 16, 16, 128, 64, 4, 2, 1}},
      .small_shape = {1, 4, 3, 3, 5, 4, 2, 1},
  });
  defs.push_back(WorkloadDef{
      .name = "capsule_conv2d",
      .params = "N,H,W,CI,CO,kernel,stride,pad",
      .summary = "capsule conv2d with 4x4 capsules, data [N,H,W,4,4,CI]",
      .min_args = 8,
      .max_args = 8,
      .build =
          [](const std::vector<int64_t>& s) {
            constexpr int64_t kCapsule = 4;
            Tensor data = Input({s[0], s[1], s[2], kCapsule, kCapsule, s[3]}, "data");
            Tensor weight = Input({s[5], s[5], kCapsule, kCapsule, s[3], s[4]}, "weight");
            return CreatePrimFunc({data, weight, CapsuleConv2dNHWIJC(data, weight, s[6], s[7])},
                                  "capsule_conv2d");
          },
      .flops =
          [](const std::vector<int64_t>& s) {
            ConvParams p{.stride = s[6], .pad = s[7]};
            double out = static_cast<double>(s[0]) * ConvOutputExtent(s[1], s[5], p) *
                         ConvOutputExtent(s[2], s[5], p) * 4 * 4 * s[4];
            return 2.0 * out * s[5] * s[5] * 4 * s[3];
          },
      .benchmark_shapes = {{1, 16, 16, 32, 32, 3, 2, 1}, {1, 8, 8, 32, 32, 3, 1, 1}},
      .small_shape = {1, 5, 4, 2, 3, 3, 2, 1},
  });
  return defs;
}

}  // namespace tirtune::te
