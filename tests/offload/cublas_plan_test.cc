// The cuBLAS backend proven on the CPU: each composite its patterns make is planned as one
// cuBLASLt product (cublas_plan.h), and that product, evaluated on the host exactly as cuBLASLt
// defines it (column-major matrices, op N/T, leading dimensions, strided batches, C, the bias per
// row of D, the epilogue's activation), must give the interpreter's result of the composite.
// Every stored matrix must also be one cuBLASLt accepts (ld >= rows). What one product cannot say
// is declined with the reason. On a GPU host the same kernels are verified for real before they
// are timed (measure/gpu_worker.cc).
#include "tirtune/offload/cublas_plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../graph/graph_testing.h"
#include "offload_testing.h"
#include "tirtune/offload/library.h"
#include "tirtune/runtime/cuda_driver.h"

namespace tirtune::offload {
namespace {

using graph::AddOpCall;
using graph::F32;
using graph::Graph;
using graph::ValueId;
using graph::testing::RandomArray;

// Element (i, j) of op(X), X stored column-major at `x` with leading dimension `ld`.
float At(const float* x, const cuda::LtMatrix& stored, bool transposed, int64_t i, int64_t j) {
  return transposed ? x[j + i * stored.ld] : x[i + j * stored.ld];
}

// What cublasLtMatmul computes for `d` (float32, alpha 1, beta 1 with C else 0).
void EmulateLtMatmul(const cuda::LtMatmulDesc& d, const float* a, const float* b, const float* c,
                     const float* bias, float* out) {
  // The stored shapes cuBLASLt checks: op(A) is m x k, op(B) k x n, D m x n; ld >= rows.
  EXPECT_EQ(d.transpose_a ? d.a.cols : d.a.rows, d.m);
  EXPECT_EQ(d.transpose_a ? d.a.rows : d.a.cols, d.k);
  EXPECT_EQ(d.transpose_b ? d.b.cols : d.b.rows, d.k);
  EXPECT_EQ(d.transpose_b ? d.b.rows : d.b.cols, d.n);
  EXPECT_EQ(d.d.rows, d.m);
  EXPECT_EQ(d.d.cols, d.n);
  for (const cuda::LtMatrix* x : {&d.a, &d.b, &d.d})
    EXPECT_GE(x->ld, std::max<int64_t>(x->rows, 1));
  const bool has_bias = d.epilogue == cuda::LtEpilogue::kBias ||
                        d.epilogue == cuda::LtEpilogue::kReluBias ||
                        d.epilogue == cuda::LtEpilogue::kGeluBias;
  EXPECT_EQ(has_bias, bias != nullptr);
  for (int64_t p = 0; p < d.batch; ++p) {
    const float* pa = a + p * d.a.batch_stride;
    const float* pb = b + p * d.b.batch_stride;
    for (int64_t j = 0; j < d.n; ++j) {
      for (int64_t i = 0; i < d.m; ++i) {
        double acc = 0;
        for (int64_t l = 0; l < d.k; ++l) {
          acc += static_cast<double>(At(pa, d.a, d.transpose_a, i, l)) *
                 At(pb, d.b, d.transpose_b, l, j);
        }
        const int64_t at = p * d.d.batch_stride + i + j * d.d.ld;
        if (d.accumulate) acc += c[at];
        if (has_bias) acc += bias[i];
        if (d.epilogue == cuda::LtEpilogue::kRelu || d.epilogue == cuda::LtEpilogue::kReluBias) {
          acc = std::max(acc, 0.0);
        }
        if (d.epilogue == cuda::LtEpilogue::kGelu || d.epilogue == cuda::LtEpilogue::kGeluBias) {
          acc =
              0.5 * acc * (1 + std::tanh(0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)));
        }
        out[at] = static_cast<float>(acc);
      }
    }
  }
}

// Fuses `g` with cuBLAS's patterns and runs each composite's plan on the host.
std::string RunsLikeTheInterpreter(const Graph& g, int composites = 1) {
  return testing::RunsLikeTheInterpreter(
      g, CublasBackend()->Patterns(),
      [](const Graph& f, const graph::Call& call, const std::vector<const NDArray*>& args,
         NDArray& out) {
        CublasPlan plan = PlanCublas(f, call);
        auto data = [&](int arg) {
          return arg < 0 ? nullptr : static_cast<const float*>(args[arg]->raw());
        };
        EXPECT_GE(plan.a, 0);
        EXPECT_GE(plan.b, 0);
        EXPECT_EQ(plan.matmul.accumulate, plan.addend >= 0);
        EmulateLtMatmul(plan.matmul, data(plan.a), data(plan.b), data(plan.addend), data(plan.bias),
                        static_cast<float*>(out.raw()));
        return CublasBackend()->Build(f, call, {})->Describe();
      },
      composites);
}

Graph Dense(std::vector<int64_t> x, int64_t n, const std::vector<std::string>& epilogue) {
  Graph g;
  ValueId v = g.AddInput("x", F32(x));
  v = AddOpCall(&g, "dense", "dense", {v, g.AddConstant("w", RandomArray({n, x.back()}, 3))});
  for (const std::string& e : epilogue) {
    if (e == "bias") {
      v = AddOpCall(&g, "bias", "bias_add", {v, g.AddConstant("b", RandomArray({n}, 4))});
    } else if (e == "sum") {
      v = AddOpCall(&g, "sum", "add", {g.AddInput("y", g.value(v).type), v});
    } else if (e == "view") {
      v = AddOpCall(&g, "view", "reshape", {v}, {{"shape", graph::Ints{1, x[0], n}}});
    } else {
      v = AddOpCall(&g, e, e, {v});
    }
  }
  g.AddOutput(v);
  return g;
}

TEST(CublasPlan, DenseLayersWithTheirEpiloguesAreOneProduct) {
  std::string d = RunsLikeTheInterpreter(Dense({5, 16}, 12, {"bias", "relu"}));
  // [N, K] weights are cuBLAS's A read transposed; the activations its B as stored.
  EXPECT_NE(d.find("cuBLASLt dense 5x12x16 (A transposed, bias, ReLU) for %relu"),
            std::string::npos)
      << d;
  d = RunsLikeTheInterpreter(Dense({4, 16}, 12, {"view", "bias", "gelu_tanh"}));
  EXPECT_NE(d.find("(A transposed, bias, GELU (tanh))"), std::string::npos) << d;
  d = RunsLikeTheInterpreter(Dense({3, 8}, 6, {"bias", "sum", "relu"}));
  EXPECT_NE(d.find("(A transposed, bias, sum, ReLU)"), std::string::npos) << d;
  // One row: a leading dimension of a single column is the column's length.
  RunsLikeTheInterpreter(Dense({1, 7}, 5, {}));
}

TEST(CublasPlan, MatrixProductsReadTheirOperandsInPlace) {
  Graph mm;  // both operands computed at run time
  ValueId a = mm.AddInput("a", F32({2, 4, 8}));
  ValueId b = mm.AddInput("b", F32({2, 8, 3}));
  mm.AddOutput(AddOpCall(&mm, "bmm", "batch_matmul", {a, b}));
  EXPECT_NE(RunsLikeTheInterpreter(mm).find("batch_matmul 2 x 4x3x8 for %bmm"), std::string::npos);

  // A^T B with A transposed in the graph: cuBLAS's B read transposed, in place.
  Graph t;
  a = t.AddInput("a", F32({8, 5}));
  ValueId at = AddOpCall(&t, "at", "transpose", {a}, {{"perm", graph::Ints{1, 0}}});
  t.AddOutput(AddOpCall(&t, "mm", "matmul", {at, t.AddInput("b", F32({8, 6}))}));
  EXPECT_EQ(testing::CompositeOf(t, CublasBackend()->Patterns()), "cublas.matmul_of_views");
  EXPECT_NE(RunsLikeTheInterpreter(t).find("(B transposed)"), std::string::npos);

  // Attention's heads: both operands strided views, one product per head, batches a head apart.
  Graph heads = testing::HeadsProduct(1);
  EXPECT_EQ(testing::CompositeOf(heads, CublasBackend()->Patterns()),
            "cublas.batch_matmul_of_views");
  EXPECT_NE(RunsLikeTheInterpreter(heads).find("batch_matmul 3 x 5x5x4 (A transposed)"),
            std::string::npos);
  // With two batches [batch, heads] are no single batch stride: the product alone.
  Graph two = testing::HeadsProduct(2);
  EXPECT_EQ(testing::CompositeOf(two, CublasBackend()->Patterns()), "cublas.batch_matmul");
  RunsLikeTheInterpreter(two);

  Graph m2;  // a constant right operand, then ReLU
  a = m2.AddInput("a", F32({4, 8}));
  ValueId v = AddOpCall(&m2, "mm", "matmul", {a, m2.AddConstant("w", RandomArray({8, 6}, 5))});
  m2.AddOutput(AddOpCall(&m2, "relu", "relu", {v}));
  EXPECT_NE(RunsLikeTheInterpreter(m2).find("matmul 4x6x8 (ReLU)"), std::string::npos);
}

// What cuBLASLt's epilogue cannot run stays outside the composite, which keeps the product.
TEST(CublasPlan, WhatTheEpilogueCannotRunStaysOutside) {
  for (const char* op : {"gelu", "sigmoid"}) {
    Graph g = Dense({4, 8}, 6, {"bias", op});
    std::string d = RunsLikeTheInterpreter(g);
    EXPECT_NE(d.find("(A transposed, bias) for %bias"), std::string::npos) << op << ": " << d;
  }
  // A sum after the activation: cuBLASLt adds C before it.
  std::string d = RunsLikeTheInterpreter(Dense({4, 8}, 6, {"relu", "sum"}));
  EXPECT_NE(d.find("(A transposed, ReLU) for %relu"), std::string::npos) << d;
  // Convolutions are not products.
  Graph conv;
  ValueId x = conv.AddInput("x", F32({1, 6, 6, 4}));
  conv.AddOutput(
      AddOpCall(&conv, "conv", "conv2d", {x, conv.AddConstant("w", RandomArray({3, 3, 4, 4}, 1))}));
  EXPECT_EQ(testing::CompositeOf(conv, CublasBackend()->Patterns()), "");
}

TEST(CublasPlan, DeclinesWithTheReason) {
  // A composite built by hand (another backend's pattern): erf's GELU, then a convolution.
  auto declined = [](const Graph& g, const std::vector<graph::FusionPattern>& patterns) {
    return testing::DeclineReason(g, patterns,
                                  [](const Graph& f, const graph::Call& c) { PlanCublas(f, c); });
  };
  const LibraryBackend* dnnl = DnnlBackend();
  if (dnnl == nullptr) GTEST_SKIP() << BackendUnavailable("dnnl");
  EXPECT_NE(declined(Dense({4, 8}, 6, {"bias", "gelu"}), dnnl->Patterns())
                .find(": GELU of erf (cuBLASLt's GELU epilogue is the tanh approximation)"),
            std::string::npos);
  Graph conv;
  ValueId x = conv.AddInput("x", F32({1, 6, 6, 4}));
  conv.AddOutput(
      AddOpCall(&conv, "conv", "conv2d", {x, conv.AddConstant("w", RandomArray({3, 3, 4, 4}, 1))}));
  EXPECT_NE(declined(conv, dnnl->Patterns()).find(": cuBLAS runs matrix products, not conv2d"),
            std::string::npos);
  EXPECT_TRUE(CublasBackend()->OnGpu());
  EXPECT_EQ(FindBackend("cublas"), CublasBackend());
  EXPECT_EQ(BackendUnavailable("cublas"), "");
}

// Running needs a GPU: without one the kernel says why, naming cuBLASLt or the driver.
TEST(CublasPlan, RunningWithoutAGpuSaysWhy) {
  std::string why;
  if (cuda::CudaDriverAvailable(&why)) GTEST_SKIP() << "this host has a GPU";
  Graph g = Dense({4, 8}, 6, {"bias"});
  graph::PatternFusionResult r = graph::FuseOpsByPattern(g, CublasBackend()->Patterns());
  for (const graph::Call& c : r.graph.calls()) {
    if (!c.attrs.Has(graph::kCodegenAttr)) continue;
    std::unique_ptr<LibraryKernel> k = CublasBackend()->Build(r.graph, c, {});
    try {
      k->Run({nullptr, nullptr, nullptr}, nullptr);
      ADD_FAILURE() << "ran without a GPU";
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(std::string(e.what()).find("cuBLAS") != std::string::npos ||
                  std::string(e.what()).find("cublas") != std::string::npos ||
                  std::string(e.what()).find("driver") != std::string::npos ||
                  std::string(e.what()).find("device") != std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tirtune::offload
