// The oneDNN backend (library.h), built as the module libtirtune_dnnl.so that DnnlBackend loads
// (dnnl_loader.cc), so that a tirtune without oneDNN still runs. A composite's body is read as one
// primitive and its post-ops:
//
//   conv2d(x, W) -> bias_add(., b) -> add(., y) -> relu      convolution, bias b,
//                                                            post-ops [sum (y copied into the
//                                                            output first), eltwise_relu]
//
// Activations keep the graph's layouts (NWC/NHWC/NDHWC, row-major matrices), described to oneDNN
// by strides; constant weights are reordered once, at Build, into the layout the primitive
// prefers (format `any`). What cannot be said this way is declined with the reason.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "../composite_body.h"
#include "tirtune/graph/op_registry.h"
#include "tirtune/offload/library.h"
#include "winograd.h"

extern "C" void omp_set_num_threads(int);  // oneDNN's threads (Debian builds it on OpenMP)

namespace tirtune::offload {
namespace {

using body::AttrsOf;
using body::Plan;
using body::PostOp;
using body::RowMajorStrides;
using dnnl::memory;
using graph::Call;
using graph::CallKind;
using graph::Graph;
using graph::ValueId;
using graph::ValueKind;

[[noreturn]] void Decline(const Call& call, const std::string& why) {
  body::Decline("oneDNN", call, why);
}

// An activation [N, S1..Sk, C] as oneDNN's logical {N, C, S1..Sk}.
memory::desc ChannelsLast(const std::vector<int64_t>& shape) {
  memory::dims phys = RowMajorStrides(shape);
  int k = static_cast<int>(shape.size()) - 2;
  memory::dims dims = {shape[0], shape[k + 1]}, strides = {phys[0], phys[k + 1]};
  for (int i = 1; i <= k; ++i) {
    dims.push_back(shape[i]);
    strides.push_back(phys[i]);
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

class DnnlKernel : public LibraryKernel {
 public:
  DnnlKernel(const Graph& graph, const Call& call, const LibraryOptions& options)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), threads_(options.threads) {
    plan_ = body::ReadBody(graph, call, "oneDNN");
    for (ValueId a : call.args) arg_types_.push_back(graph.value(a).type);
    out_type_ = graph.value(call.output).type;
    const Call& main = *plan_.main;
    main_type_ = call.body->value(main.output).type;
    if (plan_.data_view && plan_.data_view->dims.size() == 3) LiftBatch();
    FoldScaleShift(graph, call);
    if (call.attrs.Has(graph::kAlgorithmAttr)) {
      BuildWinograd(graph, call);
      return;
    }
    dnnl::post_ops ops;
    for (size_t i = 0; i < plan_.post.size(); ++i) {
      const PostOp& p = plan_.post[i];
      switch (p.kind) {
        case PostOp::kMul:
        case PostOp::kAdd: {
          // The constant per channel: {1, C, 1, ...} against a convolution's {N, C, ...},
          // {1, .., N} against a matrix product's {.., M, N}.
          const int rank = static_cast<int>(main_type_.shape.size());
          const bool conv = main.op.rfind("conv", 0) == 0;
          memory::dims dims(rank, 1);
          dims[conv ? 1 : rank - 1] = main_type_.shape.back();
          memory::desc md(dims, memory::data_type::f32, RowMajorStrides(dims));
          const graph::Value& v = graph.value(call.args[p.addend]);
          memory m(md, engine_);
          std::memcpy(m.get_data_handle(), v.data.raw(), v.data.nbytes());
          binary_.emplace_back(static_cast<int>(i), m);
          ops.append_binary(
              p.kind == PostOp::kMul ? dnnl::algorithm::binary_mul : dnnl::algorithm::binary_add,
              md);
          break;
        }
        case PostOp::kSum:
          ops.append_sum(1.0f);
          break;
        case PostOp::kRelu:
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
          break;
        case PostOp::kClip:
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, p.alpha, p.beta);
          break;
        case PostOp::kGelu:
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
          break;
        case PostOp::kGeluTanh:
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
          break;
      }
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    try {
      if (main.op == "softmax") {
        BuildSoftmax(main);
      } else if (plan_.weight < 0) {
        BuildPool(main);
      } else if (main.op == "conv2d_transpose") {
        BuildDeconv(main, graph.value(call.args[plan_.weight]), attr, call);
      } else if (main.op.rfind("conv", 0) == 0) {
        BuildConv(main, graph.value(call.args[plan_.weight]), attr, call);
      } else {
        BuildMatmul(main, graph.value(call.args[plan_.weight]), attr, call);
      }
    } catch (const dnnl::error& e) {
      Decline(call, fmt::format("oneDNN refused it ({})", e.what()));
    }
    // oneDNN's reference implementations are correctness fallbacks, far slower than a kernel.
    if (impl_.rfind("ref", 0) == 0) {
      Decline(call, fmt::format("oneDNN has only its reference implementation ({}) for it", impl_));
    }
    if (folded_) {
      bias_ = memory(bias_desc_, engine_);
      std::memcpy(bias_.get_data_handle(), folded_bias_.data(), folded_bias_.size() * 4);
      bias_constant_ = true;
    } else if (plan_.bias >= 0) {
      const graph::Value& b = graph.value(call.args[plan_.bias]);
      bias_ = memory(bias_desc_, engine_);
      if (b.kind == ValueKind::kConstant) {
        std::memcpy(bias_.get_data_handle(), b.data.raw(), b.data.nbytes());
        bias_constant_ = true;
      }
    }
    // The arguments of every run, built once: Run only points src, dst (and a weight or bias that
    // is not a constant) at the call's data.
    exec_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DST, dst_}};
    if (plan_.weight >= 0) exec_[DNNL_ARG_WEIGHTS] = weights_;
    for (const auto& [index, m] : binary_) {
      exec_[DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1] = m;
    }
    if (HasBias()) exec_[DNNL_ARG_BIAS] = bias_;
    const std::string& name = graph.value(call.output).name;
    describe_ = fmt::format("oneDNN {} for %{} ({}{}{}{}; {})", main.op, name,
                            HasBias() ? "bias" : "no bias",
                            folded_ ? ", scale and shift folded into the weights" : "",
                            plan_.post.empty() ? "" : ", post-ops ", PostOpNames(), impl_);
  }

