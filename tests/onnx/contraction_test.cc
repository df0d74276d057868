// Einsum, CumSum, GroupNormalization, Gelu and LpNormalization against plain loops, and their
// refusals (each names the node and what is not supported).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "onnx_testing.h"
#include "tirtune/graph/executor.h"
#include "tirtune/graph/onnx_import.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {
namespace {

using testing::OnnxModelBuilder;

// A model of one node `op` over float graph inputs `inputs` (name, shape), output y of `out`.
struct OneNode {
  OnnxModelBuilder b;
  onnx::NodeProto* node;
  OneNode(const std::string& op, std::vector<std::pair<std::string, std::vector<int64_t>>> inputs,
          std::vector<int64_t> out, int opset = 13, std::vector<std::string> extra = {})
      : b(opset) {
    std::vector<std::string> names;
    for (auto& [name, shape] : inputs) {
      b.Input(name, shape);
      names.push_back(name);
    }
    for (const std::string& e : extra) names.push_back(e);
    b.Output("y", out);
    node = b.Node(op, names, {"y"});
  }
};

// Einsum with an explicit output, attention's "bhid,bhjd->bhij": every element against the sum.
TEST(OnnxContractionTest, EinsumAttentionScoresMatchTheSum) {
  OneNode m("Einsum", {{"q", {2, 3, 4, 5}}, {"k", {2, 3, 6, 5}}}, {2, 3, 4, 6});
  OnnxModelBuilder::SetString(m.node, "equation", "bhid, bhjd -> bhij");
  Graph g = ImportOnnxFromBytes(m.b.Bytes());
  std::vector<NDArray> in = MakeRandomInputs(g, 1);
  NDArray y = RunGraph(g, in)[0];
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 3, 4, 6}));
  for (int64_t bh = 0; bh < 6; ++bh) {
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 6; ++j) {
        double sum = 0;
        for (int64_t d = 0; d < 5; ++d) {
          sum += in[0].GetDouble((bh * 4 + i) * 5 + d) * in[1].GetDouble((bh * 6 + j) * 5 + d);
        }
        EXPECT_NEAR(y.GetDouble((bh * 4 + i) * 6 + j), sum, 1e-5);
      }
    }
  }
}

// The implicit output is the letters used once, alphabetically: "ji,kj" gives "ik" (B^T A^T,
// transposed), and a letter only one operand has and the output drops is summed first.
TEST(OnnxContractionTest, EinsumImplicitOutputAndSummedLetters) {
  OneNode m("Einsum", {{"a", {3, 2}}, {"b", {4, 3, 5}}}, {2, 4});
  OnnxModelBuilder::SetString(m.node, "equation", "ji,kjl->ik");
  Graph g = ImportOnnxFromBytes(m.b.Bytes());
  std::vector<NDArray> in = MakeRandomInputs(g, 2);
  NDArray y = RunGraph(g, in)[0];
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 4}));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t k = 0; k < 4; ++k) {
      double sum = 0;
      for (int64_t j = 0; j < 3; ++j) {
        for (int64_t l = 0; l < 5; ++l) {
          sum += in[0].GetDouble(j * 2 + i) * in[1].GetDouble((k * 3 + j) * 5 + l);
        }
      }
      EXPECT_NEAR(y.GetDouble(i * 4 + k), sum, 1e-5);
    }
  }
}

