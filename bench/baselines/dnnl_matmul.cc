// The oneDNN baselines of the matrix-multiply family: gemm as dnnl_sgemm (row-major C = A B, what
// the GEMM comparisons have always used), batch_matmul as the matmul primitive, and two subgraphs
// built on them. mbg: dnnl_sgemm, then bias + exact GELU as one binary primitive with an eltwise
// post-op (fused: the matmul primitive with bias and the GELU post-op). tbg: query and value
// transposed by reorders, then the batch matmul (fused: the matmul reads the strided inputs).
#include <dnnl.h>
#include <dnnl_debug.h>
#include <fmt/core.h>

#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "baselines/dnnl_memory.h"
#include "baselines/dnnl_operators.h"

namespace tirtune::bench {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using Args = std::unordered_map<int, memory>;
constexpr memory::data_type kF32 = memory::data_type::f32;

/// C[M,N] = A[M,K] B[K,N], or A W^T for a W stored [N,K] when `b_transposed` (a dense layer).
void Sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
           bool b_transposed = false) {
  dnnl_status_t s = b_transposed ? dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, k, b, k, 0.0f, c, n)
                                 : dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  if (s != dnnl_success) {
    throw std::runtime_error(fmt::format("dnnl_sgemm failed: {}", dnnl_status2str(s)));
  }
}

/// sum_i a[i * a_stride] * b[i * b_stride] over `k` terms, in double.
double Dot(const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t k) {
  double sum = 0;
  for (int64_t i = 0; i < k; ++i) sum += static_cast<double>(a[i * a_stride]) * b[i * b_stride];
  return sum;
}

double Gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

/// What a primitive chose, for the JSON line.
std::string ImplOf(const dnnl::primitive_desc& pd) { return pd.impl_info_str(); }

/// gemm: C[M,N] = A[M,K] B[K,N]; or dense (`b_transposed`): Y[M,N] = X[M,K] W[N,K]^T.
BaselineRun MatrixProduct(const std::vector<int64_t>& args, bool b_transposed) {
  CheckArgs(args, 3, 3, "M,N,K");
  int64_t m = args[0], n = args[1], k = args[2];
  NDArray a = RandomArray({m, k}, 1);
  NDArray b = b_transposed ? RandomArray({n, k}, 2) : RandomArray({k, n}, 2);
  NDArray c = NDArray::Empty({m, n}, DataType::Float(32));
  BaselineRun r;
  r.run = [=]() mutable {
    Sgemm(m, n, k, a.data<float>(), b.data<float>(), c.data<float>(), b_transposed);
  };
  r.output = [c] { return c.data<float>(); };
  r.output_size = m * n;
  r.reference = [=](int64_t i) {
    const float* column = b.data<float>() + (b_transposed ? i % n * k : i % n);
    return Dot(a.data<float>() + i / n * k, 1, column, b_transposed ? 1 : n, k);
  };
  r.flops = 2.0 * m * n * k;
  r.reduction_length = k;
  r.info = {{"primitive", b_transposed ? "dnnl_sgemm (B transposed)" : "dnnl_sgemm"}};
  return r;
}

BaselineRun Gemm(const std::vector<int64_t>& args, Tail) { return MatrixProduct(args, false); }
BaselineRun Dense(const std::vector<int64_t>& args, Tail) { return MatrixProduct(args, true); }

