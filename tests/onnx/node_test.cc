// ONNX's own per-operator test cases (Debian's libonnx-testdata): every case whose nodes all use
// operators the importer supports is imported, run on the interpreter and compared with the
// expected outputs. Float inputs stay graph inputs; integer and bool inputs (shapes, indices,
// axes, conditions) are bound as constants, as they would be initializers in a real model.
//
// The cases that are expected to fail with a UserError are listed in kSkipped with the reason; a
// listed case that starts to pass fails the test, so the list stays true.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "onnx_testing.h"
#include "tirtune/graph/executor.h"
#include "tirtune/graph/onnx_import.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {
namespace {

namespace fs = std::filesystem;

const char* const kNodeTestDir = "/usr/share/libonnx-testdata/data/node";

// Cases of supported operators that the importer rejects on purpose, and why.
const std::map<std::string, std::string>& Skipped() {
  static const std::map<std::string, std::string> skipped = {
      {"test_cast_FLOAT_to_STRING", "STRING tensors (the graph holds numbers and bool)"},
      {"test_cast_STRING_to_FLOAT", "STRING tensors (the graph holds numbers and bool)"},
      {"test_castlike_FLOAT_to_STRING", "STRING tensors (the graph holds numbers and bool)"},
      {"test_castlike_FLOAT_to_STRING_expanded",
       "STRING tensors (the graph holds numbers and bool)"},
      {"test_castlike_STRING_to_FLOAT", "STRING tensors (the graph holds numbers and bool)"},
      {"test_castlike_STRING_to_FLOAT_expanded",
       "STRING tensors (the graph holds numbers and bool)"},
      {"test_constant_pad",
       "a Pad constant computed by the graph (it must be known at import time)"},
      {"test_constantofshape_int_shape_zero", "empty tensors"},
      {"test_dropout_default_mask", "the second output (mask or indices) is used"},
      {"test_dropout_default_mask_ratio", "the second output (mask or indices) is used"},
      {"test_einsum_inner_prod", "Einsum with a scalar result"},
      {"test_gathernd_example_int32_batch_dim1", "GatherND with batch_dims"},
      {"test_identity_opt", "sequence and optional inputs"},
      {"test_identity_sequence", "sequence and optional inputs"},
      {"test_maxpool_2d_uint8", "MaxPool of UINT8 tensors (pools compute in float32)"},
      {"test_maxpool_with_argmax_2d_precomputed_pads",
       "the second output (mask or indices) is used"},
      {"test_maxpool_with_argmax_2d_precomputed_strides",
       "the second output (mask or indices) is used"},
      {"test_onehot_negative_indices",
       "depth and values given at run time (they must be known at import time; see below)"},
      {"test_onehot_with_axis",
       "depth and values given at run time (they must be known at import time; see below)"},
      {"test_onehot_with_negative_axis",
       "depth and values given at run time (they must be known at import time; see below)"},
      {"test_onehot_without_axis",
       "depth and values given at run time (they must be known at import time; see below)"},
      {"test_pow_types_float", "an integer base with a float exponent computed by the graph"},
      {"test_pow_types_int32_float32",
       "an integer base with a float exponent computed by the graph"},
      {"test_pow_types_int64_float32",
       "an integer base with a float exponent computed by the graph"},
      {"test_range_float_type_positive_delta",
       "float Range on graph inputs (Range is folded at import only)"},
      {"test_reshape_allowzero_reordered", "empty tensors"},
      {"test_resize_downsample_scales_cubic",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_downsample_scales_cubic_A_n0p5_exclude_outside",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_downsample_scales_cubic_align_corners",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_downsample_scales_linear",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_downsample_scales_linear_align_corners",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_downsample_scales_nearest",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_tf_crop_and_resize", "tf_crop_and_resize"},
      {"test_resize_upsample_scales_cubic",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_upsample_scales_cubic_A_n0p5_exclude_outside",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_upsample_scales_cubic_align_corners",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_upsample_scales_cubic_asymmetric",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_upsample_scales_linear",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_upsample_scales_linear_align_corners",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_resize_upsample_scales_nearest",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
      {"test_slice_start_out_of_bounds", "empty tensors"},
      {"test_split_zero_size_splits", "empty tensors"},
      {"test_training_dropout", "training mode"},
      {"test_training_dropout_default", "training mode"},
      {"test_training_dropout_default_mask", "training mode"},
      {"test_training_dropout_mask", "training mode"},
      {"test_training_dropout_zero_ratio", "training mode"},
      {"test_training_dropout_zero_ratio_mask", "training mode"},
      {"test_tril_zero", "empty tensors"},
      {"test_triu_zero", "empty tensors"},
      {"test_upsample_nearest",
       "scales given at run time (tested bound at import: ResizeWithItsScalesKnownAtImport...)"},
  };
  return skipped;
}

bool ReadProto(const fs::path& path, google::protobuf::MessageLite* message) {
  std::ifstream in(path, std::ios::binary);
  return in && message->ParseFromIstream(&in);
}

// Every case directory whose model uses only supported operators.
std::vector<std::string> Cases() {
  std::vector<std::string> cases;
  if (!fs::is_directory(kNodeTestDir)) return cases;
  std::vector<std::string> ops = SupportedOnnxOperators();
  std::set<std::string> supported(ops.begin(), ops.end());
  for (const fs::directory_entry& entry : fs::directory_iterator(kNodeTestDir)) {
    onnx::ModelProto model;
    if (!ReadProto(entry.path() / "model.onnx", &model)) continue;
    bool all = model.graph().node_size() > 0;
    for (const onnx::NodeProto& node : model.graph().node()) {
      all = all && node.domain().empty() && supported.count(node.op_type());
    }
    if (all) cases.push_back(entry.path().filename().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

// The test data stores bfloat16 tensors as uint16 bits: `array` as the bfloat16 it holds where the
// model declares that type.
NDArray BFloat16Bits(const onnx::TypeProto& declared, NDArray array) {
  if (!array.defined() || array.dtype() != DataType::UInt(16) ||
      declared.tensor_type().elem_type() != onnx::TensorProto::BFLOAT16) {
    return array;
  }
  NDArray bits = NDArray::Empty(array.shape(), DataType::BFloat16());
  std::memcpy(bits.raw(), array.raw(), static_cast<size_t>(array.nbytes()));
  return bits;
}

// Imports and runs one case with every input a graph input of its own type, or, where the
// importer needs some known at import time (a shape, axes, pads), with the inputs that are not
// float32 (and those in `bound`) bound as constants. Returns an empty string when every output
// matches in type and value, else what differs. Throws what the importer or the executor throws.
std::string RunCase(const std::string& name, const std::set<std::string>& bound = {}) {
  fs::path dir = fs::path(kNodeTestDir) / name;
  onnx::ModelProto model;
  if (!ReadProto(dir / "model.onnx", &model)) return "model.onnx does not parse";
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<std::pair<std::string, NDArray>> inputs;
  std::set<std::string> reshaped;
  int index = 0;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (initializers.count(input.name())) continue;
    onnx::TensorProto proto;
    if (!ReadProto(dir / "test_data_set_0" / fmt::format("input_{}.pb", index++), &proto)) {
      return "input data missing";
    }
    inputs.emplace_back(input.name(), BFloat16Bits(input.type(), testing::ArrayFromProto(proto)));
    // (A few cases give data of another shape than the model declares: bound as a constant.)
    const auto& dims = input.type().tensor_type().shape().dim();
    std::vector<int64_t> declared;
    for (const auto& d : dims) declared.push_back(d.has_dim_value() ? d.dim_value() : -1);
    if (inputs.back().second.defined() && inputs.back().second.shape() != declared) {
      reshaped.insert(input.name());
    }
  }
  auto import = [&](bool bind_non_float) {
    OnnxImportOptions options;
    std::vector<NDArray> runtime_inputs;
    for (const auto& [input, array] : inputs) {
      bool bind = bound.count(input) || reshaped.count(input) || !array.defined() ||
                  (bind_non_float && array.dtype() != DataType::Float(32));
      if (!bind) {
        runtime_inputs.push_back(array);
      } else if (array.defined()) {
        options.constant_inputs[input] = array;
      }
      // (An undefined array is a type the test cannot read: left a graph input, which the
      // importer must reject.)
    }
    return std::make_pair(ImportOnnx((dir / "model.onnx").string(), options), runtime_inputs);
  };
  std::pair<Graph, std::vector<NDArray>> imported;
  try {
    imported = import(false);
  } catch (const UserError&) {
    imported = import(true);
  }
  std::vector<NDArray> outputs = RunGraph(imported.first, imported.second);
  for (size_t i = 0; i < outputs.size(); ++i) {
    onnx::TensorProto proto;
    if (!ReadProto(dir / "test_data_set_0" / fmt::format("output_{}.pb", i), &proto)) {
      return fmt::format("output_{}.pb missing", i);
    }
    NDArray expected = BFloat16Bits(model.graph().output(static_cast<int>(i)).type(),
                                    testing::ArrayFromProto(proto));
    if (!expected.defined()) return fmt::format("output {} has an unsupported type", i);
    if (expected.shape() != outputs[i].shape()) return fmt::format("output {}: shapes differ", i);
    if (expected.dtype() != outputs[i].dtype()) {
      return fmt::format("output {} is {}, expected {}", i, outputs[i].dtype().str(),
                         expected.dtype().str());
    }
    // bfloat16 results within one unit in the last place: the test data truncates to bfloat16,
    // the graph rounds to nearest even (as PyTorch and onnxruntime do).
    double rtol = expected.dtype() == DataType::BFloat16() ? 1.0 / 128 : 1e-4;
    for (int64_t k = 0; k < expected.size(); ++k) {
      double e = expected.GetDouble(k), a = outputs[i].GetDouble(k);
      if (!(std::fabs(e - a) <= rtol * (1.0 + std::fabs(e))) && !(std::isinf(e) && e == a) &&
          !(std::isnan(e) && std::isnan(a))) {
        return fmt::format("output {} element {}: expected {}, got {}", i, k, e, a);
      }
    }
  }
  return "";
}

class OnnxNodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNodeTest, MatchesTheExpectedOutputs) {
  const std::string& name = GetParam();
  if (name == "no_testdata") GTEST_SKIP() << "libonnx-testdata is not installed";
  auto skip = Skipped().find(name);
  if (skip == Skipped().end()) {
    std::string mismatch;
    try {
      mismatch = RunCase(name);
    } catch (const std::exception& e) {
      FAIL() << "error: " << e.what();
    }
    if (!mismatch.empty()) FAIL() << "mismatch: " << name << ": " << mismatch;
    return;
  }
  std::string outcome;
  try {
    outcome = RunCase(name);
  } catch (const UserError& e) {
    GTEST_SKIP() << skip->second << " (" << e.what() << ")";
  }
  FAIL() << name << " is listed as skipped (" << skip->second
         << ") but imports; outcome: " << (outcome.empty() ? "matches, remove it" : outcome);
}

// Resize's node tests give the scales at run time; exporters write them as initializers, and the
// importer needs them known at import time: the same cases with the scales bound as constants.
TEST(OnnxNodeTest, ResizeWithItsScalesKnownAtImportMatchesTheExpectedOutputs) {
  if (Cases().empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  int ran = 0;
  for (const std::string& name : Cases()) {
    if (name.rfind("test_resize_", 0) != 0 && name.rfind("test_upsample_", 0) != 0) continue;
    if (name.find("_scales_") == std::string::npos && name != "test_upsample_nearest") continue;
    SCOPED_TRACE(name);
    EXPECT_EQ(RunCase(name, {"scales"}), "");
    ++ran;
  }
  EXPECT_GE(ran, 14);
}

// The cases each run above either pass or are listed with a reason; this keeps the number that
// pass from shrinking unnoticed (an operator dropped from the table would move its cases out of
// Cases() without a failure).
TEST(OnnxNodeTest, TheNumberOfPassingCasesDoesNotShrink) {
  if (Cases().empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  int passing = 0;
  for (const std::string& name : Cases()) passing += Skipped().count(name) == 0;
  EXPECT_GE(passing, 719) << "of " << Cases().size() << " cases of supported operators";
}

// OneHot's node tests give depth and values as float graph inputs; exporters write them as
// constants: the same cases with both bound.
TEST(OnnxNodeTest, OneHotWithDepthAndValuesKnownAtImportMatchesTheExpectedOutputs) {
  if (Cases().empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  int ran = 0;
  for (const std::string& name : Cases()) {
    if (name.rfind("test_onehot_", 0) != 0) continue;
    SCOPED_TRACE(name);
    EXPECT_EQ(RunCase(name, {"depth", "values"}), "");
    ++ran;
  }
  EXPECT_EQ(ran, 4);
}

std::vector<std::string> CasesOrPlaceholder() {
  std::vector<std::string> cases = Cases();
  if (cases.empty()) cases.push_back("no_testdata");
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Node, OnnxNodeTest, ::testing::ValuesIn(CasesOrPlaceholder()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(OnnxNodeCoverageTest, EverySkippedCaseIsATestCase) {
  std::vector<std::string> cases = Cases();
  if (cases.empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  std::set<std::string> all(cases.begin(), cases.end());
  for (const auto& [name, reason] : Skipped()) EXPECT_TRUE(all.count(name)) << name;
}

}  // namespace
}  // namespace tirtune::graph
