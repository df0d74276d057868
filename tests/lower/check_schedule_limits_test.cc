// CheckScheduleLimits: schedules that ask for absurd amounts of work, unrolled code, vector lanes
// or memory are refused before lowering, naming the limit; ordinary ones pass.
#include "../common/expect_contains.h"
#include "lower_check.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

std::string LimitErrorOf(const std::string& text) {
  try {
    Lower(ParseFunc(text));
  } catch (const ScheduleLimitError& e) {
    return e.what();
  }
  return "(lowered)";
}

TEST(CheckScheduleLimits, AbsurdSchedulesAreRefusedNamingTheLimit) {
  // 10^18 iterations (the issue's endless `time`).
  EXPECT_CONTAINS(LimitErrorOf(R"(@prim_func
def f(B: Buffer((1,), float32)):
    for i in range(1000000000):
        for j in range(1000000000):
            B[0] = B[0] + 1.0
)"),
                  "function 'f' exceeds a limit of what a schedule may ask for: it runs more "
                  "than 70368744177664 statement instances");
  // An extent that overflows 64 bits when multiplied.
  EXPECT_CONTAINS(LimitErrorOf(R"(@prim_func
def f(B: Buffer((1,), float32)):
    for i in range(4611686018427387904):
        for j in range(8):
            B[0] = B[0] + 1.0
)"),
                  "statement instances");
  // 2^20 vector lanes.
  EXPECT_CONTAINS(LimitErrorOf(R"(@prim_func
def f(B: Buffer((1048576,), float32)):
    for i in vectorized(1048576):
        B[i] = 1.0
)"),
                  "loop 'i' is vectorized over 1048576 lanes, more than 65536");
  // Unrolling: nested explicit unrolls, and an auto-unroll step count.
  EXPECT_CONTAINS(LimitErrorOf(R"(@prim_func
def f(B: Buffer((262144,), float32)):
    for i in unroll(64):
        for j in unroll(64):
            for k in unroll(64):
                B[i * 4096 + j * 64 + k] = 1.0
)"),
                  "unrolling loop 'k' makes more than 65536 copies of its body");
  EXPECT_CONTAINS(LimitErrorOf(R"(@prim_func
def f(B: Buffer((64,), float32)):
    for i in range(64, annotations={"pragma_auto_unroll_max_step": 1000000000}):
        B[i] = 1.0
)"),
                  "loop 'i' asks to unroll up to 1000000000 steps, more than 65536");
  EXPECT_CONTAINS(LimitErrorOf(R"(@prim_func
def f(B: Buffer((65536,), float32)):
    for i in unroll(64):
        for j in range(1024, annotations={"pragma_auto_unroll_max_step": 2048}):
            B[i * 1024 + j] = 1.0
)"),
                  "loop 'j' asks to unroll up to 2048 steps in each of 64 unrolled copies");
  // A buffer of 2^62 elements (its byte size would overflow into a small allocation).
  EXPECT_CONTAINS(LimitErrorOf(R"(@prim_func
def f(B: Buffer((1,), float32)):
    with block("root"):
        reads()
        writes()
        T = alloc_buffer((4611686018427387904,), float32)
        for i in range(1):
            with block("t"):
                vi = axis.spatial(1, i)
                reads()
                writes(T[vi])
                T[vi] = 1.0
)"),
                  "buffer 'T' would take more than 1099511627776 bytes");
}

TEST(CheckScheduleLimits, TheOperatorLibraryIsWithinTheLimits) {
  for (const char* spec : {"gemm:4096,4096,4096", "conv2d:1,224,224,3,64,7,2,3",
                           "softmax:4096,32000"}) {
    EXPECT_NO_THROW(CheckScheduleLimits(MakeWorkload(spec).func)) << spec;
  }
}

}  // namespace
}  // namespace tirtune