// "...ij,jk" with a rank-4 left operand: the ellipsis stands for its two leading axes; the
// implicit output puts them first. "bii,bij->bj" takes each operand's diagonal (a letter repeated
// in one operand) before the product.
TEST(OnnxContractionTest, EinsumEllipsesAndDiagonalsMatchTheSum) {
  {
    OneNode m("Einsum", {{"a", {2, 3, 4, 5}}, {"b", {5, 6}}}, {2, 3, 4, 6});
    OnnxModelBuilder::SetString(m.node, "equation", "...ij,jk");
    Graph g = ImportOnnxFromBytes(m.b.Bytes());
    std::vector<NDArray> in = MakeRandomInputs(g, 3);
    NDArray y = RunGraph(g, in)[0];
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 3, 4, 6}));
    for (int64_t e = 0; e < 6; ++e) {
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t k = 0; k < 6; ++k) {
          double sum = 0;
          for (int64_t j = 0; j < 5; ++j) {
            sum += in[0].GetDouble((e * 4 + i) * 5 + j) * in[1].GetDouble(j * 6 + k);
          }
          EXPECT_NEAR(y.GetDouble((e * 4 + i) * 6 + k), sum, 1e-5);
        }
      }
    }
  }
  OneNode m("Einsum", {{"a", {2, 4, 4}}, {"b", {2, 4, 3}}}, {2, 3});
  OnnxModelBuilder::SetString(m.node, "equation", "bii,bij->bj");
  Graph g = ImportOnnxFromBytes(m.b.Bytes());
  std::vector<NDArray> in = MakeRandomInputs(g, 4);
  NDArray y = RunGraph(g, in)[0];
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t j = 0; j < 3; ++j) {
      double sum = 0;
      for (int64_t i = 0; i < 4; ++i) {
        sum += in[0].GetDouble((b * 4 + i) * 4 + i) * in[1].GetDouble((b * 4 + i) * 3 + j);
      }
      EXPECT_NEAR(y.GetDouble(b * 3 + j), sum, 1e-5);
    }
  }
}

TEST(OnnxContractionTest, EinsumRefusalsNameWhatIsMissing) {
  auto refusal = [](const std::string& equation, std::vector<int64_t> a, std::vector<int64_t> b,
                    std::vector<int64_t> out = {1}) {
    OneNode m("Einsum", {{"a", a}, {"b", b}}, out);
    OnnxModelBuilder::SetString(m.node, "equation", equation);
    try {
      ImportOnnxFromBytes(m.b.Bytes());
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("imported");
  };
  auto says = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };
  EXPECT_PRED2(says, refusal("...ij,...jk->...ik", {2, 2, 3}, {5, 3, 4}, {2, 2, 4}),
               "an axis under '...' has extents 2 and 5");
  EXPECT_PRED2(says, refusal("ij,jk->ik", {2, 3}, {4, 5}), "letter 'j' has extents 3 and 4");
  EXPECT_PRED2(says, refusal("i,i->", {3}, {3}), "scalar result");
  EXPECT_PRED2(says, refusal("ij,jk->ik", {2, 3}, {3, 4}, {2, 4}), "imported");
}

// CumSum along axis 1 in all four modes; an infinity leaves the sums before it finite.
TEST(OnnxContractionTest, CumSumInEveryModeKeepsEarlierSumsFinite) {
  for (int exclusive = 0; exclusive < 2; ++exclusive) {
    for (int reverse = 0; reverse < 2; ++reverse) {
      OnnxModelBuilder b;
      b.Input("x", {2, 4}).Output("y", {2, 4}).Int64s("axis", {1});
      onnx::NodeProto* n = b.Node("CumSum", {"x", "axis"}, {"y"});
      OnnxModelBuilder::SetInt(n, "exclusive", exclusive);
      OnnxModelBuilder::SetInt(n, "reverse", reverse);
      Graph g = ImportOnnxFromBytes(b.Bytes());
      NDArray x = NDArray::Empty({2, 4}, DataType::Float(32));
      double values[8] = {1, 2, 3, 4, 5, std::numeric_limits<double>::infinity(), 7, 8};
      for (int i = 0; i < 8; ++i) x.SetDouble(i, values[i]);
      NDArray y = RunGraph(g, {x})[0];
      for (int r = 0; r < 2; ++r) {
        for (int i = 0; i < 4; ++i) {
          double sum = 0;
          for (int k = 0; k < 4; ++k) {
            bool take = reverse ? (exclusive ? k > i : k >= i) : (exclusive ? k < i : k <= i);
            if (take) sum += values[r * 4 + k];
          }
          EXPECT_EQ(y.GetDouble(r * 4 + i), sum) << exclusive << reverse << " " << r << i;
        }
      }
    }
  }
}