BaselineRun BatchMatmul(const std::vector<int64_t>& args, Tail) {
  CheckArgs(args, 4, 4, "B,N,M,K");
  int64_t bs = args[0], n = args[1], m = args[2], k = args[3];
  NDArray a = RandomArray({bs, n, k}, 1), b = RandomArray({bs, k, m}, 2);
  NDArray c = NDArray::Empty({bs, n, m}, DataType::Float(32));
  memory::desc a_md({bs, n, k}, kF32, tag::abc), b_md({bs, k, m}, kF32, tag::abc);
  memory::desc c_md({bs, n, m}, kF32, tag::abc);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), Engine());
  dnnl::matmul matmul(pd);
  Args call = {{DNNL_ARG_SRC, Wrap(a, a_md)},
               {DNNL_ARG_WEIGHTS, Wrap(b, b_md)},
               {DNNL_ARG_DST, Wrap(c, c_md)}};
  BaselineRun r;
  r.run = [=] {
    matmul.execute(Stream(), call);
    Stream().wait();
  };
  r.output = [c] { return c.data<float>(); };
  r.output_size = bs * n * m;
  r.reference = [=](int64_t i) {
    int64_t q = i / (n * m), row = i / m % n, col = i % m;
    return Dot(a.data<float>() + (q * n + row) * k, 1, b.data<float>() + q * k * m + col, m, k);
  };
  r.flops = 2.0 * bs * n * m * k;
  r.reduction_length = k;
  r.info = {{"primitive", "matmul"}, {"onednn_impl", ImplOf(pd)}};
  return r;
}

/// mbg: matmul A[M,K] B[K,N] + bias[N], then exact (erf) GELU.
BaselineRun MatmulBiasGelu(const std::vector<int64_t>& args, Tail tail) {
  CheckArgs(args, 3, 3, "M,N,K");
  int64_t m = args[0], n = args[1], k = args[2];
  NDArray a = RandomArray({m, k}, 1), b = RandomArray({k, n}, 2), bias = RandomArray({n}, 3);
  NDArray c = NDArray::Empty({m, n}, DataType::Float(32));
  memory::desc a_md({m, k}, kF32, tag::ab), b_md({k, n}, kF32, tag::ab);
  memory::desc c_md({m, n}, kF32, tag::ab), bias_md({1, n}, kF32, tag::ab);
  dnnl::post_ops gelu;
  gelu.append_eltwise(/*scale=*/1.0f, dnnl::algorithm::eltwise_gelu_erf, /*alpha=*/0, /*beta=*/0);
  dnnl::primitive_attr attr;
  attr.set_post_ops(gelu);
  BaselineRun r;
  if (tail == Tail::kSeparate) {
    dnnl::binary::primitive_desc pd(
        dnnl::binary::desc(dnnl::algorithm::binary_add, c_md, bias_md, c_md), attr, Engine());
    dnnl::binary bias_gelu(pd);
    // In place: the tail reads the GEMM's result and overwrites it.
    Args call = {{DNNL_ARG_SRC_0, Wrap(c, c_md)},
                 {DNNL_ARG_SRC_1, Wrap(bias, bias_md)},
                 {DNNL_ARG_DST, Wrap(c, c_md)}};
    r.run = [=]() mutable {
      Sgemm(m, n, k, a.data<float>(), b.data<float>(), c.data<float>());
      bias_gelu.execute(Stream(), call);
      Stream().wait();
    };
    r.info = {{"primitive", "dnnl_sgemm, then binary add + eltwise_gelu_erf post-op"},
              {"onednn_impl", ImplOf(pd)}};
  } else {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, bias_md, c_md), attr, Engine());
    dnnl::matmul matmul(pd);
    Args call = {{DNNL_ARG_SRC, Wrap(a, a_md)},
                 {DNNL_ARG_WEIGHTS, Wrap(b, b_md)},
                 {DNNL_ARG_BIAS, Wrap(bias, bias_md)},
                 {DNNL_ARG_DST, Wrap(c, c_md)}};
    r.run = [=] {
      matmul.execute(Stream(), call);
      Stream().wait();
    };
    r.info = {{"primitive", "matmul with bias + eltwise_gelu_erf post-op"},
              {"onednn_impl", ImplOf(pd)}};
  }
  r.output = [c] { return c.data<float>(); };
  r.output_size = m * n;
  r.reference = [=](int64_t i) {
    double x = Dot(a.data<float>() + i / n * k, 1, b.data<float>() + i % n, n, k);
    return Gelu(x + bias.data<float>()[i % n]);
  };
  // tirtune counts the bias add as 1 and GELU as 5 per element.
  r.flops = 2.0 * m * n * k + 6.0 * m * n;
  r.reduction_length = k;
  return r;
}

