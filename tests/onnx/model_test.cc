// A small conv-bn-relu-pool-gemm model built with the ONNX protobuf API: it imports channel-last
// with one transpose at the input and one before Flatten, matches a hand-written NCHW reference,
// and keeps its outputs through every graph pass down to the tasks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>

#include "onnx_testing.h"
#include "tirtune/graph/executor.h"
#include "tirtune/graph/extract_tasks.h"
#include "tirtune/graph/onnx_import.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/printer.h"
#include "tirtune/graph/validate.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {
namespace {

using testing::OnnxModelBuilder;

// x[1, 3, 8, 8] -> Conv 3x3 pad 1 (+bias, 4 channels) -> BatchNormalization -> Relu
// -> MaxPool 2x2 -> Conv 1x1 stride 2 (8 channels) -> Add (residual-free bias) -> GlobalAveragePool
// -> Flatten -> Gemm (transB, 10) -> y[1, 10].
OnnxModelBuilder SmallCnn() {
  OnnxModelBuilder b;
  b.Input("x", {1, 3, 8, 8}).Output("y", {1, 10});
  b.Weight("w1", {4, 3, 3, 3}, 1).Weight("b1", {4}, 2);
  b.Weight("gamma", {4}, 3).Weight("beta", {4}, 4).Weight("mean", {4}, 5);
  b.Weight("var", {4}, 6, 0.5, 1.5);
  b.Weight("w2", {8, 4, 1, 1}, 7).Weight("shift", {8, 1, 1}, 8);
  b.Weight("fc_w", {10, 8}, 9).Weight("fc_b", {10}, 10);
  OnnxModelBuilder::SetInts(b.Node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("BatchNormalization", {"c1", "gamma", "beta", "mean", "var"}, {"bn"});
  b.Node("Relu", {"bn"}, {"r"});
  onnx::NodeProto* pool = b.Node("MaxPool", {"r"}, {"p"});
  OnnxModelBuilder::SetInts(pool, "kernel_shape", {2, 2});
  OnnxModelBuilder::SetInts(pool, "strides", {2, 2});
  OnnxModelBuilder::SetInts(b.Node("Conv", {"p", "w2"}, {"c2"}), "strides", {2, 2});
  b.Node("Add", {"c2", "shift"}, {"s"});
  b.Node("GlobalAveragePool", {"s"}, {"g"});
  b.Node("Flatten", {"g"}, {"f"});
  OnnxModelBuilder::SetInt(b.Node("Gemm", {"f", "fc_w", "fc_b"}, {"y"}), "transB", 1);
  return b;
}

int CountCalls(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Call& c : g.calls()) n += c.op == op;
  return n;
}

// The float array of initializer `name`.
NDArray Init(OnnxModelBuilder& b, const std::string& name) {
  for (const onnx::TensorProto& t : b.graph()->initializer()) {
    if (t.name() == name) return testing::ArrayFromProto(t);
  }
  return NDArray();
}

// The model computed directly in NCHW with plain loops.
std::vector<float> Reference(OnnxModelBuilder& b, const NDArray& x) {
  auto at = [](const NDArray& a, int64_t i) { return static_cast<float>(a.GetDouble(i)); };
  NDArray w1 = Init(b, "w1"), b1 = Init(b, "b1"), gamma = Init(b, "gamma"), beta = Init(b, "beta"),
          mean = Init(b, "mean"), var = Init(b, "var"), w2 = Init(b, "w2"),
          shift = Init(b, "shift"), fc_w = Init(b, "fc_w"), fc_b = Init(b, "fc_b");
  std::vector<float> r(4 * 8 * 8);
  for (int co = 0; co < 4; ++co) {
    for (int h = 0; h < 8; ++h) {
      for (int w = 0; w < 8; ++w) {
        float s = at(b1, co);
        for (int ci = 0; ci < 3; ++ci) {
          for (int kh = 0; kh < 3; ++kh) {
            for (int kw = 0; kw < 3; ++kw) {
              int ih = h + kh - 1, iw = w + kw - 1;
              if (ih < 0 || ih >= 8 || iw < 0 || iw >= 8) continue;
              s += at(x, (ci * 8 + ih) * 8 + iw) * at(w1, ((co * 3 + ci) * 3 + kh) * 3 + kw);
            }
          }
        }
        s = (s - at(mean, co)) / std::sqrt(at(var, co) + 1e-5f) * at(gamma, co) + at(beta, co);
        r[(co * 8 + h) * 8 + w] = std::max(s, 0.0f);
      }
    }
  }
  std::vector<float> g(8, 0.0f);
  for (int co = 0; co < 8; ++co) {
    for (int h = 0; h < 2; ++h) {
      for (int w = 0; w < 2; ++w) {
        float s = at(shift, co);
        for (int ci = 0; ci < 4; ++ci) {
          int ph = 2 * h * 2, pw = 2 * w * 2;  // conv stride 2 over the 4x4 pooled map
          float p = -1e30f;
          for (int dh = 0; dh < 2; ++dh) {
            for (int dw = 0; dw < 2; ++dw) p = std::max(p, r[(ci * 8 + ph + dh) * 8 + pw + dw]);
          }
          s += p * at(w2, co * 4 + ci);
        }
        g[co] += s / 4;
      }
    }
  }
  std::vector<float> y(10);
  for (int n = 0; n < 10; ++n) {
    y[n] = at(fc_b, n);
    for (int k = 0; k < 8; ++k) y[n] += g[k] * at(fc_w, n * 8 + k);
  }
  return y;
}

TEST(OnnxModelTest, ImportsChannelLastWithTwoTransposes) {
  OnnxModelBuilder b = SmallCnn();
  Graph g = ImportOnnxFromBytes(b.Bytes());
  EXPECT_NO_THROW(ValidateGraph(g));
  ASSERT_EQ(g.Inputs().size(), 1u);
  EXPECT_EQ(g.value(g.Inputs()[0]).type, F32({1, 3, 8, 8}));
  EXPECT_EQ(g.value(g.outputs()[0]).type, F32({1, 10}));
  // Gemm imports as a dense and a bias add; the output keeps the model's name.
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y") << PrintGraph(g);
  EXPECT_EQ(CountCalls(g, "transpose"), 2) << PrintGraph(g);
  EXPECT_EQ(CountCalls(g, "conv2d"), 2);
  EXPECT_EQ(CountCalls(g, "dense"), 1);
}

TEST(OnnxModelTest, MatchesAnNchwReference) {
  OnnxModelBuilder b = SmallCnn();
  Graph g = ImportOnnxFromBytes(b.Bytes());
  std::vector<NDArray> inputs = MakeRandomInputs(g, 3);
  NDArray y = RunGraph(g, inputs)[0];
  std::vector<float> expected = Reference(b, inputs[0]);
  for (int n = 0; n < 10; ++n) EXPECT_NEAR(y.GetDouble(n), expected[n], 1e-4) << n;
}

TEST(OnnxModelTest, EveryGraphPassKeepsTheOutputs) {
  Graph model = ImportOnnxFromBytes(SmallCnn().Bytes());
  std::vector<NDArray> inputs = MakeRandomInputs(model, 5);
  NDArray expected = RunGraph(model, inputs)[0];
  Graph g = model;
  for (auto [name, pass] : PipelinePasses()) {
    g = pass(g);
    ASSERT_NO_THROW(ValidateGraph(g)) << name;
    NDArray actual = RunGraph(g, inputs)[0];
    for (int64_t i = 0; i < expected.size(); ++i) {
      ASSERT_NEAR(actual.GetDouble(i), expected.GetDouble(i), 1e-4) << name << " element " << i;
    }
  }
  std::vector<Task> tasks = ExtractTasks(g);
  EXPECT_GE(tasks.size(), 3u);
  for (const Task& t : tasks) EXPECT_FALSE(t.workload_key.empty()) << t.name;
}

TEST(OnnxModelTest, ShapeComputationsFoldToConstants) {
  // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): an exporter's dynamic flatten.
  OnnxModelBuilder b;
  b.Input("x", {2, 3, 4}).Output("y", {2, 12});
  b.Int64s("zero", {0}).Int64s("minus_one", {-1}).Int64s("axes", {0});
  b.Node("Shape", {"x"}, {"shape"});
  b.Node("Gather", {"shape", "zero"}, {"batch"});
  b.Node("Concat", {"batch", "minus_one"}, {"new_shape"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  b.Node("Reshape", {"x", "new_shape"}, {"y"});
  Graph g = ImportOnnxFromBytes(b.Bytes());
  ASSERT_EQ(g.calls().size(), 1u) << PrintGraph(g);
  EXPECT_EQ(g.calls()[0].op, "reshape");
  EXPECT_EQ(g.calls()[0].attrs.GetInts("shape"), (Ints{2, 12}));
}

TEST(OnnxModelTest, ConstantOfShapeAndWhereFoldAMask) {
  // mask = Where(Equal(ConstantOfShape(Shape(x)), 0), -1e4, 0); y = x + mask: only the add is
  // left, with the folded mask as a constant.
  OnnxModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.Weight("low", {1}, 1, -1e4, -1e4).Weight("zero_f", {1}, 2, 0.0, 0.0);
  b.Int64s("zero_i", {0});
  b.Node("Shape", {"x"}, {"shape"});
  b.Node("ConstantOfShape", {"shape"}, {"ones"});
  b.Node("Cast", {"ones"}, {"ones_i"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(onnx::TensorProto::INT64);
    return a;
  }());
  b.Node("Equal", {"ones_i", "zero_i"}, {"is_zero"});
  b.Node("Where", {"is_zero", "low", "zero_f"}, {"mask"});
  b.Node("Add", {"x", "mask"}, {"y"});
  Graph g = ImportOnnxFromBytes(b.Bytes());
  ASSERT_EQ(g.calls().size(), 1u) << PrintGraph(g);
  EXPECT_EQ(g.calls()[0].op, "add");
  NDArray x = NDArray::Empty({2, 3}, DataType::Float(32));
  x.Fill(1.0);
  NDArray y = RunGraph(g, {x})[0];
  for (int64_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y.GetDouble(i), -9999.0f);
}

// y = Pad(x, pads, mode) of x[2, 5] = 0..9 row-major, against ONNX's definition written out.
std::vector<double> PadOf(const std::string& mode, std::vector<int64_t> pads, int opset = 13) {
  OnnxModelBuilder b(opset);
  int64_t rows = 2 + pads[0] + pads[2], cols = 5 + pads[1] + pads[3];
  b.Input("x", {2, 5}).Output("y", {rows, cols});
  b.Int64s("pads", pads);
  onnx::NodeProto* pad = b.Node("Pad", {"x", "pads"}, {"y"});
  onnx::AttributeProto* a = pad->add_attribute();
  a->set_name("mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(mode);
  Graph g = ImportOnnxFromBytes(b.Bytes());
  NDArray x = NDArray::Empty({2, 5}, DataType::Float(32));
  for (int64_t i = 0; i < 10; ++i) x.SetDouble(i, static_cast<double>(i));
  NDArray y = RunGraph(g, {x})[0];
  std::vector<double> out;
  for (int64_t i = 0; i < y.size(); ++i) out.push_back(y.GetDouble(i));
  return out;
}

TEST(OnnxModelTest, PadsInEveryModeAndCropsWithNegativePads) {
  // Rows padded by 1 before, columns by 2 before and 1 after.
  EXPECT_EQ(PadOf("constant", {1, 2, 0, 1}),
            (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                                 2, 3, 4, 0, 0, 0, 5, 6, 7, 8, 9, 0}));
  EXPECT_EQ(PadOf("edge", {1, 2, 0, 1}), (std::vector<double>{0, 0, 0, 1, 2, 3, 4, 4, 0, 0, 0, 1,
                                                              2, 3, 4, 4, 5, 5, 5, 6, 7, 8, 9, 9}));
  EXPECT_EQ(PadOf("reflect", {1, 2, 0, 1}),
            (std::vector<double>{7, 6, 5, 6, 7, 8, 9, 8, 2, 1, 0, 1,
                                 2, 3, 4, 3, 7, 6, 5, 6, 7, 8, 9, 8}));
  // Wrap (opset 19): the axes as rings.
  EXPECT_EQ(PadOf("wrap", {1, 2, 0, 1}, 19),
            (std::vector<double>{8, 9, 5, 6, 7, 8, 9, 5, 3, 4, 0, 1,
                                 2, 3, 4, 0, 8, 9, 5, 6, 7, 8, 9, 5}));
  // A negative pad crops: the first column dropped, one padded after.
  EXPECT_EQ(PadOf("reflect", {0, -1, 0, 1}), (std::vector<double>{1, 2, 3, 4, 3, 6, 7, 8, 9, 8}));
}

// Resize (opset 18) to sizes [4, 4] of a 2 x 4 image: stretched, or with one scale for both
// axes that keeps the aspect ratio (not_larger: 1, the image itself; not_smaller: 2, 4 x 8).
std::vector<int64_t> ResizedShape(const std::string& policy, std::vector<double>* values) {
  OnnxModelBuilder b(18);
  b.Input("x", {1, 1, 2, 4}).Output("y", {1, 1, -1, -1});
  b.Int64s("sizes", {4, 4});
  onnx::NodeProto* n = b.Node("Resize", {"x", "", "", "sizes"}, {"y"});
  OnnxModelBuilder::SetInts(n, "axes", {2, 3});
  OnnxModelBuilder::SetString(n, "keep_aspect_ratio_policy", policy);
  OnnxModelBuilder::SetString(n, "coordinate_transformation_mode", "asymmetric");
  OnnxModelBuilder::SetString(n, "nearest_mode", "floor");
  Graph g = ImportOnnxFromBytes(b.Bytes());
  NDArray x = NDArray::Empty({1, 1, 2, 4}, DataType::Float(32));
  for (int i = 0; i < 8; ++i) x.SetDouble(i, i);
  NDArray y = RunGraph(g, {x})[0];
  values->clear();
  for (int64_t i = 0; i < y.size(); ++i) values->push_back(y.GetDouble(i));
  return y.shape();
}

TEST(OnnxModelTest, ResizeKeepsTheAspectRatioWhenAsked) {
  std::vector<double> v;
  EXPECT_EQ(ResizedShape("stretch", &v), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_EQ(v, (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7}));
  EXPECT_EQ(ResizedShape("not_larger", &v), (std::vector<int64_t>{1, 1, 2, 4}));
  EXPECT_EQ(v, (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(ResizedShape("not_smaller", &v), (std::vector<int64_t>{1, 1, 4, 8}));
  EXPECT_EQ(v[9], 0.0);   // row 1, column 1: x[0, 0]
  EXPECT_EQ(v[31], 7.0);  // row 3, column 7: x[1, 3]
  EXPECT_THROW(ResizedShape("fit", &v), UserError);
}

// Resize (opset 18) with antialias, shrinking a 4 x 10 image to 3 x 4: the expected values are
// onnxruntime 1.32's for the same model and input (x = (i^1.5 mod 7) for i = 0..39).
TEST(OnnxModelTest, ResizeWithAntialiasMatchesOnnxruntime) {
  auto resize = [](const std::string& mode, int exclude_outside) {
    OnnxModelBuilder b(18);
    b.Input("x", {1, 1, 4, 10}).Output("y", {1, 1, 3, 4});
    b.Int64s("sizes", {1, 1, 3, 4});
    onnx::NodeProto* n = b.Node("Resize", {"x", "", "", "sizes"}, {"y"});
    OnnxModelBuilder::SetString(n, "mode", mode);
    OnnxModelBuilder::SetInt(n, "exclude_outside", exclude_outside);
    OnnxModelBuilder::SetInt(n, "antialias", 1);
    Graph g = ImportOnnxFromBytes(b.Bytes());
    NDArray x = NDArray::Empty({1, 1, 4, 10}, DataType::Float(32));
    for (int i = 0; i < 40; ++i)
      x.SetDouble(i, std::fmod(static_cast<float>(std::pow(i, 1.5)), 7.0f));
    NDArray y = RunGraph(g, {x})[0];
    std::vector<double> out;
    for (int64_t i = 0; i < y.size(); ++i) out.push_back(y.GetDouble(i));
    return out;
  };
  std::map<std::string, std::vector<double>> expected = {
      {"linear 0",
       {1.776662, 3.549177, 2.269241, 4.125263, 4.401515, 4.881812, 3.223682, 3.143477, 4.510113,
        3.45504, 4.158772, 3.234011}},
      {"cubic 0",
       {1.563866, 3.637701, 1.689358, 4.395968, 4.628476, 5.384414, 2.982187, 2.879606, 4.747337,
        3.465967, 4.359117, 2.855657}},
      {"cubic 1",
       {1.640171, 3.591699, 1.751054, 4.282958, 4.583473, 5.339754, 2.998252, 2.829503, 4.814674,
        3.5047, 4.382415, 2.710393}}};
  for (const auto& [config, values] : expected) {
    std::vector<double> y = resize(config.substr(0, config.find(' ')), config.back() - '0');
    ASSERT_EQ(y.size(), values.size());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], values[i], 2e-5) << config << " " << i;
  }
}

// Resize (opset 19) with half_pixel_symmetric coordinates, 3 x 5 scaled by 1.7 x 0.6 (to 5 x 3):
// onnxruntime 1.32's values for the same model and input.
TEST(OnnxModelTest, ResizeWithHalfPixelSymmetricCoordinatesMatchesOnnxruntime) {
  OnnxModelBuilder b(19);
  b.Input("x", {1, 1, 3, 5}).Output("y", {1, 1, 5, 3});
  onnx::TensorProto* scales = b.graph()->add_initializer();
  scales->set_name("scales");
  scales->set_data_type(onnx::TensorProto::FLOAT);
  scales->add_dims(4);
  for (float v : {1.0f, 1.0f, 1.7f, 0.6f}) scales->add_float_data(v);
  onnx::NodeProto* n = b.Node("Resize", {"x", "", "scales"}, {"y"});
  OnnxModelBuilder::SetString(n, "mode", "linear");
  OnnxModelBuilder::SetString(n, "coordinate_transformation_mode", "half_pixel_symmetric");
  Graph g = ImportOnnxFromBytes(b.Bytes());
  NDArray x = NDArray::Empty({1, 1, 3, 5}, DataType::Float(32));
  for (int i = 0; i < 15; ++i)
    x.SetDouble(i, std::fmod(static_cast<float>(std::pow(i, 1.5)), 7.0f));
  NDArray y = RunGraph(g, {x})[0];
  std::vector<double> expected = {0.3333333, 2.828427, 2.398718, 1.439281, 3.525063,
                                  3.28144,   3.019206, 4.520257, 4.542471, 2.954658,
                                  5.72553,   4.152502, 2.909475, 6.569221, 3.879523};
  ASSERT_EQ(y.size(), 15);
  for (int i = 0; i < 15; ++i) EXPECT_NEAR(y.GetDouble(i), expected[i], 2e-5) << i;
}

// Opset 18 (newer than Debian's ONNX library, which knows 17): ReduceMean with its axes as an
// input, Split into num_outputs, Pad with axes. The checker checks the older forms; an attribute
// no opset has is still refused.
TEST(OnnxModelTest, AnOpset18ModelWithItsNewerFormsImports) {
  auto build = [](bool with_unknown_attribute) {
    OnnxModelBuilder b(18);
    b.Input("x", {2, 6, 4}).Output("m", {2, 6, 1}).Output("s0", {2, 3, 4}).Output("p", {2, 6, 6});
    b.Int64s("axes", {2}).Int64s("pads", {1, 1}).Int64s("pad_axes", {2});
    onnx::NodeProto* mean = b.Node("ReduceMean", {"x", "axes"}, {"m"});
    if (with_unknown_attribute) OnnxModelBuilder::SetInt(mean, "keep", 1);
    OnnxModelBuilder::SetInt(b.Node("Split", {"x"}, {"s0", "s1"}), "num_outputs", 2);
    OnnxModelBuilder::SetInt(b.graph()->mutable_node(1), "axis", 1);
    b.Node("Pad", {"x", "pads", "", "pad_axes"}, {"p"});
    return b;
  };
  Graph g = ImportOnnxFromBytes(build(false).Bytes());
  NDArray x = NDArray::Empty({2, 6, 4}, DataType::Float(32));
  for (int i = 0; i < 48; ++i) x.SetDouble(i, i);
  std::vector<NDArray> y = RunGraph(g, {x});
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0].shape(), (std::vector<int64_t>{2, 6, 1}));
  EXPECT_DOUBLE_EQ(y[0].GetDouble(1), (4 + 5 + 6 + 7) / 4.0);
  EXPECT_EQ(y[1].shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(y[1].GetDouble(12), 24.0);  // batch 1, row 0 of the first half: x[1, 0, 0]
  EXPECT_EQ(y[2].shape(), (std::vector<int64_t>{2, 6, 6}));
  EXPECT_EQ(y[2].GetDouble(0), 0.0);
  EXPECT_EQ(y[2].GetDouble(2), 1.0);  // x[0, 0, 1] moved one to the right
  EXPECT_EQ(y[2].GetDouble(7), 4.0);
  EXPECT_THROW(ImportOnnxFromBytes(build(true).Bytes()), UserError);
}

// ScatterElements (opset 18) with every reduction, two updates landing on one element, and an
// infinity in the data that no update touches (the blend selects, it does not multiply by 0).
TEST(OnnxModelTest, ScatterElementsReducesDuplicatesAndKeepsUntouchedInfinities) {
  auto scatter = [](const std::string& reduction) {
    OnnxModelBuilder b(18);
    b.Input("data", {1, 4}).Input("updates", {1, 3}).Output("y", {1, 4});
    onnx::TensorProto* indices = b.graph()->add_initializer();
    indices->set_name("indices");
    indices->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : {1, 3}) indices->add_dims(d);
    for (int64_t i : {1, 1, 2}) indices->add_int64_data(i);
    onnx::NodeProto* n = b.Node("ScatterElements", {"data", "indices", "updates"}, {"y"});
    OnnxModelBuilder::SetInt(n, "axis", 1);
    OnnxModelBuilder::SetString(n, "reduction", reduction);
    Graph g = ImportOnnxFromBytes(b.Bytes());
    NDArray data = NDArray::Empty({1, 4}, DataType::Float(32));
    NDArray updates = NDArray::Empty({1, 3}, DataType::Float(32));
    std::vector<double> d = {std::numeric_limits<double>::infinity(), 5, 1, 2}, u = {7, 3, -4};
    for (int i = 0; i < 4; ++i) data.SetDouble(i, d[i]);
    for (int i = 0; i < 3; ++i) updates.SetDouble(i, u[i]);
    NDArray y = RunGraph(g, {data, updates})[0];
    std::vector<double> out;
    for (int i = 0; i < 4; ++i) out.push_back(y.GetDouble(i));
    return out;
  };
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(scatter("none"), (std::vector<double>{inf, 3, -4, 2}));
  EXPECT_EQ(scatter("add"), (std::vector<double>{inf, 15, -3, 2}));
  EXPECT_EQ(scatter("mul"), (std::vector<double>{inf, 105, -4, 2}));
  EXPECT_EQ(scatter("max"), (std::vector<double>{inf, 7, 1, 2}));
  EXPECT_EQ(scatter("min"), (std::vector<double>{inf, 3, -4, 2}));
  EXPECT_THROW(scatter("mean"), UserError);
}

// An attention mask given as an int64 graph input (as exported language models take it): cast
// to float in the graph, then (1 - mask) * -10000.
TEST(OnnxModelTest, AnInt64MaskInputIsCastToFloatInTheGraph) {
  OnnxModelBuilder b;
  b.Input("mask", {2, 5}, onnx::TensorProto::INT64).Output("y", {2, 1, 5});
  b.Int64s("axes", {1});
  b.Node("Unsqueeze", {"mask", "axes"}, {"m1"});
  OnnxModelBuilder::SetInt(b.Node("Cast", {"m1"}, {"mf"}), "to", onnx::TensorProto::FLOAT);
  onnx::TensorProto* one = b.graph()->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::FLOAT);
  one->add_float_data(1.0f);
  onnx::TensorProto* big = b.graph()->add_initializer();
  big->set_name("big");
  big->set_data_type(onnx::TensorProto::FLOAT);
  big->add_float_data(-10000.0f);
  b.Node("Sub", {"one", "mf"}, {"inv"});
  b.Node("Mul", {"inv", "big"}, {"y"});
  Graph g = ImportOnnxFromBytes(b.Bytes());
  EXPECT_EQ(CountCalls(g, "cast"), 1);
  NDArray mask = NDArray::Empty({2, 5}, DataType::Int(64));
  for (int i = 0; i < 10; ++i) mask.SetDouble(i, i % 3 == 0 ? 0 : 1);
  NDArray y = RunGraph(g, {mask})[0];
  ASSERT_EQ(y.dtype(), DataType::Float(32));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(y.GetDouble(i), i % 3 == 0 ? -10000.0 : 0.0) << i;
}

