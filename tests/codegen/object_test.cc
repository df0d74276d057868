// Objects emitted to memory and loaded again: in this process through LoadObject (a separate
// JITDylib, runtime symbols supplied explicitly), and in a child process spawned from this test
// binary, which must compute the same bytes. Also concurrent compilation from several threads,
// kernel lifetime, loader errors and compile-time reporting.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "differential.h"
#include "tirtune/support/error.h"

extern char** environ;

namespace tirtune::test_codegen {
namespace {

const char* kKernelText = R"(
@prim_func
def fused(A: Buffer((1000,), float32), B: Buffer((1000,), float16), C: Buffer((1000,), float32)):
    for i in parallel(10):
        with allocate(T, (100,), float32, scope="local"):
            for j in range(100):
                T[j] = tanh(A[i * 100 + j]) + exp(float32(B[i * 100 + j]))
            for j in range(100):
                C[i * 100 + j] = erf(T[99 - j]) * sigmoid(T[j])
)";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Arguments for a kernel from its signature alone (what a runner process knows).
std::vector<NDArray> ArgsFromSignature(const Kernel& k, uint64_t seed) {
  std::vector<NDArray> args;
  for (size_t i = 0; i < k.params().size(); ++i) {
    NDArray a = NDArray::Empty({k.params()[i].num_elements}, k.params()[i].dtype);
    a.FillRandom(seed + i);
    args.push_back(a);
  }
  return args;
}

std::string Bytes(const std::vector<NDArray>& arrays) {
  std::string out;
  for (const NDArray& a : arrays) {
    out.append(static_cast<const char*>(a.raw()), static_cast<size_t>(a.nbytes()));
  }
  return out;
}

// Child mode: `TEST_BINARY --codegen-child OBJECT FUNC SEED OUT` loads OBJECT, runs FUNC on
// arguments drawn from SEED and writes every argument's bytes to OUT. Detected before main()
// from /proc/self/cmdline, since gtest_main owns main().
int RunChildIfRequested() {
  std::string cmdline = ReadFile("/proc/self/cmdline");
  std::vector<std::string> argv;
  std::stringstream ss(cmdline);
  for (std::string arg; std::getline(ss, arg, '\0');) argv.push_back(arg);
  if (argv.size() != 6 || argv[1] != "--codegen-child") return 0;
  try {
    std::unique_ptr<Kernel> k = LoadObject(ReadFile(argv[2]), argv[3], Target::Host());
    std::vector<NDArray> args = ArgsFromSignature(*k, std::stoull(argv[4]));
    if (k->Run(args) != 0) std::_Exit(3);
    WriteFile(argv[5], Bytes(args));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child failed: %s\n", e.what());
    std::_Exit(2);
  }
  std::fflush(nullptr);
  std::_Exit(0);
}
[[maybe_unused]] const int kChildMode = RunChildIfRequested();

std::string TempPath(const std::string& name) {
  return testing::TempDir() + "/tirtune_codegen_" + std::to_string(getpid()) + "_" + name;
}

TEST(CodegenObject, LoadedObjectMatchesTheJitAndTheInterpreter) {
  PrimFunc f = ParsePrimFunc(kKernelText);
  std::string object = EmitObject(f, Target::Host());
  ASSERT_GT(object.size(), 64u);
  EXPECT_EQ(object.substr(1, 3), "ELF");
  std::unique_ptr<Kernel> loaded = LoadObject(object, "fused", Target::Host());
  std::unique_ptr<Kernel> jitted = JitCompile(f, Target::Host());
  ExpectMatchesInterpreter(f, *loaded, 11, 1e-5, 1e-5);
  std::vector<NDArray> a = ArgsFromSignature(*loaded, 3), b = ArgsFromSignature(*jitted, 3);
  ASSERT_EQ(loaded->Run(a), 0);
  ASSERT_EQ(jitted->Run(b), 0);
  EXPECT_EQ(Bytes(a), Bytes(b));
}

TEST(CodegenObject, ACudaTargetIsRefusedWithAClearMessage) {
  PrimFunc f = ParsePrimFunc(kKernelText);
  Target cuda = Target::Parse("cuda -arch=sm_90");
  for (auto compile : {+[](const PrimFunc&g, const Target&t) { JitCompile(g, t); },
                       +[](const PrimFunc&g, const Target&t) { EmitObject(g, t); }}) {
    try {
      compile(f, cuda);
      ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("the LLVM CPU backend needs a CPU target"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(CodegenObject, SameNameLoadedTwiceCoexists) {
  PrimFunc plus_one = ParsePrimFunc(R"(
@prim_func
def k(A: Buffer((4,), float32)):
    for i in range(4):
        A[i] = A[i] + 1.0
)");
  PrimFunc times_two = ParsePrimFunc(R"(
@prim_func
def k(A: Buffer((4,), float32)):
    for i in range(4):
        A[i] = A[i] * 2.0
)");
  std::unique_ptr<Kernel> first = JitCompile(plus_one, Target::Host());
  std::unique_ptr<Kernel> second = JitCompile(times_two, Target::Host());
  NDArray x = NDArray::Empty({4}, DataType::Float(32));
  x.Fill(3.0);
  first->Run({x});
  second->Run({x});
  EXPECT_EQ(x.GetDouble(0), 8.0);
}

TEST(CodegenObject, ChildProcessComputesTheSameBytes) {
  PrimFunc f = ParsePrimFunc(kKernelText);
  std::string object = EmitObject(f, Target::Host());
  std::string object_path = TempPath("fused.o"), out_path = TempPath("fused.out");
  WriteFile(object_path, object);

  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0);
  exe[n] = '\0';
  std::vector<std::string> args = {exe, "--codegen-child", object_path, "fused", "42", out_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, exe, nullptr, nullptr, argv.data(), environ), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child crashed";
  ASSERT_EQ(WEXITSTATUS(status), 0);

  std::unique_ptr<Kernel> here = LoadObject(object, "fused", Target::Host());
  std::vector<NDArray> expected = ArgsFromSignature(*here, 42);
  ASSERT_EQ(here->Run(expected), 0);
  EXPECT_EQ(ReadFile(out_path), Bytes(expected));
  std::remove(object_path.c_str());
  std::remove(out_path.c_str());
}

TEST(CodegenObject, LoaderErrorsAreUserErrors) {
  EXPECT_THROW(LoadObject("not an object", "f", Target::Host()), UserError);
  PrimFunc f = ParsePrimFunc(kKernelText);
  std::string object = EmitObject(f, Target::Host());
  EXPECT_THROW(LoadObject(object, "no_such_function", Target::Host()), UserError);
}

TEST(CodegenObject, ConcurrentCompilationFromSeveralThreads) {
  std::vector<PrimFunc> funcs;
  for (int k = 0; k < 8; ++k) {
    funcs.push_back(ParsePrimFunc("@prim_func\ndef k" + std::to_string(k) +
                                  "(A: Buffer((512,), float32), B: Buffer((512,), float32)):\n"
                                  "    for i in parallel(8):\n        for j in range(64):\n"
                                  "            B[i * 64 + j] = A[i * 64 + j] * " +
                                  std::to_string(k) + ".5 + exp(A[j])\n"));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 4; ++rep) {
        const PrimFunc& f = funcs[(t * 4 + rep) % funcs.size()];
        std::unique_ptr<Kernel> k = JitCompile(f, Target::Host());
        std::vector<NDArray> expected = RandomArgs(f, rep);
        std::vector<NDArray> actual = CopyAll(expected);
        Interpret(f, expected);
        if (k->Run(actual) != 0 || !AllClose(expected[1], actual[1], 1e-5, 1e-5)) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(CodegenObject, ManyCompileAndReleaseCycles) {
  PrimFunc f = ParsePrimFunc(R"(
@prim_func
def tiny(A: Buffer((16,), float32)):
    for i in range(16):
        A[i] = A[i] + 1.0
)");
  NDArray x = NDArray::Empty({16}, DataType::Float(32));
  for (int rep = 0; rep < 100; ++rep) {
    std::unique_ptr<Kernel> k = JitCompile(f, Target::Host());
    ASSERT_EQ(k->Run({x}), 0);
  }
  EXPECT_EQ(x.GetDouble(15), 100.0);
}

TEST(CodegenObject, CompileTimeIsReported) {
  PrimFunc gemm = ParsePrimFunc(R"(
@prim_func
def gemm(A: Buffer((65536,), float32), B: Buffer((65536,), float32), C: Buffer((65536,), float32)):
    for i in parallel(256):
        for j in range(256):
            C[i * 256 + j] = 0.0
        for k in range(256):
            for j in range(256, annotations={"pragma_vectorize": 1}):
                C[i * 256 + j] = C[i * 256 + j] + A[i * 256 + k] * B[k * 256 + j]
)");
  for (const PrimFunc& f : {ParsePrimFunc(kKernelText), gemm}) {
    JitCompile(f, Target::Host());  // warm-up
    std::unique_ptr<Kernel> k = JitCompile(f, Target::Host());
    const CompileStats& s = k->stats();
    EXPECT_GT(s.total_ms(), 0);
    std::printf("[compile] %s: codegen %.2f ms, O3 %.2f ms, emit %.2f ms, link %.2f ms\n",
                f->name.c_str(), s.codegen_ms, s.optimize_ms, s.emit_ms, s.link_ms);
  }
}

TEST(CodegenObject, SmallParallelKernelCallOverhead) {
  PrimFunc f = ParsePrimFunc(R"(
@prim_func
def small(A: Buffer((64,), float32)):
    for i in parallel(64):
        A[i] = A[i] + 1.0
)");
  std::unique_ptr<Kernel> k = JitCompile(f, Target::Parse("llvm -num-cores=2"));
  NDArray a = NDArray::Empty({64}, DataType::Float(32));
  void* args[] = {a.raw()};
  constexpr int kCalls = 20000;
  auto start = std::chrono::steady_clock::now();
  for (int rep = 0; rep < kCalls; ++rep) ASSERT_EQ(k->RunRaw(args), 0);
  double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      kCalls;
  EXPECT_EQ(a.GetDouble(63), kCalls);
  std::printf("[call] 64-element parallel kernel on 2 threads: %.2f us per call\n", us);
}

}  // namespace
}  // namespace tirtune::test_codegen
