// The table of ONNX operators the importer converts (domain ai.onnx).
#include "converters.h"

#include <map>

namespace tirtune::graph::onnx_import {
namespace {

const std::map<std::string, Converter>& Table() {
  static const std::map<std::string, Converter> table = {
      {"Abs", ConvertActivation},
      {"Add", ConvertBinary},
      {"And", ConvertCompare},
      {"ArgMax", ConvertArgReduce},
      {"ArgMin", ConvertArgReduce},
      {"AveragePool", ConvertPool},
      {"BatchNormalization", ConvertBatchNormalization},
      {"Cast", ConvertCast},
      {"Ceil", ConvertActivation},
      {"Celu", ConvertActivation},
      {"Clip", ConvertClip},
      {"Concat", ConvertConcat},
      {"Constant", ConvertConstant},
      {"ConstantOfShape", ConvertConstantOfShape},
      {"Conv", ConvertConv},
      {"ConvTranspose", ConvertConvTranspose},
      {"Cos", ConvertActivation},
      {"CumSum", ConvertCumSum},
      {"DepthToSpace", ConvertDepthSpace},
      {"Div", ConvertBinary},
      {"Dropout", ConvertDropout},
      {"Einsum", ConvertEinsum},
      {"Elu", ConvertActivation},
      {"Equal", ConvertCompare},
      {"Erf", ConvertUnary},
      {"Exp", ConvertUnary},
      {"Expand", ConvertExpand},
      {"Flatten", ConvertFlatten},
      {"Floor", ConvertActivation},
      {"Gather", ConvertGather},
      {"GatherElements", ConvertGatherElements},
      {"GatherND", ConvertGatherND},
      {"Gemm", ConvertGemm},
      {"GlobalAveragePool", ConvertGlobalAveragePool},
      {"GlobalMaxPool", ConvertGlobalMaxPool},
      {"Greater", ConvertCompare},
      {"GreaterOrEqual", ConvertCompare},
      {"GroupNormalization", ConvertGroupNormalization},
      {"HardSigmoid", ConvertActivation},
      {"HardSwish", ConvertActivation},
      {"Hardmax", ConvertSoftmax},
      {"Identity", ConvertIdentity},
      {"InstanceNormalization", ConvertInstanceNormalization},
      {"LRN", ConvertLrn},
      {"LayerNormalization", ConvertLayerNormalization},
      {"LeakyRelu", ConvertActivation},
      {"Less", ConvertCompare},
      {"LessOrEqual", ConvertCompare},
      {"Log", ConvertActivation},
      {"LogSoftmax", ConvertSoftmax},
      {"LpNormalization", ConvertLpNormalization},
      {"MatMul", ConvertMatMul},
      {"Max", ConvertVariadic},
      {"MaxPool", ConvertPool},
      {"Mean", ConvertVariadic},
      {"MeanVarianceNormalization", ConvertMeanVarianceNormalization},
      {"Min", ConvertVariadic},
      {"Mish", ConvertActivation},
      {"Mod", ConvertMod},
      {"Mul", ConvertBinary},
      {"Neg", ConvertUnary},
      {"NegativeLogLikelihoodLoss", ConvertNegativeLogLikelihoodLoss},
      {"NonZero", ConvertNonZero},
      {"Not", ConvertCompare},
      {"OneHot", ConvertOneHot},
      {"Or", ConvertCompare},
      {"PRelu", ConvertPRelu},
      {"Pad", ConvertPad},
      {"Pow", ConvertPow},
      {"Range", ConvertRange},
      {"Reciprocal", ConvertReciprocal},
      {"ReduceL1", ConvertReduce},
      {"ReduceL2", ConvertReduce},
      {"ReduceLogSum", ConvertReduce},
      {"ReduceLogSumExp", ConvertReduce},
      {"ReduceMax", ConvertReduce},
      {"ReduceMean", ConvertReduce},
      {"ReduceMin", ConvertReduce},
      {"ReduceProd", ConvertReduce},
      {"ReduceSum", ConvertReduce},
      {"ReduceSumSquare", ConvertReduce},
      {"Relu", ConvertUnary},
      {"Reshape", ConvertReshape},
      {"Resize", ConvertResize},
      {"Round", ConvertActivation},
      {"Scatter", ConvertScatterElements},
      {"ScatterElements", ConvertScatterElements},
      {"ScatterND", ConvertScatterND},
      {"Selu", ConvertActivation},
      {"Shape", ConvertShape},
      {"Sigmoid", ConvertUnary},
      {"Sign", ConvertActivation},
      {"Sin", ConvertActivation},
      {"Size", ConvertSize},
      {"Slice", ConvertSlice},
      {"Softmax", ConvertSoftmax},
      {"SoftmaxCrossEntropyLoss", ConvertSoftmaxCrossEntropyLoss},
      {"Softplus", ConvertActivation},
      {"Softsign", ConvertActivation},
      {"SpaceToDepth", ConvertDepthSpace},
      {"Split", ConvertSplit},
      {"Sqrt", ConvertUnary},
      {"Squeeze", ConvertSqueeze},
      {"Sub", ConvertBinary},
      {"Sum", ConvertVariadic},
      {"Tan", ConvertActivation},
      {"Tanh", ConvertUnary},
      {"ThresholdedRelu", ConvertActivation},
      {"Tile", ConvertTile},
      {"TopK", ConvertTopK},
      {"Transpose", ConvertTranspose},
      {"Trilu", ConvertTrilu},
      {"Unsqueeze", ConvertUnsqueeze},
      {"Upsample", ConvertResize},
      {"Where", ConvertWhere},
      {"Xor", ConvertCompare},
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
