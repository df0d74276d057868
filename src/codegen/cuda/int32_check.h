// Whether a kernel's int64 index arithmetic can be printed as int: every int64 subexpression's
// constant bounds, under the ranges of the loops around it and of the block and thread indices,
// lie in [-2^31, 2^31). A value it cannot bound (a load of an int64 buffer) keeps the kernel
// int64.
#pragma once

#include "tirtune/ir/gpu_module.h"

namespace tirtune {

bool KernelFitsInt32(const GpuKernel& kernel);

}  // namespace tirtune