  void Run(const std::vector<const void*>& args, void* out) override {
    if (args.size() != arg_types_.size()) {
      TT_USER_ERROR("{}: {} arguments, expected {}", describe_, args.size(), arg_types_.size());
    }
    if (winograd_) {
      omp_set_num_threads(threads_);  // oneDNN's product's threads; the transforms say theirs
      winograd_->Run(
          static_cast<const float*>(args[plan_.data]),
          winograd_addend_ >= 0 ? static_cast<const float*>(args[winograd_addend_]) : nullptr,
          static_cast<float*>(out));
      return;
    }
    if (sgemm_) {
      const Sgemm& g = *sgemm_;
      omp_set_num_threads(threads_);
      dnnl_status_t status = dnnl_sgemm(g.trans_a, g.trans_b, g.m, g.n, g.k, 1.0f,
                                        static_cast<const float*>(args[plan_.data]), g.lda,
                                        static_cast<const float*>(args[plan_.weight]), g.ldb, 0.0f,
                                        static_cast<float*>(out), g.n);
      if (status != dnnl_success)
        TT_USER_ERROR("{}: dnnl_sgemm failed (status {})", describe_, static_cast<int>(status));
      return;
    }
    const int64_t out_bytes = out_type_.NumElements() * out_type_.dtype.bytes();
    for (const PostOp& p : plan_.post) {
      if (p.kind == PostOp::kSum) std::memcpy(out, args[p.addend], out_bytes);
    }
    src_.set_data_handle(const_cast<void*>(args[plan_.data]));
    dst_.set_data_handle(out);
    if (plan_.weight >= 0 && !weights_constant_) {
      weights_.set_data_handle(const_cast<void*>(args[plan_.weight]));
    }
    if (HasBias() && !bias_constant_) {
      const graph::TensorType& b = arg_types_[plan_.bias];
      std::memcpy(bias_.get_data_handle(), args[plan_.bias], b.NumElements() * b.dtype.bytes());
    }
    omp_set_num_threads(threads_);
    primitive_.execute(stream_, exec_);
    stream_.wait();
  }

  std::string Describe() const override { return describe_; }