/// tbg: query and value [batch, seq, heads, dim] transposed to [batch, heads, seq, dim] and
/// [batch, heads, dim, seq], then C[batch, heads, seq, seq] = query_T value_T.
BaselineRun TransposeBatchMatmul(const std::vector<int64_t>& args, Tail tail) {
  CheckArgs(args, 4, 4, "batch,seq,heads,dim");
  int64_t bs = args[0], seq = args[1], heads = args[2], dim = args[3];
  NDArray q = RandomArray({bs, seq, heads, dim}, 1), v = RandomArray({bs, seq, heads, dim}, 2);
  NDArray c = NDArray::Empty({bs, heads, seq, seq}, DataType::Float(32));
  int64_t batch_stride = seq * heads * dim;
  // The two operands as the matmul sees them, over the original arrays.
  memory::desc q_view = Strided({bs, heads, seq, dim}, {batch_stride, dim, heads * dim, 1});
  memory::desc v_view = Strided({bs, heads, dim, seq}, {batch_stride, dim, 1, heads * dim});
  memory::desc c_md({bs, heads, seq, seq}, kF32, tag::abcd);
  BaselineRun r;
  if (tail == Tail::kSeparate) {
    memory::desc q_t_md({bs, heads, seq, dim}, kF32, tag::abcd);
    memory::desc v_t_md({bs, heads, dim, seq}, kF32, tag::abcd);
    memory q_src = Wrap(q, q_view), v_src = Wrap(v, v_view);
    memory q_t(q_t_md, Engine()), v_t(v_t_md, Engine());
    dnnl::reorder transpose_q(q_src, q_t), transpose_v(v_src, v_t);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(q_t_md, v_t_md, c_md), Engine());
    dnnl::matmul matmul(pd);
    Args call = {{DNNL_ARG_SRC, q_t}, {DNNL_ARG_WEIGHTS, v_t}, {DNNL_ARG_DST, Wrap(c, c_md)}};
    r.run = [=]() mutable {
      transpose_q.execute(Stream(), q_src, q_t);
      transpose_v.execute(Stream(), v_src, v_t);
      matmul.execute(Stream(), call);
      Stream().wait();
    };
    r.info = {{"primitive", "two reorders (the transposes), then matmul"},
              {"onednn_impl", ImplOf(pd)}};
  } else {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(q_view, v_view, c_md), Engine());
    dnnl::matmul matmul(pd);
    Args call = {{DNNL_ARG_SRC, Wrap(q, q_view)},
                 {DNNL_ARG_WEIGHTS, Wrap(v, v_view)},
                 {DNNL_ARG_DST, Wrap(c, c_md)}};
    r.run = [=] {
      matmul.execute(Stream(), call);
      Stream().wait();
    };
    r.info = {{"primitive", "matmul on the strided (untransposed) inputs"},
              {"onednn_impl", ImplOf(pd)}};
  }
  r.output = [c] { return c.data<float>(); };
  r.output_size = bs * heads * seq * seq;
  r.reference = [=](int64_t i) {
    int64_t col = i % seq, row = i / seq % seq, h = i / (seq * seq) % heads;
    int64_t b = i / (seq * seq * heads);
    const float* q_row = q.data<float>() + b * batch_stride + (row * heads + h) * dim;
    const float* v_row = v.data<float>() + b * batch_stride + (col * heads + h) * dim;
    return Dot(q_row, 1, v_row, 1, dim);
  };
  r.flops = 2.0 * bs * heads * seq * seq * dim;
  r.reduction_length = dim;
  return r;
}

}  // namespace

std::vector<BaselineOperator> MatmulBaselines() {
  return {
      {"gemm", "M,N,K", Gemm, /*has_fused_tail=*/false},
      {"dense", "M,N,K", Dense, /*has_fused_tail=*/false},
      {"batch_matmul", "B,N,M,K", BatchMatmul, /*has_fused_tail=*/false},
      {"mbg", "M,N,K", MatmulBiasGelu, /*has_fused_tail=*/true},
      {"tbg", "batch,seq,heads,dim", TransposeBatchMatmul, /*has_fused_tail=*/true},
  };
}

}  // namespace tirtune::bench
