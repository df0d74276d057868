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
      {"test_add_uint8", "UINT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_cast_BFLOAT16_to_FLOAT",
       "BFLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_cast_DOUBLE_to_FLOAT", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_cast_DOUBLE_to_FLOAT16",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_cast_FLOAT16_to_DOUBLE",
       "FLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_cast_FLOAT16_to_FLOAT",
       "FLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_cast_FLOAT_to_BFLOAT16", "Cast to BFLOAT16"},
      {"test_cast_FLOAT_to_DOUBLE", "Cast to DOUBLE"},
      {"test_cast_FLOAT_to_FLOAT16", "Cast to FLOAT16"},
      {"test_cast_FLOAT_to_STRING", "Cast to STRING"},
      {"test_cast_STRING_to_FLOAT", "STRING tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_BFLOAT16_to_FLOAT_expanded",
       "BFLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_DOUBLE_to_FLOAT16_expanded",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_DOUBLE_to_FLOAT_expanded",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_FLOAT16_to_DOUBLE_expanded",
       "FLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_FLOAT16_to_FLOAT_expanded",
       "FLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_FLOAT_to_BFLOAT16_expanded",
       "BFLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_FLOAT_to_DOUBLE_expanded",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_FLOAT_to_FLOAT16_expanded",
       "FLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_FLOAT_to_STRING_expanded",
       "STRING tensors (the graph holds float32, and int64 indices)"},
      {"test_castlike_STRING_to_FLOAT_expanded",
       "STRING tensors (the graph holds float32, and int64 indices)"},
      {"test_clip_default_int8_inbounds",
       "INT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_clip_default_int8_max", "INT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_clip_default_int8_min", "INT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_constant_pad",
       "a Pad constant computed by the graph (it must be known at import time)"},
      {"test_constantofshape_int_shape_zero", "empty tensors"},
      {"test_cumsum_1d", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_cumsum_1d_exclusive", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_cumsum_1d_reverse", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_cumsum_1d_reverse_exclusive",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_cumsum_2d_axis_0", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_cumsum_2d_axis_1", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_cumsum_2d_negative_axis",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_div_uint8", "UINT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_dropout_default_mask", "the second output (mask or indices) is used"},
      {"test_dropout_default_mask_ratio", "the second output (mask or indices) is used"},
      {"test_edge_pad", "integer inputs to an operator computed by the graph (float32 only)"},
      {"test_einsum_batch_diagonal", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_einsum_batch_matmul", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_einsum_inner_prod", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_einsum_sum", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_einsum_transpose", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_gathernd_example_int32_batch_dim1", "GatherND with batch_dims"},
      {"test_greater",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_greater_bcast",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_greater_equal",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_greater_equal_bcast",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_greater_equal_bcast_expanded",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_greater_equal_expanded",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_identity_opt", "sequence and optional inputs"},
      {"test_identity_sequence", "sequence and optional inputs"},
      {"test_less", "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_less_bcast",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_less_equal",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_less_equal_bcast",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_less_equal_bcast_expanded",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_less_equal_expanded",
       "a comparison of tensors computed by the graph (the graph holds no booleans)"},
      {"test_max_float16", "FLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_max_float64", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_max_int16", "INT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_max_int8", "INT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_max_uint16", "UINT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_max_uint32", "UINT32 tensors (the graph holds float32, and int64 indices)"},
      {"test_max_uint64", "UINT64 tensors (the graph holds float32, and int64 indices)"},
      {"test_max_uint8", "UINT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_maxpool_2d_uint8", "UINT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_maxpool_with_argmax_2d_precomputed_pads",
       "the second output (mask or indices) is used"},
      {"test_maxpool_with_argmax_2d_precomputed_strides",
       "the second output (mask or indices) is used"},
      {"test_min_float16", "FLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_min_float64", "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_min_int16", "INT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_min_int8", "INT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_min_uint16", "UINT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_min_uint32", "UINT32 tensors (the graph holds float32, and int64 indices)"},
      {"test_min_uint64", "UINT64 tensors (the graph holds float32, and int64 indices)"},
      {"test_min_uint8", "UINT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_mod_mixed_sign_float16",
       "FLOAT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_mod_mixed_sign_float64",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_mod_mixed_sign_int16", "INT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_mod_mixed_sign_int8", "INT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_mod_uint16", "UINT16 tensors (the graph holds float32, and int64 indices)"},
      {"test_mod_uint32", "UINT32 tensors (the graph holds float32, and int64 indices)"},
      {"test_mod_uint64", "UINT64 tensors (the graph holds float32, and int64 indices)"},
      {"test_mod_uint8", "UINT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_mul_uint8", "UINT8 tensors (the graph holds float32, and int64 indices)"},
      {"test_onehot_negative_indices",
       "depth and values given at run time (they must be known at import time; see below)"},
      {"test_onehot_with_axis",
       "depth and values given at run time (they must be known at import time; see below)"},
      {"test_onehot_with_negative_axis",
       "depth and values given at run time (they must be known at import time; see below)"},
      {"test_onehot_without_axis",
       "depth and values given at run time (they must be known at import time; see below)"},
      {"test_pow_types_float", "an integer base with a float exponent computed by the graph"},
      {"test_pow_types_float32_uint32",
       "UINT32 tensors (the graph holds float32, and int64 indices)"},
      {"test_pow_types_float32_uint64",
       "UINT64 tensors (the graph holds float32, and int64 indices)"},
      {"test_pow_types_int32_float32",
       "an integer base with a float exponent computed by the graph"},
      {"test_pow_types_int64_float32",
       "an integer base with a float exponent computed by the graph"},
      {"test_range_float_type_positive_delta",
       "float Range on graph inputs (Range is folded at import only)"},
      {"test_reduce_log_sum_exp_default_axes_keepdims_example",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_reduce_log_sum_exp_default_axes_keepdims_random",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_reduce_log_sum_exp_do_not_keepdims_example",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_reduce_log_sum_exp_do_not_keepdims_random",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_reduce_log_sum_exp_keepdims_example",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_reduce_log_sum_exp_keepdims_random",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_reduce_log_sum_exp_negative_axes_keepdims_example",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_reduce_log_sum_exp_negative_axes_keepdims_random",
       "DOUBLE tensors (the graph holds float32, and int64 indices)"},
      {"test_reflect_pad", "integer inputs to an operator computed by the graph (float32 only)"},
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
      {"test_sub_uint8", "UINT8 tensors (the graph holds float32, and int64 indices)"},
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

// Imports and runs one case; returns an empty string when every output matches, else what
// differs. Throws what the importer or the executor throws.
std::string RunCase(const std::string& name, const std::set<std::string>& bound = {}) {
  fs::path dir = fs::path(kNodeTestDir) / name;
  onnx::ModelProto model;
  if (!ReadProto(dir / "model.onnx", &model)) return "model.onnx does not parse";
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer()) initializers.insert(t.name());
  OnnxImportOptions options;
  std::vector<NDArray> runtime_inputs;
  int index = 0;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (initializers.count(input.name())) continue;
    onnx::TensorProto proto;
    if (!ReadProto(dir / "test_data_set_0" / fmt::format("input_{}.pb", index++), &proto)) {
      return "input data missing";
    }
    NDArray array = testing::ArrayFromProto(proto);
    if (!array.defined() || array.dtype() != DataType::Float(32) || bound.count(input.name())) {
      // Also an unsupported type: the importer must reject it (it is then a graph input).
      if (array.defined()) options.constant_inputs[input.name()] = array;
      continue;
    }
    runtime_inputs.push_back(array);
  }
  Graph graph = ImportOnnx((dir / "model.onnx").string(), options);
  std::vector<NDArray> outputs = RunGraph(graph, runtime_inputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    onnx::TensorProto proto;
    if (!ReadProto(dir / "test_data_set_0" / fmt::format("output_{}.pb", i), &proto)) {
      return fmt::format("output_{}.pb missing", i);
    }
    NDArray expected = testing::ArrayFromProto(proto);
    if (!expected.defined()) return fmt::format("output {} has an unsupported type", i);
    if (expected.shape() != outputs[i].shape()) return fmt::format("output {}: shapes differ", i);
    for (int64_t k = 0; k < expected.size(); ++k) {
      double e = expected.GetDouble(k), a = outputs[i].GetDouble(k);
      if (!(std::fabs(e - a) <= 1e-4 * (1.0 + std::fabs(e))) && !(std::isinf(e) && e == a)) {
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
  EXPECT_GE(passing, 629) << "of " << Cases().size() << " cases of supported operators";
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