// Dropout in training mode is the identity when its ratio is 0 (attention dropout as exported),
// and refused otherwise.
TEST(OnnxModelTest, TrainingModeDropoutWithRatioZeroIsTheIdentity) {
  for (float ratio : {0.0f, 0.5f}) {
    OnnxModelBuilder b;
    b.Input("x", {2, 3}).Output("y", {2, 3});
    onnx::TensorProto* r = b.graph()->add_initializer();
    r->set_name("ratio");
    r->set_data_type(onnx::TensorProto::FLOAT);
    r->add_float_data(ratio);
    onnx::TensorProto* t = b.graph()->add_initializer();
    t->set_name("training");
    t->set_data_type(onnx::TensorProto::BOOL);
    t->add_int32_data(1);
    b.Node("Dropout", {"x", "ratio", "training"}, {"y"});
    if (ratio == 0.0f) {
      Graph g = ImportOnnxFromBytes(b.Bytes());
      std::vector<NDArray> in = MakeRandomInputs(g, 1);
      NDArray y = RunGraph(g, in)[0];
      for (int i = 0; i < 6; ++i) EXPECT_EQ(y.GetDouble(i), in[0].GetDouble(i));
    } else {
      EXPECT_THROW(
          {
            try {
              ImportOnnxFromBytes(b.Bytes());
            } catch (const UserError& e) {
              EXPECT_NE(std::string(e.what()).find("with ratio 0.5 is not supported"),
                        std::string::npos)
                  << e.what();
              throw;
            }
          },
          UserError);
    }
  }
}

