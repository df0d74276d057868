// A cuBLAS composite read as one cuBLASLt product (cublas_plan.h).
#include "tirtune/offload/cublas_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <vector>

#include "composite_body.h"
#include "tirtune/offload/library.h"

namespace tirtune::offload {
namespace {

using body::PostOp;
using body::View;
using graph::Call;
using graph::CallKind;
using graph::Graph;

const char kLibrary[] = "cuBLAS";

[[noreturn]] void Decline(const Call& call, const std::string& why) {
  body::Decline(kLibrary, call, why);
}

// A stored matrix and whether cuBLAS reads it transposed.
struct Stored {
  bool transposed = false;
  cuda::LtMatrix matrix;
};

// The matrix X[P][Q] at strides (sp, sq) as cuBLAS's column-major X^T (Q x P): stored as is when
// its rows are contiguous (Q x P, leading dimension sp), else read transposed when its columns
// are (P x Q, leading dimension sq). A dimension of one element may have any stride.
std::optional<Stored> AsTransposed(int64_t p, int64_t q, int64_t sp, int64_t sq) {
  if (sq == 1 || q == 1) {
    if (p == 1) return Stored{false, {q, p, q}};
    if (sp >= q) return Stored{false, {q, p, sp}};
  }
  if (sp == 1 || p == 1) {
    if (q == 1) return Stored{true, {p, q, p}};
    if (sq >= p) return Stored{true, {p, q, sq}};
  }
  return std::nullopt;
}

}  // namespace

CublasPlan PlanCublas(const Graph& outer, const Call& call) {
  if (call.kind != CallKind::kGraph || !call.body) Decline(call, "not a composite");
  const body::Plan p = body::ReadBody(outer, call, kLibrary);
  const Call& main = *p.main;
  if (main.op != "dense" && main.op != "matmul" && main.op != "batch_matmul") {
    Decline(call, fmt::format("cuBLAS runs matrix products, not {}", main.op));
  }
  // The product L[..., M, K] R[..., K, N]; dense's weight [N, K] is R read through its strides.
  View l = body::ViewOrRowMajor(p.data_view, outer.value(call.args[p.data]).type.shape);
  View r = body::ViewOrRowMajor(p.weight_view, outer.value(call.args[p.weight]).type.shape);
  if (main.op == "dense") r = View{{r.dims[1], r.dims[0]}, {r.strides[1], r.strides[0]}};
  const size_t rank = l.dims.size();
  if (rank != r.dims.size() || rank < 2 || rank > 3) {
    Decline(call, fmt::format("operands of ranks {} and {}", l.dims.size(), r.dims.size()));
  }
  if (rank == 3 && l.dims[0] != r.dims[0]) Decline(call, "broadcast batches");
  const int64_t m = l.dims[rank - 2], k = l.dims[rank - 1], n = r.dims[rank - 1];
  if (r.dims[rank - 2] != k) Decline(call, "operands whose inner extents differ");
  if (m == 0 || n == 0 || k == 0 || (rank == 3 && l.dims[0] == 0)) {
    Decline(call, "an empty product");
  }
  std::optional<Stored> a = AsTransposed(k, n, r.strides[rank - 2], r.strides[rank - 1]);
  std::optional<Stored> b = AsTransposed(m, k, l.strides[rank - 2], l.strides[rank - 1]);
  if (!a || !b) {
    Decline(call, fmt::format("its {} operand is read through strides that no leading dimension "
                              "says (neither its rows nor its columns are contiguous)",
                              a ? "left" : "right"));
  }

  CublasPlan plan;
  cuda::LtMatmulDesc& d = plan.matmul;
  d.m = n;
  d.n = m;
  d.k = k;
  d.batch = rank == 3 ? l.dims[0] : 1;
  d.transpose_a = a->transposed;
  d.transpose_b = b->transposed;
  d.a = a->matrix;
  d.b = b->matrix;
  d.d = {n, m, n, n * m};
  if (d.batch > 1) {
    d.a.batch_stride = r.strides[0];
    d.b.batch_stride = l.strides[0];
  }
  plan.a = p.weight;
  plan.b = p.data;
  plan.bias = p.bias;

  // The post-ops cuBLASLt applies, in its order: C added, then the activation.
  bool relu = false, gelu = false;
  for (const PostOp& post : p.post) {
    if (relu || gelu) Decline(call, "a post-op after the activation (cuBLASLt applies it last)");
    switch (post.kind) {
      case PostOp::kSum:
        plan.addend = post.addend;
        break;
      case PostOp::kRelu:
        relu = true;
        break;
      case PostOp::kGeluTanh:
        gelu = true;
        break;
      case PostOp::kGelu:
        Decline(call, "GELU of erf (cuBLASLt's GELU epilogue is the tanh approximation)");
      case PostOp::kClip:
        Decline(call, "clip is not a cuBLASLt epilogue");
      case PostOp::kMul:
      case PostOp::kAdd:
        Decline(call, "a per-channel constant after the product is not a cuBLASLt epilogue");
    }
  }
  d.accumulate = plan.addend >= 0;
  const bool bias = plan.bias >= 0;
  d.epilogue = relu   ? (bias ? cuda::LtEpilogue::kReluBias : cuda::LtEpilogue::kRelu)
               : gelu ? (bias ? cuda::LtEpilogue::kGeluBias : cuda::LtEpilogue::kGelu)
               : bias ? cuda::LtEpilogue::kBias
                      : cuda::LtEpilogue::kDefault;

  std::vector<std::string> notes;
  if (d.transpose_a) notes.push_back("A transposed");
  if (d.transpose_b) notes.push_back("B transposed");
  if (bias) notes.push_back("bias");
  if (d.accumulate) notes.push_back("sum");
  if (relu) notes.push_back("ReLU");
  if (gelu) notes.push_back("GELU (tanh)");
  plan.summary =
      fmt::format("{} {}{}x{}x{}{}", main.op, d.batch > 1 ? fmt::format("{} x ", d.batch) : "", m,
                  n, k, notes.empty() ? "" : fmt::format(" ({})", fmt::join(notes, ", ")));
  return plan;
}

}  // namespace tirtune::offload
