// The table of ONNX operators the importer converts (domain ai.onnx).
#include "converters.h"

#include <map>

namespace tirtune::graph::onnx_import {
namespace {

const std::map<std::string, Converter>& Table() {
  static const std::map<std::string, Converter> table = {
      {"Add", ConvertBinary},
      {"AveragePool", ConvertPool},
      {"BatchNormalization", ConvertBatchNormalization},
      {"Cast", ConvertCast},
      {"Clip", ConvertClip},
      {"Concat", ConvertConcat},
      {"Constant", ConvertConstant},
      {"ConstantOfShape", ConvertConstantOfShape},
      {"Conv", ConvertConv},
      {"ConvTranspose", ConvertConvTranspose},
      {"Div", ConvertBinary},
      {"Dropout", ConvertDropout},
      {"Equal", ConvertEqual},
      {"Erf", ConvertUnary},
      {"Exp", ConvertUnary},
      {"Expand", ConvertExpand},
      {"Flatten", ConvertFlatten},
      {"Gather", ConvertGather},
      {"Gemm", ConvertGemm},
      {"GlobalAveragePool", ConvertGlobalAveragePool},
      {"Identity", ConvertIdentity},
      {"LayerNormalization", ConvertLayerNormalization},
      {"MatMul", ConvertMatMul},
      {"MaxPool", ConvertPool},
      {"Mul", ConvertBinary},
      {"Neg", ConvertUnary},
      {"Pow", ConvertPow},
      {"Range", ConvertRange},
      {"Reciprocal", ConvertReciprocal},
      {"ReduceMax", ConvertReduce},
      {"ReduceMean", ConvertReduce},
      {"ReduceSum", ConvertReduce},
      {"Relu", ConvertUnary},
      {"Reshape", ConvertReshape},
      {"Shape", ConvertShape},
      {"Sigmoid", ConvertUnary},
      {"Slice", ConvertSlice},
      {"Softmax", ConvertSoftmax},
      {"Sqrt", ConvertUnary},
      {"Squeeze", ConvertSqueeze},
      {"Sub", ConvertBinary},
      {"Tanh", ConvertUnary},
      {"Transpose", ConvertTranspose},
      {"Unsqueeze", ConvertUnsqueeze},
      {"Where", ConvertWhere},
  };
  return table;
}

}  // namespace

Converter FindConverter(const std::string& op_type) {
  auto it = Table().find(op_type);
  return it == Table().end() ? nullptr : it->second;
}

std::vector<std::string> ConvertedOperators() {
  std::vector<std::string> names;
  for (const auto& [name, converter] : Table()) names.push_back(name);
  return names;
}

}  // namespace tirtune::graph::onnx_import
