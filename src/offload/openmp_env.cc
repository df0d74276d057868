// BoundOpenMpSpinning (library.h).
#include <unistd.h>

#include <cstdlib>

#include "tirtune/offload/library.h"

namespace tirtune::offload {

void BoundOpenMpSpinning(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr) {
    return;  // the user's choice, or this process is the re-executed one
  }
  setenv("GOMP_SPINCOUNT", "10000", 1);
  execv("/proc/self/exe", argv);  // returns only when it fails: go on with libgomp's default
}

}  // namespace tirtune::offload
