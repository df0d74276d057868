// The shape checks operators run on their arguments before building a compute (private to te).
#pragma once

#include "tirtune/te/tensor.h"

namespace tirtune::te {

/// Throws UserError unless `t` has rank `ndim`; `op` names the operator in the message.
void CheckRank(const Tensor& t, int ndim, const char* op);
/// Throws UserError unless dimension `da` of `a` equals dimension `db` of `b`.
void CheckDimsMatch(const Tensor& a, int da, const Tensor& b, int db, const char* op);

}  // namespace tirtune::te
