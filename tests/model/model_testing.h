// Small ONNX models for the model tests, built with the ONNX protobuf API and written to a file.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../onnx/onnx_testing.h"

namespace tirtune::model::testing {

using graph::testing::OnnxModelBuilder;

/// x[1, 3, 8, 8] -> Conv 3x3 pad 1 (4 channels, bias) -> Relu -> MaxPool 2x2 -> Flatten
/// -> Gemm (transB, 5) -> y[1, 5]: several fused functions (transposes, conv, pool, dense).
inline OnnxModelBuilder SmallCnn() {
  OnnxModelBuilder b;
  b.Input("x", {1, 3, 8, 8}).Output("y", {1, 5});
  b.Weight("w1", {4, 3, 3, 3}, 1).Weight("b1", {4}, 2);
  b.Weight("fc_w", {5, 64}, 3).Weight("fc_b", {5}, 4);
  OnnxModelBuilder::SetInts(b.Node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r"});
  onnx::NodeProto* pool = b.Node("MaxPool", {"r"}, {"p"});
  OnnxModelBuilder::SetInts(pool, "kernel_shape", {2, 2});
  OnnxModelBuilder::SetInts(pool, "strides", {2, 2});
  b.Node("Flatten", {"p"}, {"f"});
  OnnxModelBuilder::SetInt(b.Node("Gemm", {"f", "fc_w", "fc_b"}, {"y"}), "transB", 1);
  return b;
}

/// x[4, 16] -> Gemm (transB, 8) -> Relu -> y[4, 8]: one fused function.
inline OnnxModelBuilder OneTask() {
  OnnxModelBuilder b;
  b.Input("x", {4, 16}).Output("y", {4, 8});
  b.Weight("w", {8, 16}, 1).Weight("b", {8}, 2);
  OnnxModelBuilder::SetInt(b.Node("Gemm", {"x", "w", "b"}, {"g"}), "transB", 1);
  b.Node("Relu", {"g"}, {"y"});
  return b;
}

inline std::string WriteModel(const OnnxModelBuilder& b, const std::filesystem::path& path) {
  std::ofstream(path, std::ios::binary) << b.Bytes();
  return path.string();
}

/// A fresh temporary directory named after the running test, removed by the caller.
inline std::filesystem::path TestDir(const std::string& prefix) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              (prefix + std::to_string(::getpid()) + "_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace tirtune::model::testing
