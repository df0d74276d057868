// Every expression kind compiled by the LLVM backend agrees with the interpreter on random
// inputs: arithmetic in every integer width and float type, division rounding, comparisons,
// logic, select, let, casts (saturating, wrapping, half precision) and the math intrinsics.
#include <fmt/core.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "differential.h"

namespace tirtune::test_codegen {
namespace {

struct Case {
  const char* in;    // element type of A and B
  const char* out;   // element type of C
  const char* expr;  // in terms of a = A[i] and b = B[i]
};

std::string Elementwise(const Case& c) {
  std::string expr = c.expr;
  for (auto [from, to] : {std::pair<std::string, std::string>{"$a", "A[i]"}, {"$b", "B[i]"}}) {
    for (size_t pos; (pos = expr.find(from)) != std::string::npos;) expr.replace(pos, 2, to);
  }
  return std::string("@prim_func\ndef f(A: Buffer((67,), ") + c.in + "), B: Buffer((67,), " + c.in +
         "), C: Buffer((67,), " + c.out + ")):\n    for i in range(67):\n        C[i] = " + expr +
         "\n";
}

void CheckCases(const std::vector<Case>& cases, double rtol = 2e-6, double atol = 1e-6,
                const Target& target = Target::Host()) {
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.in) + " -> " + c.out + ": " + c.expr);
    CheckText(Elementwise(c), rtol, atol, CodegenOptions(), target);
  }
}

TEST(CodegenExpr, HarnessDetectsAWrongKernel) {
  PrimFunc right = ParsePrimFunc(Elementwise({"float32", "float32", "$a + $b"}));
  PrimFunc wrong = ParsePrimFunc(Elementwise({"float32", "float32", "$a - $b"}));
  std::unique_ptr<Kernel> k = JitCompile(wrong, Target::Host());
  EXPECT_NONFATAL_FAILURE(ExpectMatchesInterpreter(right, *k, 1), "parameter 2 (C)");
}

TEST(CodegenExpr, BaselineCpuWithoutF16cOrSse41) {
  // x86-64 (SSE2) lowers half conversions and rounding to library calls the loader supplies.
  CheckCases(
      {
          {"float16", "float16", "$a * $b + $a"},
          {"float32", "float32", "floor($a * 10.0) + ceil($b * 10.0) + round($a * 7.0)"},
          {"float32", "float32", "trunc($a * 10.0) + fma($a, $b, $a) + exp($a) + tanh($b)"},
          {"float32", "float16", "float16(float32(bfloat16($a)) * 3.0)"},
      },
      1e-5, 1e-5, Target::Parse("llvm -mcpu=x86-64"));
}

TEST(CodegenExpr, Float32Arithmetic) {
  CheckCases({
      {"float32", "float32", "$a + $b"},
      {"float32", "float32", "$a - $b"},
      {"float32", "float32", "$a * $b"},
      {"float32", "float32", "$a / ($b + 2.0)"},
      {"float32", "float32", "($a * 8.0) // ($b + 2.0)"},
      {"float32", "float32", "($a * 8.0) % ($b + 2.0)"},
      {"float32", "float32", "($a * 8.0) % -1.5"},
      {"float32", "float32", "min($a, $b)"},
      {"float32", "float32", "max($a, $b)"},
      {"float32", "float32", "-$a"},
      {"float32", "float32", "select($a < $b, $a, $b * 2.0)"},
      {"float32", "float32", "let(x, $a * $b, x + x * $a)"},
  });
}

TEST(CodegenExpr, Float32ComparisonsAndLogic) {
  CheckCases({
      {"float32", "bool", "$a == $b"},
      {"float32", "bool", "$a != $b"},
      {"float32", "bool", "$a < $b"},
      {"float32", "bool", "$a <= $b"},
      {"float32", "bool", "$a > $b"},
      {"float32", "bool", "$a >= $b"},
      {"float32", "bool", "$a < $b and $b > 0.0"},
      {"float32", "bool", "$a < $b or not $b > 0.0"},
  });
}

