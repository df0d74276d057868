// Where each group of the per-store feature row lives (private to search/feature/): the column
// offsets that the extractor writes and FeatureNames() names. The layout follows Ansor's 164
// columns, with 8 register-block columns, 4 access-shape columns and 8 size-share columns after
// them; docs of each column are in feature_names.cc.
#pragma once

#include <cstddef>

#include "tirtune/search/feature.h"

namespace tirtune::feature_layout {

/// Arithmetic counts: 7 classes for float, the same 7 for int, then bool ops and selects.
constexpr size_t kNumArithClasses = 7;
constexpr size_t kCompute = 0;
constexpr size_t kFloatOps = kCompute;
constexpr size_t kIntOps = kFloatOps + kNumArithClasses;
constexpr size_t kBoolOp = kIntOps + kNumArithClasses;
constexpr size_t kSelect = kBoolOp + 1;

/// Loop-kind features (vectorize, unroll, parallel): num, prod, innermost length and a one-hot
/// position of 8 values.
constexpr size_t kNumPositions = 8;
constexpr size_t kLoopKindWidth = 3 + kNumPositions;
constexpr size_t kVectorize = kSelect + 1;
constexpr size_t kUnroll = kVectorize + kLoopKindWidth;
constexpr size_t kParallel = kUnroll + kLoopKindWidth;

/// is_gpu, the extents of the 7 GPU thread axes, the block's shared memory and an occupancy
/// estimate (zero on CPU targets).
constexpr size_t kGpu = kParallel + kLoopKindWidth;
constexpr size_t kGpuWidth = 10;

/// Per-buffer access features of up to kNumBuffers buffers.
constexpr size_t kBuffers = kGpu + kGpuWidth;
constexpr size_t kBufferWidth = 18;
constexpr size_t kNumBuffers = 5;

/// The arithmetic-intensity curve.
constexpr size_t kIntensity = kBuffers + kBufferWidth * kNumBuffers;
constexpr size_t kIntensitySamples = 10;

/// Allocation features of the stored buffer, then the outer-scope features.
constexpr size_t kAlloc = kIntensity + kIntensitySamples;
constexpr size_t kOuter = kAlloc + 4;

/// The register block of the store (WriteRegisterBlock in per_store_feature.cc).
constexpr size_t kRegisterBlock = kOuter + 3;
constexpr size_t kRegisterBlockWidth = 8;

/// The shape of the store's accesses (WriteAccessShape in per_store_feature.cc): gathered
/// loads, the guards around it, and whether it only copies (a padding stage, a write-back).
constexpr size_t kAccessShape = kRegisterBlock + kRegisterBlockWidth;
constexpr size_t kAccessShapeWidth = 4;

/// Size shares: columns of kShareSources again, relative to the candidate's float operations
/// (filled once all rows are known, FillSizeShares in per_store_feature.cc).
constexpr size_t kShares = kAccessShape + kAccessShapeWidth;
constexpr size_t kNumShares = 8;
constexpr size_t kEnd = kShares + kNumShares;

static_assert(kEnd == FeatureMatrix::kNumFeatures, "the groups must fill the row exactly");

/// Column offsets inside one buffer's group.
enum BufferColumn : size_t {
  kAccRead,
  kAccWrite,
  kAccReadWrite,
  kBytes,
  kUniqueBytes,
  kLines,
  kUniqueLines,
  kReuseLoopMultipleRead,
  kReuseSerialMultipleReadWrite,
  kReuseNone,
  kReuseDisIter,
  kReuseDisBytes,
  kReuseCt,
  kBytesDReuseCt,
  kUniqueBytesDReuseCt,
  kLinesDReuseCt,
  kUniqueLinesDReuseCt,
  kStride,
};

/// The columns the size shares are taken of, in the order of the kShares group: outer_prod,
/// float_mad, float_addsub, select, B0_bytes, B0_lines, B1_lines, B2_lines.
constexpr size_t kShareSources[kNumShares] = {kOuter + 0,
                                              kFloatOps + 0,
                                              kFloatOps + 1,
                                              kSelect,
                                              kBuffers + kBytes,
                                              kBuffers + kLines,
                                              kBuffers + kBufferWidth + kLines,
                                              kBuffers + 2 * kBufferWidth + kLines};

/// Cache line size the line counts assume.
constexpr double kCacheLineBytes = 64;

}  // namespace tirtune::feature_layout