  std::vector<ByteRange> ConstantMemory() const override {
    if (winograd_) return winograd_->ConstantMemory();
    std::vector<ByteRange> ranges;
    auto add = [&](const memory& m) {
      if (m) ranges.push_back({m.get_data_handle(), m.get_desc().get_size()});
    };
    if (weights_constant_) add(weights_);
    if (bias_constant_) add(bias_);
    for (const auto& [index, m] : binary_) add(m);
    return ranges;
  }

 private:
  bool HasBias() const { return plan_.bias >= 0 || folded_; }

  // A product per batch of strided views (attention's heads read in place): oneDNN 2.6 runs a
  // 3-D product whose batches are not dense only as gemm:jit, but the same product behind a
  // leading unit dimension as brgemm (tbg 1,128,16,64: 0.073 against 0.088 ms on 2 Zen 5
  // cores). The primitive sees [1, B, M, K] x [1, B, K, N] -> [1, B, M, N]: the same memory.
  void LiftBatch() {
    for (body::View* v : {&*plan_.data_view, &*plan_.weight_view}) {
      int64_t span = 1;
      for (size_t d = 0; d < v->dims.size(); ++d) span = std::max(span, v->dims[d] * v->strides[d]);
      v->dims.insert(v->dims.begin(), 1);
      v->strides.insert(v->strides.begin(), span);
    }
    main_type_.shape.insert(main_type_.shape.begin(), 1);
  }

  // A batch norm's scale and shift right after the primitive folded into constant weights and
  // the bias (body::FoldScaleShift), so that oneDNN sees no binary post-op (with which it has no
  // fast kernel once a sum follows).
  void FoldScaleShift(const Graph& graph, const Call& call) {
    std::optional<body::FoldedScaleShift> f =
        body::FoldScaleShift(graph, call, plan_, out_type_.shape.back());
    if (!f) return;
    folded_weight_ = std::move(f->weight);
    folded_bias_ = std::move(f->bias);
    folded_ = true;
    plan_.post.erase(plan_.post.begin(),
                     plan_.post.begin() + static_cast<std::ptrdiff_t>(f->post_ops));
  }

  std::string PostOpNames() const {
    std::vector<std::string> names;
    for (const PostOp& p : plan_.post) {
      static const char* kNames[] = {"sum", "relu", "clip", "gelu", "mul", "add", "gelu_tanh"};
      names.push_back(kNames[p.kind]);
    }
    return fmt::format("{}", fmt::join(names, " + "));
  }

  // Weights [K1..Kk, CI / groups, CO]: logical {O, I, K...}, or {G, O/G, I/G, K...} grouped.
  memory::desc ConvWeights(const std::vector<int64_t>& w, int64_t groups) {
    memory::dims phys = RowMajorStrides(w);
    int k = static_cast<int>(w.size()) - 2;
    int64_t ci_g = w[k], co = w[k + 1];
    memory::dims dims, strides;
    if (groups == 1) {
      dims = {co, ci_g};
      strides = {1, phys[k]};
    } else {
      dims = {groups, co / groups, ci_g};
      strides = {co / groups, 1, phys[k]};
    }
    for (int i = 0; i < k; ++i) {
      dims.push_back(w[i]);
      strides.push_back(phys[i]);
    }
    return memory::desc(dims, memory::data_type::f32, strides);
  }