TEST(CodegenExpr, MathIntrinsics) {
  CheckCases(
      {
          {"float32", "float32", "exp($a * 4.0)"},
          {"float32", "float32", "exp2($a * 4.0)"},
          {"float32", "float32", "log($a + 2.0)"},
          {"float32", "float32", "log2($a + 2.0)"},
          {"float32", "float32", "sqrt($a + 1.0)"},
          {"float32", "float32", "rsqrt($a + 1.5)"},
          {"float32", "float32", "tanh($a * 6.0)"},
          {"float32", "float32", "tanh($a * 0.001)"},
          {"float32", "float32", "sigmoid($a * 10.0)"},
          {"float32", "float32", "erf($a * 3.0)"},
          {"float32", "float32", "pow($a + 1.5, $b * 3.0)"},
          {"float32", "float32", "fabs($a)"},
          {"float32", "float32", "floor($a * 10.0)"},
          {"float32", "float32", "ceil($a * 10.0)"},
          {"float32", "float32", "round($a * 10.0)"},
          {"float32", "float32", "trunc($a * 10.0)"},
          {"float32", "float32", "sin($a * 3.0)"},
          {"float32", "float32", "cos($a * 3.0)"},
          {"float32", "float32", "fma($a, $b, $a)"},
          {"float64", "float64", "exp($a)"},
          {"float64", "float64", "tanh($a * 3.0)"},
          {"float64", "float64", "erf($a * 2.0)"},
          {"float64", "float64", "sigmoid($a)"},
      },
      /*rtol=*/1e-5, /*atol=*/2e-6);
}

// float32 exp is a polynomial, not a libm call per lane: over its whole range, vectorized and not,
// it stays within 2 ulp of expf, overflows to inf, goes subnormal and underflows to 0 where expf
// does, and keeps NaN.
TEST(CodegenExpr, Float32ExpIsWithinTwoUlpOfExpfOverItsWholeRange) {
  for (const char* loop : {"range", "vectorized"}) {
    SCOPED_TRACE(loop);
    constexpr int kN = 4096;
    PrimFunc func = ParsePrimFunc(
        fmt::format("@prim_func\ndef f(A: Buffer(({},), float32), C: Buffer(({},), float32)):\n"
                    "    for i in {}({}):\n        C[i] = exp(A[i])\n",
                    kN, kN, loop, kN));
    std::unique_ptr<Kernel> kernel = JitCompile(func, Target::Host());
    std::vector<NDArray> args = {NDArray::Empty({kN}, DataType::Float(32)),
                                 NDArray::Empty({kN}, DataType::Float(32))};
    float* a = args[0].data<float>();
    const float specials[] = {0.0f,    -0.0f,   1.0f,    -1.0f,  88.72f,   88.73f,    -87.33f,
                              -103.9f, -104.0f, -200.0f, 1e-30f, INFINITY, -INFINITY, NAN};
    constexpr int kSpecials = sizeof(specials) / sizeof(specials[0]);
    for (int i = 0; i < kN; ++i) {
      a[i] = i < kSpecials ? specials[i] : -106.0f + 196.0f * (i - kSpecials) / (kN - kSpecials);
    }
    ASSERT_EQ(kernel->Run(args), 0);
    const float* c = args[1].data<float>();
    for (int i = 0; i < kN; ++i) {
      float want = std::exp(a[i]);
      if (std::isnan(want) || std::isinf(want) || want == 0.0f) {
        EXPECT_TRUE(std::isnan(want) ? std::isnan(c[i]) : c[i] == want)
            << "exp(" << a[i] << "): expected " << want << ", got " << c[i];
      } else if (want < FLT_MIN) {  // subnormal: 2^n is applied after rounding the polynomial
        EXPECT_LE(std::fabs(c[i] - want), 2 * std::numeric_limits<float>::denorm_min())
            << "exp(" << a[i] << ")";
      } else {
        EXPECT_LE(std::fabs(c[i] - want), 2 * (std::nextafter(want, INFINITY) - want))
            << "exp(" << a[i] << "): expected " << want << ", got " << c[i];
      }
    }
  }
}

TEST(CodegenExpr, RoundHalfwayCasesGoToEven) {
  // a * 4 hits exact halves (0.5, 1.5, ...) often: round must give 0, 2, ...
  CheckCases({{"float32", "float32", "round(floor($a * 8.0) * 0.5)"}});
}

TEST(CodegenExpr, Float64Arithmetic) {
  CheckCases({
      {"float64", "float64", "$a * $b + $a"},
      {"float64", "float64", "($a * 8.0) // ($b + 2.0)"},
      {"float64", "float32", "float32($a * $b)"},
      {"float32", "float64", "float64($a) * float64($b)"},
  });
}

