// The shape checks operators run on their arguments before building a compute.
#include "shape_checks.h"

#include "tirtune/support/error.h"

namespace tirtune::te {

void CheckRank(const Tensor& t, int ndim, const char* op) {
  if (t.ndim() != ndim) {
    TT_USER_ERROR("{}: tensor {} has rank {}, expected {}", op, t.name(), t.ndim(), ndim);
  }
}

void CheckDimsMatch(const Tensor& a, int da, const Tensor& b, int db, const char* op) {
  if (a.dim(da) != b.dim(db)) {
    TT_USER_ERROR("{}: dimension {} of {} is {} but dimension {} of {} is {}", op, da, a.name(),
                  a.dim(da), db, b.name(), b.dim(db));
  }
}

}  // namespace tirtune::te