  void BuildConv(const Call& main, const graph::Value& weight, const dnnl::primitive_attr& attr,
                 const Call& call) {
    const std::vector<int64_t>& x = arg_types_[plan_.data].shape;
    const std::vector<int64_t>& w = arg_types_[plan_.weight].shape;
    const std::vector<int64_t>& y = main_type_.shape;
    const int k = static_cast<int>(x.size()) - 2;
    const graph::Attrs attrs = AttrsOf(main);
    const int64_t stride = attrs.GetInt("stride"), pad = attrs.GetInt("pad");
    const int64_t dilation = attrs.GetInt("dilation"), groups = attrs.GetInt("groups");
    if (weight.kind != ValueKind::kConstant) Decline(call, "its weight is not a constant");
    memory::dims strides(k, stride), dilates(k, dilation - 1), pad_l(k, pad), pad_r(k);
    for (int i = 0; i < k; ++i) {
      pad_r[i] = (y[i + 1] - 1) * stride + (w[i] - 1) * dilation + 1 - x[i + 1] - pad;
    }
    memory::desc src = ChannelsLast(x), dst = ChannelsLast(y);
    memory::desc user_w = ConvWeights(w, groups);
    memory::desc any_w(user_w.dims(), memory::data_type::f32, memory::format_tag::any);
    bias_desc_ = memory::desc({y.back()}, memory::data_type::f32, memory::format_tag::a);
    auto desc =
        HasBias() ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                    dnnl::algorithm::convolution_direct, src, any_w,
                                                    bias_desc_, dst, strides, dilates, pad_l, pad_r)
                  : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                    dnnl::algorithm::convolution_direct, src, any_w,
                                                    dst, strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, engine_);
    Keep<dnnl::convolution_forward>(pd, src, dst);
    ReorderWeights(user_w, pd.weights_desc(), folded_ ? folded_weight_ : weight.data);
  }

  // max_pool2d / avg_pool2d (the window inside the input counted, oneDNN's exclude_padding) in
  // NHWC, a square window and symmetric padding.
  void BuildPool(const Call& main) {
    const std::vector<int64_t>& x = arg_types_[plan_.data].shape;
    const std::vector<int64_t>& y = main_type_.shape;
    const graph::Attrs attrs = AttrsOf(main);
    const int64_t kernel = attrs.GetInt("kernel"), stride = attrs.GetInt("stride");
    const int64_t pad = attrs.GetInt("pad");
    memory::dims strides(2, stride), window(2, kernel), pad_l(2, pad), pad_r(2);
    for (int i = 0; i < 2; ++i) pad_r[i] = (y[i + 1] - 1) * stride + kernel - x[i + 1] - pad;
    memory::desc src = ChannelsLast(x), dst = ChannelsLast(y);
    auto algorithm = main.op == "max_pool2d" ? dnnl::algorithm::pooling_max
                                             : dnnl::algorithm::pooling_avg_exclude_padding;
    dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, src, dst,
                                     strides, window, pad_l, pad_r);
    Keep<dnnl::pooling_forward>(dnnl::pooling_forward::primitive_desc(desc, engine_), src, dst);
  }

  // conv2d_transpose in NHWC with weights [KH, KW, CI, CO] (logical {CO, CI, KH, KW}):
  // out[y, x] sums data[iy, ix] * W[kh, kw] over y = iy * stride - pad + kh (likewise x).
  void BuildDeconv(const Call& main, const graph::Value& weight, const dnnl::primitive_attr& attr,
                   const Call& call) {
    const std::vector<int64_t>& x = arg_types_[plan_.data].shape;
    const std::vector<int64_t>& w = arg_types_[plan_.weight].shape;
    const std::vector<int64_t>& y = main_type_.shape;
    if (weight.kind != ValueKind::kConstant) Decline(call, "its weight is not a constant");
    const graph::Attrs attrs = AttrsOf(main);
    const int64_t stride = attrs.GetInt("stride"), pad = attrs.GetInt("pad");
    const int64_t kh = w[0], kw = w[1], ci = w[2], co = w[3];
    memory::dims strides(2, stride), pad_l(2, pad), pad_r(2, pad);
    memory::desc src = ChannelsLast(x), dst = ChannelsLast(y);
    memory::desc user_w({co, ci, kh, kw}, memory::data_type::f32,
                        memory::dims{1, co, kw * ci * co, ci * co});
    memory::desc any_w(user_w.dims(), memory::data_type::f32, memory::format_tag::any);
    bias_desc_ = memory::desc({co}, memory::data_type::f32, memory::format_tag::a);
    const auto direct = dnnl::algorithm::deconvolution_direct;
    const auto inference = dnnl::prop_kind::forward_inference;
    auto desc = HasBias()
                    ? dnnl::deconvolution_forward::desc(inference, direct, src, any_w, bias_desc_,
                                                        dst, strides, pad_l, pad_r)
                    : dnnl::deconvolution_forward::desc(inference, direct, src, any_w, dst, strides,
                                                        pad_l, pad_r);
    dnnl::deconvolution_forward::primitive_desc pd(desc, attr, engine_);
    Keep<dnnl::deconvolution_forward>(pd, src, dst);
    ReorderWeights(user_w, pd.weights_desc(), folded_ ? folded_weight_ : weight.data);
  }

  // softmax along one axis of a row-major tensor.
  void BuildSoftmax(const Call& main) {
    const std::vector<int64_t>& x = arg_types_[plan_.data].shape;
    int64_t axis = AttrsOf(main).GetInt("axis");
    if (axis < 0) axis += static_cast<int64_t>(x.size());
    memory::desc md(memory::dims(x.begin(), x.end()), memory::data_type::f32, RowMajorStrides(x));
    dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md,
                                     static_cast<int>(axis));
    Keep<dnnl::softmax_forward>(dnnl::softmax_forward::primitive_desc(desc, engine_), md, md);
  }

  // dense: data [M, K], weight [N, K] (read as {K, N}); matmul / batch_matmul: [.., M, K] x
  // [.., K, N] with equal batches, each operand maybe a strided view (transposed in the body).
  void BuildMatmul(const Call& main, const graph::Value& weight, const dnnl::primitive_attr& attr,
                   const Call& call) {
    const body::View a = body::ViewOrRowMajor(plan_.data_view, arg_types_[plan_.data].shape);
    const body::View b = body::ViewOrRowMajor(plan_.weight_view, arg_types_[plan_.weight].shape);
    const std::vector<int64_t>& y = main_type_.shape;
    if (a.dims.size() != b.dims.size() || a.dims.size() < 2 || a.dims.size() > 4) {
      Decline(call, fmt::format("operands of ranks {} and {}", a.dims.size(), b.dims.size()));
    }
    if (!std::equal(a.dims.begin(), a.dims.end() - 2, b.dims.begin())) {
      Decline(call, "broadcast batches");
    }
    if (main.op == "matmul" && weight.kind != ValueKind::kConstant && !HasBias() &&
        plan_.post.empty() && UseSgemm(a, b)) {
      return;
    }
    memory::desc user_b;
    if (main.op == "dense") {
      user_b =
          memory::desc({b.dims[1], b.dims[0]}, memory::data_type::f32, memory::dims{1, b.dims[1]});
    } else {
      user_b = memory::desc(b.dims, memory::data_type::f32, b.strides);
    }
    memory::desc src(a.dims, memory::data_type::f32, a.strides);
    memory::desc dst(memory::dims(y.begin(), y.end()), memory::data_type::f32, RowMajorStrides(y));
    memory::dims bias_dims(y.size(), 1);
    bias_dims.back() = y.back();
    bias_desc_ = memory::desc(bias_dims, memory::data_type::f32, RowMajorStrides(bias_dims));
    bool constant = weight.kind == ValueKind::kConstant;
    memory::desc weights_md =
        constant ? memory::desc(user_b.dims(), memory::data_type::f32, memory::format_tag::any)
                 : user_b;
    auto desc = HasBias() ? dnnl::matmul::desc(src, weights_md, bias_desc_, dst)
                          : dnnl::matmul::desc(src, weights_md, dst);
    dnnl::matmul::primitive_desc pd(desc, attr, engine_);
    Keep<dnnl::matmul>(pd, src, dst);
    if (constant) {
      ReorderWeights(user_b, pd.weights_desc(), folded_ ? folded_weight_ : weight.data);
    } else {
      weights_ = memory(user_b, engine_, nullptr);
    }
  }

  // A product of two run-time matrices with nothing after it, each operand rows or columns of
  // unit stride: dnnl_sgemm, oneDNN's BLAS entry point, which is faster than its matmul primitive
  // on such products of run-time operands (1024^3: 4.6 against 5.0-5.2 ms on 2 Zen 5 cores).
  bool UseSgemm(const body::View& a, const body::View& b) {
    auto layout = [](const body::View& v, char* trans, int64_t* ld) {
      if (v.strides[1] == 1 && v.strides[0] >= v.dims[1]) {
        *trans = 'N';
        *ld = v.strides[0];
      } else if (v.strides[0] == 1 && v.strides[1] >= v.dims[0]) {
        *trans = 'T';
        *ld = v.strides[1];
      } else {
        return false;
      }
      return true;
    };
    Sgemm g{.m = a.dims[0], .n = b.dims[1], .k = a.dims[1]};
    if (!layout(a, &g.trans_a, &g.lda) || !layout(b, &g.trans_b, &g.ldb)) return false;
    sgemm_ = g;
    impl_ = "dnnl_sgemm";
    return true;
  }

  // The composite as a WinogradConv (kAlgorithmAttr names which), with the folded weight and
  // bias when a batch norm folded.
  void BuildWinograd(const Graph& graph, const Call& call) {
    const std::string algorithm = call.attrs.GetString(graph::kAlgorithmAttr);
    std::string why;
    std::optional<WinogradPlan> p =
        PlanWinograd(plan_, arg_types_, main_type_, algorithm, threads_, &why);
    if (!p) Decline(call, why);
    const graph::Value& weight = graph.value(call.args[plan_.weight]);
    if (weight.kind != ValueKind::kConstant) Decline(call, "its weight is not a constant");
    std::vector<float> bias;
    if (folded_) {
      bias = folded_bias_;
    } else if (plan_.bias >= 0) {
      const graph::Value& b = graph.value(call.args[plan_.bias]);
      if (b.kind != ValueKind::kConstant) Decline(call, "its bias is not a constant");
      bias.assign(static_cast<const float*>(b.data.raw()),
                  static_cast<const float*>(b.data.raw()) + b.data.size());
    }
    const NDArray& w = folded_ ? folded_weight_ : weight.data;
    try {
      winograd_ = std::make_unique<WinogradConv>(p->spec, static_cast<const float*>(w.raw()),
                                                 bias.empty() ? nullptr : bias.data(), p->post);
    } catch (const dnnl::error& e) {
      Decline(call, fmt::format("oneDNN refused Winograd's product ({})", e.what()));
    } catch (const std::invalid_argument& e) {
      Decline(call, e.what());
    }
    winograd_addend_ = p->addend;
    describe_ = fmt::format("oneDNN backend: {} for %{} ({}{}{}{})", winograd_->Describe(),
                            graph.value(call.output).name, bias.empty() ? "no bias" : "bias",
                            folded_ ? ", scale and shift folded into the weights" : "",
                            plan_.post.empty() ? "" : ", post-ops ", PostOpNames());
  }

  // Keeps the primitive of `pd`; its source and destination get their data per run.
  template <typename Primitive, typename PrimitiveDesc>
  void Keep(const PrimitiveDesc& pd, const memory::desc& src, const memory::desc& dst) {
    primitive_ = Primitive(pd);
    src_ = memory(src, engine_, nullptr);
    dst_ = memory(dst, engine_, nullptr);
    impl_ = pd.impl_info_str();
  }

  void ReorderWeights(const memory::desc& user, const memory::desc& wanted, const NDArray& data) {
    memory from(user, engine_, const_cast<void*>(data.raw()));
    weights_ = memory(wanted, engine_);
    dnnl::reorder(from, weights_).execute(stream_, from, weights_);
    stream_.wait();
    weights_constant_ = true;
  }

  struct Sgemm {  // C[m, n] = op(A)[m, k] op(B)[k, n], row-major
    int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0;
    char trans_a = 'N', trans_b = 'N';
  };

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::optional<Sgemm> sgemm_;  // the product runs as dnnl_sgemm, not as primitive_
  std::unique_ptr<WinogradConv> winograd_;  // the composite runs as this instead
  int winograd_addend_ = -1;
  int threads_;
  Plan plan_;
  std::vector<graph::TensorType> arg_types_;
  graph::TensorType out_type_;   // the composite's result
  graph::TensorType main_type_;  // the primitive's: the same elements, maybe another shape
  dnnl::primitive primitive_;
  memory src_, dst_, weights_, bias_;
  std::vector<std::pair<int, memory>> binary_;  // per-channel constants, by post-op index
  std::unordered_map<int, memory> exec_;        // the primitive's arguments (handles)
  bool folded_ = false;  // FoldScaleShift applied: the weights and bias below replace the args'
  NDArray folded_weight_;
  std::vector<float> folded_bias_;
  memory::desc bias_desc_;
  bool weights_constant_ = false, bias_constant_ = false;
  std::string impl_, describe_;
};