TEST(CodegenExpr, SignedIntegerArithmetic) {
  CheckCases({
      {"int32", "int32", "$a + $b"},
      {"int32", "int32", "$a - $b"},
      {"int32", "int32", "$a * $b"},
      {"int32", "int32", "min($a, $b)"},
      {"int32", "int32", "max($a, $b)"},
      {"int32", "int32", "select($a < $b, $a - $b, $a * $b)"},
      {"int64", "int64", "$a * $b - $a"},
      {"int8", "int8", "$a * $b * 12 + 100"},  // wraps
      {"int16", "int16", "$a * 9000"},         // wraps
  });
}

TEST(CodegenExpr, IntegerDivisionRounding) {
  // Divisors are kept away from zero; constant divisors take the unguarded path.
  CheckCases({
      {"int32", "int32", "$a / select($b == 0, 3, $b)"},
      {"int32", "int32", "$a // select($b == 0, 3, $b)"},
      {"int32", "int32", "$a % select($b == 0, 3, $b)"},
      {"int32", "int32", "($a * 7) // 3"},
      {"int32", "int32", "($a * 7) % 3"},
      {"int32", "int32", "($a * 7) // -3"},
      {"int32", "int32", "($a * 7) % -3"},
      {"int32", "int32", "($a * 7) / 3"},
      {"int32", "int32", "($a * 7) / -1"},
      {"int32", "int32", "($a * 7) // -1"},
      {"int32", "int32", "($a * 7) % -1"},
      {"int64", "int64", "($a * 13) // 4 + ($a * 13) % 4"},
      {"int8", "int8", "$a // select($b == 0, 2, $b)"},
      {"uint8", "uint8", "$a // select($b == 0, 3, $b) + $a % 3"},
      {"uint32", "uint32", "$a / 3"},
  });
}

TEST(CodegenExpr, UnsignedAndBoolean) {
  CheckCases({
      {"uint8", "uint8", "$a - $b"},  // wraps
      {"uint8", "bool", "$a < $b"},
      {"uint16", "uint16", "max($a, $b) * 9000"},
      {"bool", "bool", "$a and $b"},
      {"bool", "bool", "$a or $b"},
      {"bool", "bool", "not $a"},
      {"bool", "bool", "$a == $b"},
      {"bool", "bool", "select($a, $b, not $b)"},
  });
}

TEST(CodegenExpr, Comparisons) {
  CheckCases({
      {"int32", "bool", "$a == $b"},
      {"int32", "bool", "$a != $b"},
      {"int32", "bool", "$a < $b"},
      {"int32", "bool", "$a <= $b"},
      {"int32", "bool", "$a > $b"},
      {"int32", "bool", "$a >= $b"},
      {"uint32", "bool", "$a - $b > $b"},  // unsigned compare after wrap-around
  });
}

TEST(CodegenExpr, Casts) {
  CheckCases({
      {"float32", "int32", "int32($a * 100.0)"},
      {"float32", "uint8", "uint8($a * 300.0)"},  // saturates at 0 and 255
      {"float32", "int8", "int8($a * 1000.0)"},   // saturates at -128 and 127
      {"float32", "int64", "int64($a * 1e12)"},
      {"float32", "bool", "bool(floor($a * 2.0))"},
      {"int32", "float32", "float32($a) * 0.5"},
      {"uint8", "float32", "float32($a) - 3.0"},
      {"int32", "int8", "int8($a * 40)"},  // wraps
      {"int32", "int64", "int64($a) * 3000000000"},
      {"int8", "uint32", "uint32($a)"},  // sign-extends, then reinterprets
      {"uint8", "int32", "int32($a)"},
      {"int32", "bool", "bool($a)"},
      {"bool", "int32", "int32($a) + int32($b)"},
      {"bool", "float32", "float32($a)"},
      {"float32", "float16", "float16($a * 3.0)"},
      {"float32", "float32", "float32(float16($a * 3.0))"},  // rounds to half precision
      {"float32", "float32", "float32(bfloat16($a * 3.0))"},
      {"float64", "float16", "float16($a)"},
  });
}

TEST(CodegenExpr, HalfPrecisionStorageComputesInFloat32) {
  CheckCases({
      {"float16", "float16", "$a * $b + $a"},
      {"float16", "float16", "exp($a) * 100.0"},
      {"float16", "float32", "float32($a) + float32($b)"},
      {"float16", "bool", "$a < $b"},
      {"bfloat16", "bfloat16", "$a * $b + $a"},
      {"bfloat16", "float32", "float32($a) * 3.0"},
      {"float32", "bfloat16", "bfloat16($a * 1000.0)"},
  });
}

}  // namespace
}  // namespace tirtune::test_codegen
