// FeatureNames(): one name per column of the per-store feature row, in the order of
// feature_layout.h. The names document the columns:
//  - compute (16): float_* and int_* counts of mad (a + b * c counts once), addsub, mul, divmod
//    (div, floordiv, floormod), cmp (comparisons, min, max), math_func (intrinsic calls) and
//    other_func (casts), then bool_op and select; each op counts once per lane and is weighted by
//    the product of the extents of the loops around it;
//  - vec_*, unroll_*, parallel_* (11 each): number of such loops around the store, product and
//    innermost extent, and where they sit (inner / middle / outer loop, spatial when the loop
//    variable indexes the stored element, reduce otherwise; mixed when they disagree);
//  - is_gpu, the GPU thread-axis extents around the store, the shared memory its kernel's
//    blocks allocate (bytes) and an occupancy estimate: the share of an SM's 2,048 thread slots
//    its blocks fill, limited by threads per block, 32 blocks per SM and 228 KiB of shared memory
//    (registers are unknown before compiling) (10, zero on CPU targets);
//  - B0..B4 (18 each): the buffers the store touches, most cache lines first;
//  - arith_intensity_curve_0..9: FLOPs per unique byte as loops are added from the innermost out;
//  - alloc_* (4): the allocation of the stored buffer, when the function allocates it;
//  - outer_prod, num_loops, auto_unroll_max_step;
//  - regblock_* (8): the register block, the loops inside the innermost loop of extent > 1 that
//    does not move the stored element (`reuse`): its size in elements (lanes included), its
//    number of loops of extent > 1, the extents of its three innermost such loops, the extent of
//    `reuse`, the block without its innermost loop, outer_prod over the block's size;
//  - gathered_loads, guard_num, guard_inner_iters, copy_iters: the loads of a vector access
//    (vector lanes or a vectorized loop) that stride by more than one element (gathers), weighted
//    by their executions; how many conditions guard the store (a guarded tile's partial copy)
//    and the loop iterations inside the innermost one; for a store that only copies (its value a
//    load, or a select of a load and a constant: a padding stage, a write-back) its iterations
//    (lanes included), 0 otherwise;
//  - share_* (8): outer_prod, float_mad, float_addsub, select, B0_bytes, B0_lines, B1_lines and
//    B2_lines again, each as log2(1 + x) - log2(1 + the function's float operations, or all its
//    operations without any) + 64 (0 stays 0): how the schedule spends the work, apart from how
//    much work there is.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "feature_layout.h"
#include "tirtune/search/feature.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

std::vector<std::string> MakeFeatureNames() {
  using namespace feature_layout;
  std::vector<std::string> names;
  // Step 1. Compute counts.
  const char* classes[] = {"mad", "addsub", "mul", "divmod", "cmp", "math_func", "other_func"};
  for (const char* type : {"float", "int"}) {
    for (const char* c : classes) names.push_back(fmt::format("{}_{}", type, c));
  }
  names.push_back("bool_op");
  names.push_back("select");
  // Step 2. Loop kinds.
  const char* positions[] = {"none",         "inner_spatial", "middle_spatial", "outer_spatial",
                             "inner_reduce", "middle_reduce", "outer_reduce",   "mixed"};
  for (const char* kind : {"vec", "unroll", "parallel"}) {
    names.push_back(fmt::format("{}_num", kind));
    names.push_back(fmt::format("{}_prod", kind));
    names.push_back(fmt::format("{}_len", kind));
    for (const char* p : positions) names.push_back(fmt::format("{}_pos_{}", kind, p));
  }
  // Step 3. GPU thread axes.
  for (const char* name :
       {"is_gpu", "blockIdx_x_len", "blockIdx_y_len", "blockIdx_z_len", "threadIdx_x_len",
        "threadIdx_y_len", "threadIdx_z_len", "vthread_len", "shared_bytes", "occupancy"}) {
    names.push_back(name);
  }
  // Step 4. Buffer accesses.
  const char* buffer_columns[] = {"acc_read",
                                  "acc_write",
                                  "acc_readwrite",
                                  "bytes",
                                  "unique_bytes",
                                  "lines",
                                  "unique_lines",
                                  "reuse_loop_multiple_read",
                                  "reuse_serial_multiple_read_write",
                                  "reuse_none",
                                  "reuse_dis_iter",
                                  "reuse_dis_bytes",
                                  "reuse_ct",
                                  "bytes_d_reuse_ct",
                                  "unique_bytes_d_reuse_ct",
                                  "lines_d_reuse_ct",
                                  "unique_lines_d_reuse_ct",
                                  "stride"};
  static_assert(std::size(buffer_columns) == kBufferWidth);
  for (size_t b = 0; b < kNumBuffers; ++b) {
    for (const char* c : buffer_columns) names.push_back(fmt::format("B{}_{}", b, c));
  }
  // Step 5. Arithmetic intensity, allocation, outer scope.
  for (size_t i = 0; i < kIntensitySamples; ++i) {
    names.push_back(fmt::format("arith_intensity_curve_{}", i));
  }
  for (const char* name : {"alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod",
                           "outer_prod", "num_loops", "auto_unroll_max_step"}) {
    names.push_back(name);
  }
  // Step 6. The register block.
  for (const char* name :
       {"regblock_elems", "regblock_num_loops", "regblock_inner_0", "regblock_inner_1",
        "regblock_inner_2", "regblock_reuse_len", "regblock_outer_elems", "regblock_outer_iters"}) {
    names.push_back(name);
  }
  // Step 7. The shape of the accesses.
  for (const char* name : {"gathered_loads", "guard_num", "guard_inner_iters", "copy_iters"}) {
    names.push_back(name);
  }
  // Step 8. Size shares, named after their sources.
  for (size_t source : kShareSources) names.push_back("share_" + names[source]);
  TT_ICHECK(names.size() == FeatureMatrix::kNumFeatures, "{} feature names for {} columns",
            names.size(), FeatureMatrix::kNumFeatures);
  return names;
}

}  // namespace

const std::vector<std::string>& FeatureNames() {
  static const std::vector<std::string> names = MakeFeatureNames();
  return names;
}

}  // namespace tirtune