class Dnnl : public LibraryBackend {
 public:
  std::string Name() const override { return "dnnl"; }

  std::vector<graph::FusionPattern> Patterns() const override {
    using graph::IsConstant;
    using graph::IsOp;
    using graph::Optional;
    using graph::Pattern;
    using graph::Wildcard;
    auto f32 = DataType::Float(32);
    // A primitive, then up to five of: a bias, a sum, a per-channel constant added or
    // multiplied (a batch norm after SimplifyInference), an activation. Which orders oneDNN can
    // run is decided by the check, which is Build's own reading of the body (ReadBody).
    // GELU written out: x * (erf(x / sqrt(2)) + 1) * 0.5, x named so both uses are one value.
    int level = 0;
    auto gelu_chain = [&](const Pattern& p) {
      Pattern x = p.Named(fmt::format("gelu_x{}", level++));
      Pattern erf = IsOp("erf", {IsOp("divide", {x, IsConstant()})});
      Pattern plus_one = IsOp("add", {erf, IsConstant()}) | IsOp("add", {IsConstant(), erf});
      Pattern times_x = IsOp("multiply", {x, plus_one}) | IsOp("multiply", {plus_one, x});
      return IsOp("multiply", {times_x, IsConstant()}) | IsOp("multiply", {IsConstant(), times_x});
    };
    auto step = [&](const Pattern& p) {
      return gelu_chain(p) | IsOp("bias_add", {p, IsConstant()}) | IsOp("add", {p, Wildcard()}) |
             IsOp("add", {Wildcard(), p}) | IsOp("multiply", {p, IsConstant()}) |
             IsOp("multiply", {IsConstant(), p}) | IsOp("relu", {p}) | IsOp("clip", {p}) |
             IsOp("gelu", {p}) | IsOp("gelu_tanh", {p}) | IsOp("reshape", {p}) | p;
    };
    auto chain = [&](const Pattern& main) {
      Pattern p = main;
      for (int i = 0; i < 5; ++i) p = step(p);
      return p;
    };
    std::vector<graph::FusionPattern> patterns;
    for (const char* conv : {"conv1d", "conv2d", "conv3d"}) {
      patterns.push_back(
          {fmt::format("dnnl.{}", conv),
           chain(IsOp(conv, {Wildcard().HasDtype(f32), IsConstant().HasDtype(f32)}))});
    }
    patterns.push_back(
        {"dnnl.dense", chain(IsOp("dense", {Wildcard().HasDtype(f32), IsConstant()}))});
    patterns.push_back(
        {"dnnl.conv2d_transpose",
         chain(IsOp("conv2d_transpose", {Wildcard().HasDtype(f32), IsConstant().HasDtype(f32)}))});
    for (const char* op : {"max_pool2d", "avg_pool2d", "softmax"}) {
      patterns.push_back({fmt::format("dnnl.{}", op), IsOp(op, {Wildcard().HasDtype(f32)})});
    }
    // A matrix product of operands transposed or reshaped first (attention's heads moved
    // ahead of the tokens): oneDNN reads them in place through strides. Before the plain
    // product, which takes what the check refuses here.
    for (const char* mm : {"matmul", "batch_matmul"}) {
      Pattern x = Wildcard().HasDtype(f32);
      patterns.push_back({fmt::format("dnnl.{}_of_views", mm),
                          chain(IsOp(mm, {body::ViewedOperand(x), body::ViewedOperand(x) | x}) |
                                IsOp(mm, {x, body::ViewedOperand(x)}))});
    }
    for (const char* mm : {"matmul", "batch_matmul"}) {
      patterns.push_back({fmt::format("dnnl.{}", mm),
                          chain(IsOp(mm, {Wildcard().HasDtype(f32), Wildcard().HasDtype(f32)}))});
    }
    // The composite built as Build builds it (reading the body, then oneDNN's primitive: a
    // shape it would run with a reference implementation only is refused here too).
    body::CheckByBuilding(&patterns, [](const Graph& g, const Call& probe) {
      DnnlKernel(g, probe, LibraryOptions{});
    });
    return patterns;
  }

  std::unique_ptr<LibraryKernel> Build(const Graph& graph, const Call& call,
                                       const LibraryOptions& options) const override {
    if (call.kind != CallKind::kGraph || !call.body) {
      throw LibraryDeclined(fmt::format("oneDNN cannot run {}: not a composite", call.op));
    }
    return std::make_unique<DnnlKernel>(graph, call, options);
  }

  std::vector<std::string> Algorithms(const Graph& graph, const Call& call) const override {
    return WinogradAlgorithms(graph, call);
  }
};

}  // namespace

}  // namespace tirtune::offload

// The module's one entry point (dnnl_loader.cc finds it with dlsym).
extern "C" const tirtune::offload::LibraryBackend* tirtune_dnnl_backend() {
  static const tirtune::offload::Dnnl backend;
  return &backend;
}
