// The oneDNN baselines of the reductions: softmax (the softmax primitive along the last axis, out
// of place) and norm (the L2 norm over all but the batch axis, from the eltwise and reduction
// primitives).
#include <algorithm>
#include <cmath>
#include <dnnl.hpp>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "baselines/dnnl_memory.h"
#include "baselines/dnnl_operators.h"

namespace tirtune::bench {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using Args = std::unordered_map<int, memory>;
constexpr memory::data_type kF32 = memory::data_type::f32;

/// softmax: B[i, j] = exp(A[i, j] - max_j A[i, :]) / sum_j exp(A[i, j] - max_j A[i, :]).
BaselineRun Softmax(const std::vector<int64_t>& args, Tail) {
  CheckArgs(args, 2, 2, "M,N");
  int64_t m = args[0], n = args[1];
  NDArray a = RandomArray({m, n}, 1);
  NDArray b = NDArray::Empty({m, n}, DataType::Float(32));
  memory::desc md({m, n}, kF32, tag::ab);
  dnnl::softmax_forward::primitive_desc pd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, /*softmax_axis=*/1),
      Engine());
  dnnl::softmax_forward softmax(pd);
  Args call = {{DNNL_ARG_SRC, Wrap(a, md)}, {DNNL_ARG_DST, Wrap(b, md)}};
  // Each row's maximum and sum of exponentials, for the reference.
  auto row_max = std::make_shared<std::vector<double>>(m);
  auto row_sum = std::make_shared<std::vector<double>>(m, 0.0);
  const float* in = a.data<float>();
  for (int64_t i = 0; i < m; ++i) {
    (*row_max)[i] = *std::max_element(in + i * n, in + (i + 1) * n);
    for (int64_t j = 0; j < n; ++j) (*row_sum)[i] += std::exp(in[i * n + j] - (*row_max)[i]);
  }
  BaselineRun r;
  r.run = [=] {
    softmax.execute(Stream(), call);
    Stream().wait();
  };
  r.output = [b] { return b.data<float>(); };
  r.output_size = m * n;
  r.reference = [=](int64_t i) {
    return std::exp(a.data<float>()[i] - (*row_max)[i / n]) / (*row_sum)[i / n];
  };
  // tirtune counts max, subtract-and-exp, sum and divide: 5 per element.
  r.flops = 5.0 * m * n;
  r.reduction_length = n;
  r.info = {{"primitive", "softmax"}, {"onednn_impl", std::string(pd.impl_info_str())}};
  return r;
}

/// norm: D[b] = sqrt(sum_ij A[b, i, j]^2). oneDNN 2.6 has the L2 norm as a reduction algorithm
/// (norm_lp_sum) but only in its reference implementation (0.1 GFLOP/s); the baseline composes two
/// JIT primitives instead: an eltwise square into a scratch array, then a sum reduction with a
/// sqrt post-op.
BaselineRun Norm(const std::vector<int64_t>& args, Tail) {
  CheckArgs(args, 3, 3, "B,M,N");
  int64_t bs = args[0], m = args[1], n = args[2];
  NDArray a = RandomArray({bs, m, n}, 1);
  NDArray d = NDArray::Empty({bs}, DataType::Float(32));
  memory::desc src_md({bs, m, n}, kF32, tag::abc), dst_md({bs, 1, 1}, kF32, tag::abc);
  dnnl::eltwise_forward::primitive_desc square_pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                  dnnl::algorithm::eltwise_square, src_md, /*alpha=*/0,
                                  /*beta=*/0),
      Engine());
  dnnl::post_ops sqrt;
  sqrt.append_eltwise(/*scale=*/1.0f, dnnl::algorithm::eltwise_sqrt, /*alpha=*/0, /*beta=*/0);
  dnnl::primitive_attr attr;
  attr.set_post_ops(sqrt);
  dnnl::reduction::primitive_desc sum_pd(
      dnnl::reduction::desc(dnnl::algorithm::reduction_sum, src_md, dst_md, /*p=*/0, /*eps=*/0),
      attr, Engine());
  dnnl::eltwise_forward square(square_pd);
  dnnl::reduction sum(sum_pd);
  memory squares(src_md, Engine());
  Args square_call = {{DNNL_ARG_SRC, Wrap(a, src_md)}, {DNNL_ARG_DST, squares}};
  Args sum_call = {{DNNL_ARG_SRC, squares}, {DNNL_ARG_DST, Wrap(d, dst_md)}};
  BaselineRun r;
  r.run = [=] {
    square.execute(Stream(), square_call);
    sum.execute(Stream(), sum_call);
    Stream().wait();
  };
  r.output = [d] { return d.data<float>(); };
  r.output_size = bs;
  r.reference = [=](int64_t i) {
    const float* x = a.data<float>() + i * m * n;
    double total = 0;
    for (int64_t j = 0; j < m * n; ++j) total += static_cast<double>(x[j]) * x[j];
    return std::sqrt(total);
  };
  // tirtune counts a multiply-add per element and the square root.
  r.flops = 2.0 * bs * m * n + bs;
  r.reduction_length = m * n;
  r.info = {{"primitive", "eltwise square, then reduction sum with a sqrt post-op"},
            {"onednn_impl", std::string(sum_pd.impl_info_str())}};
  return r;
}

}  // namespace

std::vector<BaselineOperator> ReductionBaselines() {
  return {
      {"softmax", "M,N", Softmax, /*has_fused_tail=*/false},
      {"norm", "B,M,N", Norm, /*has_fused_tail=*/false},
  };
}

}  // namespace tirtune::bench