// An initializer stored in an external data file (as PyTorch writes models over 2 GiB): read from
// the model's directory at its offset; a location outside the directory, a missing file, a range
// past its end and a model given as bytes are refused by name.
TEST(OnnxModelTest, InitializersInExternalDataFilesAreReadFromTheModelsDirectory) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tirtune_external_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<float> w = {1.5f, -2.0f, 0.25f};
  {
    std::ofstream data(dir / "weights.bin", std::ios::binary);
    data.write("pad!", 4);
    data.write(reinterpret_cast<const char*>(w.data()), 12);
  }
  auto model = [&](const std::string& location, const std::string& offset) {
    OnnxModelBuilder b;
    b.Input("x", {3}).Output("y", {3});
    onnx::TensorProto* t = b.graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(3);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto entry = [&](const char* key, const std::string& value) {
      onnx::StringStringEntryProto* e = t->add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    entry("location", location);
    entry("offset", offset);
    entry("length", "12");
    b.Node("Mul", {"x", "w"}, {"y"});
    std::ofstream(dir / "model.onnx", std::ios::binary) << b.Bytes();
    return b.Bytes();
  };
  auto refusal = [&](const std::function<void()>& import) {
    try {
      import();
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("imported");
  };
  model("weights.bin", "4");
  Graph g = ImportOnnx((dir / "model.onnx").string());
  NDArray x = NDArray::Empty({3}, DataType::Float(32));
  for (int i = 0; i < 3; ++i) x.SetDouble(i, 2.0);
  NDArray y = RunGraph(g, {x})[0];
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y.GetDouble(i), 2.0 * w[static_cast<size_t>(i)]);
  auto says = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };
  std::string bytes = model("weights.bin", "4");
  EXPECT_PRED2(says, refusal([&] { ImportOnnxFromBytes(bytes); }), "import it from its file");
  model("../weights.bin", "4");
  EXPECT_PRED2(says, refusal([&] { ImportOnnx((dir / "model.onnx").string()); }),
               "must be a file name inside the model's directory");
  model("missing.bin", "4");
  EXPECT_PRED2(says, refusal([&] { ImportOnnx((dir / "model.onnx").string()); }),
               "cannot read external data file");
  model("weights.bin", "8");
  EXPECT_PRED2(says, refusal([&] { ImportOnnx((dir / "model.onnx").string()); }),
               "lies past the end");
  fs::remove_all(dir);
}

TEST(OnnxModelTest, ListsItsOperators) {
  std::vector<std::string> ops = SupportedOnnxOperators();
  for (const char* op : {"Conv", "Gemm", "MatMul", "BatchNormalization", "LayerNormalization",
                         "Gather", "Slice", "Where", "ConstantOfShape", "Softmax"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  }
}

}  // namespace
}  // namespace tirtune::graph
