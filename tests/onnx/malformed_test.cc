// Malformed and unsupported models: each is a UserError whose message names the problem (and the
// node or value concerned), never a crash.
#include <gtest/gtest.h>

#include <random>

#include "onnx_testing.h"
#include "tirtune/graph/onnx_import.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {
namespace {

using testing::OnnxModelBuilder;

// x[1, 3, 8, 8] -> Conv 3x3 (4 channels) -> Relu -> y.
OnnxModelBuilder ConvRelu() {
  OnnxModelBuilder b;
  b.Input("x", {1, 3, 8, 8}).Weight("w", {4, 3, 3, 3}, 1).Output("y", {1, 4, 8, 8});
  OnnxModelBuilder::SetInts(b.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"y"}, "relu");
  return b;
}

// The message of the UserError that importing `bytes` throws ("" when it imports).
std::string ImportError(const std::string& bytes, const OnnxImportOptions& options = {}) {
  try {
    ImportOnnxFromBytes(bytes, options);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(OnnxMalformedTest, TheReferenceModelImports) {
  EXPECT_EQ(ImportError(ConvRelu().Bytes()), "");
}

TEST(OnnxMalformedTest, TruncatedFileIsNotAModel) {
  std::string bytes = ConvRelu().Bytes();
  std::string error = ImportError(bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(error.find("not an ONNX model"), std::string::npos) << error;
}

TEST(OnnxMalformedTest, RandomBytesAreNotAModel) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 20; ++trial) {
    std::string bytes(64 + trial * 37, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::string error = ImportError(bytes);
    EXPECT_NE(error, "") << "trial " << trial;
  }
  EXPECT_NE(ImportError("this is not a protobuf").find("not an ONNX model"), std::string::npos);
  EXPECT_NE(ImportError("").find("empty"), std::string::npos);
}

TEST(OnnxMalformedTest, MissingFileIsNamed) {
  try {
    ImportOnnx("/nonexistent/model.onnx");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open ONNX model '/nonexistent/model.onnx'"),
              std::string::npos)
        << e.what();
  }
}

TEST(OnnxMalformedTest, UnknownOperatorNamesTheNode) {
  OnnxModelBuilder b = ConvRelu();
  b.graph()->mutable_node(1)->set_op_type("Frobnicate");
  EXPECT_EQ(ImportError(b.Bytes()),
            "node 1 \"relu\" (Frobnicate): unsupported operator 'Frobnicate'");
}

TEST(OnnxMalformedTest, OperatorOfAnotherDomainIsNamed) {
  OnnxModelBuilder b = ConvRelu();
  b.graph()->mutable_node(1)->set_domain("com.microsoft");
  EXPECT_NE(ImportError(b.Bytes()).find("domain 'com.microsoft' is not supported"),
            std::string::npos);
}

TEST(OnnxMalformedTest, CycleIsReportedWithItsNodes) {
  OnnxModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.Node("Add", {"x", "b"}, {"a"}, "first");
  b.Node("Relu", {"a"}, {"b"}, "second");
  b.Node("Relu", {"a"}, {"y"}, "third");
  std::string error = ImportError(b.Bytes());
  EXPECT_NE(error.find("cycle"), std::string::npos) << error;
  EXPECT_NE(error.find("node 0 \"first\" (Add)"), std::string::npos) << error;
  EXPECT_NE(error.find("node 1 \"second\" (Relu)"), std::string::npos) << error;
}

TEST(OnnxMalformedTest, MissingInputIsNamed) {
  OnnxModelBuilder b = ConvRelu();
  b.graph()->mutable_node(1)->set_input(0, "nowhere");
  EXPECT_EQ(ImportError(b.Bytes()),
            "node 1 \"relu\" (Relu): input 'nowhere' is not defined (no node, initializer or "
            "graph input has it)");
}

TEST(OnnxMalformedTest, WrongTypedInputIsNamed) {
  OnnxModelBuilder b;
  b.Input("x", {2, 3}, onnx::TensorProto::STRING).Output("y", {2, 3}, onnx::TensorProto::STRING);
  b.Node("Identity", {"x"}, {"y"});
  EXPECT_EQ(ImportError(b.Bytes()),
            "graph input 'x' is STRING; inputs must be floats (FLOAT, DOUBLE, FLOAT16, BFLOAT16), "
            "integers or BOOL");
  // A double input is taken; Relu computes in float32 only and says so.
  OnnxModelBuilder d;
  d.Input("x", {2, 3}, onnx::TensorProto::DOUBLE).Output("y", {2, 3}, onnx::TensorProto::DOUBLE);
  d.Node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_EQ(ImportError(d.Bytes()),
            "node 0 \"relu\" (Relu): input 0 'x' is float64; only float32 is supported here");
}

TEST(OnnxMalformedTest, TypeMismatchInsideTheGraphIsRejected) {
  // Relu of an int64 input: the checker accepts int64 Relu from opset 14, the importer does not.
  OnnxModelBuilder b(14);
  b.Input("x", {2, 3}, onnx::TensorProto::INT64).Output("y", {2, 3}, onnx::TensorProto::INT64);
  b.Node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_EQ(ImportError(b.Bytes()),
            "node 0 \"relu\" (Relu): input 0 'x' is int64; only float32 is supported here");
}

TEST(OnnxMalformedTest, DynamicDimensionIsNamedAndCanBeFixed) {
  OnnxModelBuilder b;
  b.Input("x", {-1, 3, 8, 8}).Weight("w", {4, 3, 3, 3}, 1).Output("y", {-1, 4, 6, 6});
  b.Node("Conv", {"x", "w"}, {"y"}, "conv");
  EXPECT_EQ(ImportError(b.Bytes()),
            "graph input 'x': dimension 0 is dynamic ('batch'); only static shapes are supported "
            "(give one in OnnxImportOptions::input_shapes)");
  OnnxImportOptions options;
  options.input_shapes["x"] = {2, 3, 8, 8};
  EXPECT_EQ(ImportError(b.Bytes(), options), "");
}

TEST(OnnxMalformedTest, UnsupportedAttributeNamesTheNode) {
  OnnxModelBuilder b = ConvRelu();
  OnnxModelBuilder::SetInts(b.graph()->mutable_node(0), "strides", {1, 2});
  auto* shape = b.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
  shape->mutable_shape()->mutable_dim(3)->set_dim_value(4);
  EXPECT_EQ(ImportError(b.Bytes()),
            "node 0 \"conv\" (Conv): strides [1, 2] differ per axis; only equal strides on every "
            "spatial axis are supported");
}

TEST(OnnxMalformedTest, WeightsWithTooFewBytesAreNamed) {
  OnnxModelBuilder b = ConvRelu();
  onnx::TensorProto* w = b.graph()->mutable_initializer(0);
  w->set_raw_data(w->raw_data().substr(0, 16));
  OnnxImportOptions options;
  options.run_checker = false;
  std::string error = ImportError(b.Bytes(), options);
  EXPECT_NE(error.find("initializer 'w': raw data holds 16 bytes"), std::string::npos) << error;
}

TEST(OnnxMalformedTest, CheckerFailuresAreUserErrors) {
  OnnxModelBuilder b = ConvRelu();
  b.graph()->mutable_node(1)->add_input("x");  // Relu with two inputs
  std::string error = ImportError(b.Bytes());
  EXPECT_NE(error.find("the ONNX checker rejects the model"), std::string::npos) << error;
  EXPECT_NE(error.find("relu"), std::string::npos) << error;
}

TEST(OnnxMalformedTest, HugeShapeComputationIsRefused) {
  OnnxModelBuilder b;
  b.Input("x", {1}).Output("y", {1048576, 1048576});
  b.Int64s("shape", {1048576, 1048576});
  b.Node("ConstantOfShape", {"shape"}, {"c"}, "fill");
  b.Node("Add", {"x", "c"}, {"y"}, "add");
  EXPECT_EQ(ImportError(b.Bytes()),
            "node 0 \"fill\" (ConstantOfShape): a tensor of shape [1048576, 1048576] is too large "
            "to compute at import time");
}

TEST(OnnxMalformedTest, HugeBroadcastOfConstantsIsRefused) {
  OnnxModelBuilder b;
  b.Input("x", {1}).Output("y", {32768, 32768});
  b.Weight("a", {32768, 1}, 1).Weight("b", {1, 32768}, 2);
  b.Node("Add", {"a", "b"}, {"c"}, "fold");
  b.Node("Add", {"x", "c"}, {"y"}, "add");
  EXPECT_EQ(ImportError(b.Bytes()),
            "node 0 \"fold\" (Add): a tensor of shape [32768, 32768] is too large to compute at "
            "import time");
}

TEST(OnnxMalformedTest, ImportTimeTensorsPastTheBudgetAreRefused) {
  OnnxModelBuilder b;
  b.Input("x", {1}).Output("y", {512, 1024});
  b.Int64s("shape", {512, 1024});
  b.Node("ConstantOfShape", {"shape"}, {"c"}, "fill");
  b.Node("Add", {"x", "c"}, {"y"}, "add");
  OnnxImportOptions options;
  options.max_import_time_bytes = 1 << 20;
  EXPECT_EQ(ImportError(b.Bytes(), options),
            "node 0 \"fill\" (ConstantOfShape): the tensors computed at import time would hold "
            "more than 1 MiB in all (this one: [512, 1024], 2 MiB)");
  options.max_import_time_bytes = 4 << 20;
  EXPECT_EQ(ImportError(b.Bytes(), options), "");
}

TEST(OnnxMalformedTest, CorruptedBytesNeverCrash) {
  // Every single-byte corruption of a valid model imports or is a UserError.
  std::string bytes = ConvRelu().Bytes();
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string corrupt = bytes;
    corrupt[rng() % corrupt.size()] = static_cast<char>(rng());
    try {
      ImportOnnxFromBytes(corrupt);
    } catch (const UserError&) {
    }
  }
}

TEST(OnnxMalformedTest, DuplicateOutputIsNamed) {
  OnnxModelBuilder b = ConvRelu();
  b.graph()->mutable_node(1)->set_output(0, "c");
  std::string error = ImportError(b.Bytes());
  EXPECT_NE(error.find("output 'c' is defined twice"), std::string::npos) << error;
}

// A model output named like a graph input but declaring another shape made libonnx 1.12's shape
// inference crash (fuzzer finding: a rank-2 "input" reached ConvTranspose).
TEST(OnnxMalformedTest, AnOutputRedeclaringAnInputIsNamed) {
  OnnxModelBuilder b = ConvRelu();
  b.Output("x", {1, 6});
  std::string error = ImportError(b.Bytes());
  EXPECT_NE(error.find("model output 'x' declares another type than the graph input"),
            std::string::npos)
      << error;
  OnnxModelBuilder same = ConvRelu();
  same.Output("x", {1, 3, 8, 8});
  EXPECT_EQ(ImportError(same.Bytes()), "") << "an input passed through as an output";
}

}  // namespace
}  // namespace tirtune::graph
