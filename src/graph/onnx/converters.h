// The operator converters, one function per ONNX operator, grouped by family in convert_*.cc;
// converters.cc maps operator names to them. Private to src/graph/onnx/.
#pragma once

#include "import_context.h"

namespace tirtune::graph::onnx_import {

// convert_elementwise.cc
void ConvertUnary(ImportContext& ctx);  // Relu, Sigmoid, Tanh, Erf, Sqrt, Exp, Neg
// Abs, Log, Floor, Ceil, Round, Sin, Cos, Sign, Softsign, Softplus, Mish, HardSwish, HardSigmoid,
// LeakyRelu, ThresholdedRelu, Elu, Celu, Selu
void ConvertActivation(ImportContext& ctx);
void ConvertReciprocal(ImportContext& ctx);
void ConvertPRelu(ImportContext& ctx);
void ConvertMod(ImportContext& ctx);
void ConvertVariadic(ImportContext& ctx);  // Max, Min, Sum, Mean of any number of inputs
void ConvertBinary(ImportContext& ctx);  // Add, Sub, Mul, Div
void ConvertPow(ImportContext& ctx);
void ConvertClip(ImportContext& ctx);
// Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor, Not (at import time)
void ConvertCompare(ImportContext& ctx);
void ConvertWhere(ImportContext& ctx);
void ConvertCast(ImportContext& ctx);
void ConvertCastLike(ImportContext& ctx);
void ConvertGelu(ImportContext& ctx);
void ConvertIdentity(ImportContext& ctx);
void ConvertDropout(ImportContext& ctx);

// convert_nn.cc
void ConvertConv(ImportContext& ctx);
void ConvertConvTranspose(ImportContext& ctx);
void ConvertPool(ImportContext& ctx);  // MaxPool, AveragePool
void ConvertGlobalAveragePool(ImportContext& ctx);
void ConvertGlobalMaxPool(ImportContext& ctx);
void ConvertGemm(ImportContext& ctx);
void ConvertMatMul(ImportContext& ctx);

// convert_einsum.cc
void ConvertEinsum(ImportContext& ctx);

// convert_norm.cc
void ConvertBatchNormalization(ImportContext& ctx);
void ConvertLayerNormalization(ImportContext& ctx);
void ConvertInstanceNormalization(ImportContext& ctx);
void ConvertMeanVarianceNormalization(ImportContext& ctx);
void ConvertLrn(ImportContext& ctx);
void ConvertGroupNormalization(ImportContext& ctx);
void ConvertLpNormalization(ImportContext& ctx);

// convert_reduce.cc
void ConvertSoftmax(ImportContext& ctx);  // Softmax, LogSoftmax, Hardmax
void ConvertReduce(ImportContext& ctx);   // ReduceSum/Mean/Max/Min/L1/L2/SumSquare/LogSum/LogSumExp
void ConvertArgReduce(ImportContext& ctx);  // ArgMax, ArgMin
void ConvertNegativeLogLikelihoodLoss(ImportContext& ctx);
void ConvertSoftmaxCrossEntropyLoss(ImportContext& ctx);
void ConvertTopK(ImportContext& ctx);
void ConvertCumSum(ImportContext& ctx);

// convert_shape.cc
void ConvertShape(ImportContext& ctx);
void ConvertReshape(ImportContext& ctx);
void ConvertFlatten(ImportContext& ctx);
void ConvertTranspose(ImportContext& ctx);
void ConvertGather(ImportContext& ctx);
void ConvertConcat(ImportContext& ctx);
void ConvertSlice(ImportContext& ctx);
void ConvertSqueeze(ImportContext& ctx);
void ConvertUnsqueeze(ImportContext& ctx);
void ConvertConstant(ImportContext& ctx);
void ConvertConstantOfShape(ImportContext& ctx);
void ConvertExpand(ImportContext& ctx);
void ConvertRange(ImportContext& ctx);

// convert_shape.cc, rearrangements
void ConvertDepthSpace(ImportContext& ctx);  // DepthToSpace, SpaceToDepth
void ConvertTile(ImportContext& ctx);
void ConvertSplit(ImportContext& ctx);
void ConvertTrilu(ImportContext& ctx);
void ConvertSize(ImportContext& ctx);
void ConvertPad(ImportContext& ctx);

// convert_resize.cc
void ConvertResize(ImportContext& ctx);  // Resize, Upsample

// convert_index.cc
void ConvertGatherElements(ImportContext& ctx);
void ConvertScatterElements(ImportContext& ctx);  // ScatterElements, Scatter
void ConvertScatterND(ImportContext& ctx);
void ConvertGatherND(ImportContext& ctx);
void ConvertOneHot(ImportContext& ctx);
void ConvertNonZero(ImportContext& ctx);  // at import time

}  // namespace tirtune::graph::onnx_import