// GroupNormalization (opset 18: scale and bias per group) against its definition, whether or not
// the ONNX library's checker knows the operator (it checks an Identity in its place when not).
TEST(OnnxContractionTest, GroupNormalizationPerGroupScaleMatchesTheDefinition) {
  OnnxModelBuilder b(18);
  b.Input("x", {2, 6, 3, 2}).Output("y", {2, 6, 3, 2});
  b.Weight("scale", {3}, 5, 0.5, 1.5).Weight("bias", {3}, 6);
  onnx::NodeProto* n = b.Node("GroupNormalization", {"x", "scale", "bias"}, {"y"});
  OnnxModelBuilder::SetInt(n, "num_groups", 3);
  Graph g = ImportOnnxFromBytes(b.Bytes());
  std::vector<NDArray> in = MakeRandomInputs(g, 3);
  NDArray y = RunGraph(g, in)[0];
  NDArray scale = NDArray::Empty({3}, DataType::Float(32)), bias = scale.Copy();
  scale.FillRandom(5, 0.5, 1.5);
  bias.FillRandom(6, -1.0, 1.0);
  const int64_t group_size = 2 * 3 * 2;
  for (int64_t ng = 0; ng < 6; ++ng) {
    double mean = 0, var = 0;
    for (int64_t e = 0; e < group_size; ++e) mean += in[0].GetDouble(ng * group_size + e);
    mean /= group_size;
    for (int64_t e = 0; e < group_size; ++e) {
      double d = in[0].GetDouble(ng * group_size + e) - mean;
      var += d * d;
    }
    var /= group_size;
    int64_t group = ng % 3;
    for (int64_t e = 0; e < group_size; ++e) {
      double expected = (in[0].GetDouble(ng * group_size + e) - mean) / std::sqrt(var + 1e-5) *
                            scale.GetDouble(group) +
                        bias.GetDouble(group);
      EXPECT_NEAR(y.GetDouble(ng * group_size + e), expected, 1e-4);
    }
  }
}

// Gelu (opset 20, newer than Debian's ONNX library): both forms against their definitions; an
// unknown approximation is refused by name.
TEST(OnnxContractionTest, GeluOfOpset20InBothFormsMatchesItsDefinition) {
  for (const char* approximate : {"none", "tanh"}) {
    OneNode m("Gelu", {{"x", {3, 7}}}, {3, 7}, 20);
    OnnxModelBuilder::SetString(m.node, "approximate", approximate);
    Graph g = ImportOnnxFromBytes(m.b.Bytes());
    std::vector<NDArray> in = MakeRandomInputs(g, 5);
    for (int64_t i = 0; i < in[0].size(); ++i) in[0].SetDouble(i, 3.0 * in[0].GetDouble(i));
    NDArray y = RunGraph(g, in)[0];
    for (int64_t i = 0; i < y.size(); ++i) {
      double x = in[0].GetDouble(i);
      double expected =
          std::string(approximate) == "none"
              ? 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)))
              : 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      EXPECT_NEAR(y.GetDouble(i), expected, 1e-5) << approximate << " " << x;
    }
  }
  OneNode m("Gelu", {{"x", {3, 7}}}, {3, 7}, 20);
  OnnxModelBuilder::SetString(m.node, "approximate", "sigmoid");
  try {
    ImportOnnxFromBytes(m.b.Bytes());
    ADD_FAILURE() << "imported";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("approximate = 'sigmoid' (none or tanh expected)"),
              std::string::npos)
        << e.what();
  }
}

TEST(OnnxContractionTest, LpNormalizationDividesByTheNorm) {
  for (int p = 1; p <= 2; ++p) {
    OneNode m("LpNormalization", {{"x", {3, 4}}}, {3, 4});
    OnnxModelBuilder::SetInt(m.node, "p", p);
    OnnxModelBuilder::SetInt(m.node, "axis", 0);
    Graph g = ImportOnnxFromBytes(m.b.Bytes());
    std::vector<NDArray> in = MakeRandomInputs(g, 4);
    NDArray y = RunGraph(g, in)[0];
    for (int64_t c = 0; c < 4; ++c) {
      double norm = 0;
      for (int64_t r = 0; r < 3; ++r) {
        double v = in[0].GetDouble(r * 4 + c);
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t r = 0; r < 3; ++r) {
        EXPECT_NEAR(y.GetDouble(r * 4 + c), in[0].GetDouble(r * 4 + c) / norm, 1e-5);
      }
    }
  }
}

}  // namespace
}  // namespace tirtune::graph
