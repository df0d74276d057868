// The LLVM side of compilation: target machines for a Target, the O3 pipeline, object and
// assembly emission, and the process-wide ORC LLJIT that links objects into this process (one
// JITDylib and ResourceTracker per kernel, released with the kernel).
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>

#include "llvm_codegen.h"
#include "llvm_target_info.h"
#include "tirtune/runtime/thread_pool.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace codegen {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// O3 fully unrolls any loop whose unrolled body stays under its size threshold, however many
// iterations it has. A loop the schedule left rolled with a tiny body (the copy out of a cache
// write: one load, one store) then becomes thousands of scalar copies once its outer loops are
// unrolled as well, and the SLP vectorizer spends minutes putting them back together (a grouped
// conv2d candidate: 168 s in opt, 131 s of it SLP, against 1 s with the cap). Such loops are
// left to the loop vectorizer instead; loops the schedule unrolls (llvm.loop.unroll.full)
// are not affected by the cap.
constexpr const char* kFullUnrollMaxCount = "-unroll-full-max-count=32";

void LimitFullUnrolling() {
  const char* argv[] = {"tirtune", kFullUnrollMaxCount};
  TT_ICHECK(llvm::cl::ParseCommandLineOptions(2, argv, "", &llvm::errs()),
            "LLVM rejected the option {}", kFullUnrollMaxCount);
}

void InitializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    LimitFullUnrolling();
  });
}

std::string ErrorText(llvm::Error error) { return llvm::toString(std::move(error)); }

const llvm::Target& NativeTarget() {
  InitializeLLVM();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(llvm::sys::getProcessTriple(), error);
  TT_ICHECK(t != nullptr, "LLVM has no backend for the host: {}", error);
  return *t;
}

// CPU and feature queries go through one subtarget description of the host architecture.
const llvm::MCSubtargetInfo& HostArchInfo() {
  static const llvm::MCSubtargetInfo* info =
      NativeTarget().createMCSubtargetInfo(llvm::sys::getProcessTriple(), "", "");
  return *info;
}

std::string HostFeatures() {
  static const std::string features = [] {
    llvm::SubtargetFeatures f;
    for (const auto& kv : llvm::sys::getHostCPUFeatures()) f.AddFeature(kv.getKey(), kv.getValue());
    return f.getString();
  }();
  return features;
}

// The triple, CPU and features a Target compiles for.
struct MachineDesc {
  std::string triple;
  std::string cpu;
  std::string features;
};

MachineDesc Describe(const Target& target) {
  RequireCpuTarget(target, "the LLVM CPU backend");
  MachineDesc d;
  d.triple = llvm::sys::getProcessTriple();
  d.cpu = target.mcpu.empty() ? HostCpuName() : target.mcpu;
  // The host CPU without explicit features gets the detected ones (a virtual machine may hide
  // some the CPU model implies).
  d.features = target.mattr.empty() && d.cpu == HostCpuName() ? HostFeatures() : target.mattr;
  return d;
}

// A TargetMachine is not thread-safe, so every compilation makes its own.
std::unique_ptr<llvm::TargetMachine> MakeTargetMachine(const MachineDesc& d) {
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;  // a*b+c may become an FMA
  return std::unique_ptr<llvm::TargetMachine>(
      NativeTarget().createTargetMachine(d.triple, d.cpu, d.features, options, llvm::Reloc::PIC_,
                                         std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

void OptimizeO3(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;  // off by default
  pto.LoopUnrolling = true;
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
}

std::string EmitFile(llvm::Module& module, llvm::TargetMachine& tm, llvm::CodeGenFileType kind) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  TT_ICHECK(!tm.addPassesToEmitFile(pm, os, nullptr, kind), "LLVM cannot emit files for {}",
            tm.getTargetCPU().str());
  pm.run(module);
  return std::string(buffer.data(), buffer.size());
}

// LLVM's diagnostics during a compilation: errors go to stderr as LLVM would print them;
// warnings and remarks are dropped. A loop annotated "pragma_vectorize" that LLVM cannot
// vectorize (the partial tile of a guarded split) is a warning, and printing one per candidate
// would bury the tuner's output.
void PrintLlvmErrors(const llvm::DiagnosticInfo* info, void*) {
  if (info->getSeverity() != llvm::DS_Error) return;
  llvm::DiagnosticPrinterRawOStream printer(llvm::errs());
  llvm::errs() << "LLVM error: ";
  info->print(printer);
  llvm::errs() << "\n";
}

std::unique_ptr<llvm::LLVMContext> MakeContext() {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  ctx->setDiagnosticHandlerCallBack(PrintLlvmErrors);
  return ctx;
}

// One compilation: a fresh context, target machine and module.
struct Compilation {
  std::unique_ptr<llvm::LLVMContext> ctx = MakeContext();
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::Module> module;
};

Compilation Compile(const PrimFunc& func, const Target& target, const CodegenOptions& options,
                    bool optimize, CompileStats* stats) {
  InitializeLLVM();
  Compilation c;
  MachineDesc desc = Describe(target);
  c.tm = MakeTargetMachine(desc);
  ModuleConfig config;
  config.triple = desc.triple;
  config.cpu = desc.cpu;
  config.features = desc.features;
  config.data_layout = c.tm->createDataLayout();
  config.num_cores = target.num_cores;
  config.options = options;
  Clock::time_point start = Clock::now();
  c.module = BuildModule(func, config, c.ctx.get());
  if (stats != nullptr) stats->codegen_ms = MsSince(start);
  start = Clock::now();
  if (optimize) OptimizeO3(*c.module, *c.tm);
  if (stats != nullptr) stats->optimize_ms = MsSince(start);
  return c;
}

// Math library functions the generated code (or LLVM lowering its intrinsics) may call. They
// are defined explicitly so that loading does not depend on what the executable exports.
template <typename F>
void* Fn(F* f) {
  return reinterpret_cast<void*>(f);
}

std::vector<runtime::RuntimeSymbol> LinkedSymbols() {
  using F1 = float(float);
  using D1 = double(double);
  using F2 = float(float, float);
  using D2 = double(double, double);
  using F3 = float(float, float, float);
  using D3 = double(double, double, double);
  std::vector<runtime::RuntimeSymbol> s = runtime::RuntimeSymbols();
  auto add = [&](const char* name, void* address) { s.push_back({name, address}); };
  add("expf", Fn<F1>(::expf));
  add("exp", Fn<D1>(::exp));
  add("exp2f", Fn<F1>(::exp2f));
  add("exp2", Fn<D1>(::exp2));
  add("exp10f", Fn<F1>(::exp10f));
  add("exp10", Fn<D1>(::exp10));
  add("logf", Fn<F1>(::logf));
  add("log", Fn<D1>(::log));
  add("log2f", Fn<F1>(::log2f));
  add("log2", Fn<D1>(::log2));
  add("log10f", Fn<F1>(::log10f));
  add("log10", Fn<D1>(::log10));
  add("sqrtf", Fn<F1>(::sqrtf));
  add("sqrt", Fn<D1>(::sqrt));
  add("tanhf", Fn<F1>(::tanhf));
  add("tanh", Fn<D1>(::tanh));
  add("erff", Fn<F1>(::erff));
  add("erf", Fn<D1>(::erf));
  add("powf", Fn<F2>(::powf));
  add("pow", Fn<D2>(::pow));
  add("fmodf", Fn<F2>(::fmodf));
  add("fmod", Fn<D2>(::fmod));
  add("fabsf", Fn<F1>(::fabsf));
  add("fabs", Fn<D1>(::fabs));
  add("floorf", Fn<F1>(::floorf));
  add("floor", Fn<D1>(::floor));
  add("ceilf", Fn<F1>(::ceilf));
  add("ceil", Fn<D1>(::ceil));
  add("truncf", Fn<F1>(::truncf));
  add("trunc", Fn<D1>(::trunc));
  add("roundevenf", Fn<F1>(::roundevenf));
  add("roundeven", Fn<D1>(::roundeven));
  add("nearbyintf", Fn<F1>(::nearbyintf));
  add("nearbyint", Fn<D1>(::nearbyint));
  add("rintf", Fn<F1>(::rintf));
  add("rint", Fn<D1>(::rint));
  add("sinf", Fn<F1>(::sinf));
  add("sin", Fn<D1>(::sin));
  add("cosf", Fn<F1>(::cosf));
  add("cos", Fn<D1>(::cos));
  add("sincosf", Fn<void(float, float*, float*)>(::sincosf));
  add("sincos", Fn<void(double, double*, double*)>(::sincos));
  add("fmaf", Fn<F3>(::fmaf));
  add("fma", Fn<D3>(::fma));
  add("memset", Fn<void*(void*, int, size_t)>(::memset));
  add("memcpy", Fn<void*(void*, const void*, size_t)>(::memcpy));
  add("memmove", Fn<void*(void*, const void*, size_t)>(::memmove));
  return s;
}

// The process-wide JIT. Kernels live in JITDylibs of their own (so candidates of one workload
// may share a name); those link against a JITDylib of runtime and math symbols, then the
// process's own symbols. Never destroyed: kernels may outlive static destructors.
class ProcessJit {
 public:
  static ProcessJit& Get() {
    static ProcessJit* jit = new ProcessJit();
    return *jit;
  }

  llvm::orc::LLJIT& jit() { return *jit_; }

  // Links `object` into a new JITDylib; the returned owner removes it again.
  std::shared_ptr<void> Link(const std::string& object, const std::string& func_name,
                             TirtuneKernelFunc* entry, std::string* signature) {
    std::string jd_name = "tirtune_kernel_" + std::to_string(next_id_.fetch_add(1));
    llvm::Expected<llvm::orc::JITDylib&> jd = jit_->createJITDylib(jd_name);
    TT_ICHECK(static_cast<bool>(jd), "cannot create a JITDylib: {}", ErrorText(jd.takeError()));
    llvm::orc::JITDylibSearchOrder order = {
        {runtime_jd_, llvm::orc::JITDylibLookupFlags::MatchExportedSymbolsOnly}};
    for (auto& link : jit_->defaultLinkOrder()) order.push_back(link);
    jd->setLinkOrder(order);
    llvm::orc::ResourceTrackerSP tracker = jd->createResourceTracker();
    auto owner = std::shared_ptr<void>(nullptr, [this, jdp = &*jd, tracker](void*) {
      llvm::orc::ExecutionSession& es = jit_->getExecutionSession();
      if (llvm::Error e = tracker->remove()) llvm::consumeError(std::move(e));
      if (llvm::Error e = es.removeJITDylib(*jdp)) llvm::consumeError(std::move(e));
    });
    llvm::Error added = jit_->addObjectFile(
        tracker, llvm::MemoryBuffer::getMemBufferCopy(object, func_name + ".o"));
    if (added)
      TT_USER_ERROR("cannot load the object of {}: {}", func_name, ErrorText(std::move(added)));
    auto address = jit_->lookup(*jd, func_name);
    if (!address) {
      TT_USER_ERROR("cannot link kernel {}: {}", func_name, ErrorText(address.takeError()));
    }
    *entry = address->toPtr<TirtuneKernelFunc>();
    auto sig = jit_->lookup(*jd, SignatureSymbol(func_name));
    if (!sig) {
      TT_USER_ERROR("the object of {} has no tirtune signature: {}", func_name,
                    ErrorText(sig.takeError()));
    }
    *signature = sig->toPtr<const char*>();
    return owner;
  }

 private:
  ProcessJit() {
    InitializeLLVM();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    TT_ICHECK(static_cast<bool>(jtmb), "cannot describe the host: {}", ErrorText(jtmb.takeError()));
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
    TT_ICHECK(static_cast<bool>(jit), "cannot create the JIT: {}", ErrorText(jit.takeError()));
    jit_ = std::move(*jit);
    auto jd = jit_->createJITDylib("tirtune_runtime");
    TT_ICHECK(static_cast<bool>(jd), "cannot create a JITDylib: {}", ErrorText(jd.takeError()));
    runtime_jd_ = &*jd;
    llvm::orc::SymbolMap symbols;
    for (const runtime::RuntimeSymbol& s : LinkedSymbols()) {
      symbols[jit_->mangleAndIntern(s.name)] = {
          llvm::orc::ExecutorAddr::fromPtr(s.address),
          llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    }
    llvm::Error defined = runtime_jd_->define(llvm::orc::absoluteSymbols(std::move(symbols)));
    TT_ICHECK(!defined, "cannot define the runtime symbols: {}", ErrorText(std::move(defined)));
  }

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  llvm::orc::JITDylib* runtime_jd_ = nullptr;
  std::atomic<uint64_t> next_id_{0};
};

std::unique_ptr<Kernel> LinkKernel(const std::string& object, const std::string& func_name,
                                   const Target& target, CompileStats stats) {
  runtime::ConfigureGlobalThreadPool(runtime::ThreadPoolOptions{.num_threads = target.num_cores});
  Clock::time_point start = Clock::now();
  TirtuneKernelFunc entry = nullptr;
  std::string signature;
  std::shared_ptr<void> owner = ProcessJit::Get().Link(object, func_name, &entry, &signature);
  stats.link_ms = MsSince(start);
  return std::make_unique<Kernel>(func_name, entry, ParseSignature(signature), std::move(owner),
                                  stats);
}

}  // namespace

bool IsKnownCpu(const std::string& cpu) { return HostArchInfo().isCPUStringValid(cpu); }

bool IsKnownFeature(const std::string& name) {
  for (const llvm::SubtargetFeatureKV& kv : HostArchInfo().getAllProcessorFeatures()) {
    if (name == kv.Key) return true;
  }
  return false;
}

}  // namespace codegen

std::string HostCpuName() {
  codegen::InitializeLLVM();
  return llvm::sys::getHostCPUName().str();
}

std::vector<std::string> TargetFeaturesMissingOnHost(const Target& target) {
  codegen::MachineDesc d = codegen::Describe(target.HostTarget());
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      codegen::NativeTarget().createMCSubtargetInfo(d.triple, d.cpu, d.features));
  TT_ICHECK(info != nullptr, "LLVM has no subtarget for {}", target.str());
  // The host's detection names every instruction-set feature it knows, present or not; tuning
  // flags (which differ between CPU models that run the same code) are not among them.
  // (checkFeatures aborts on a name the target does not know, so only known ones are asked.)
  std::vector<std::string> missing;
  for (const auto& [name, present] : llvm::sys::getHostCPUFeatures()) {
    if (!present && codegen::IsKnownFeature(name.str()) && info->checkFeatures("+" + name.str())) {
      missing.push_back(name.str());
    }
  }
  std::sort(missing.begin(), missing.end());
  return missing;
}

std::string EmitObject(const PrimFunc& lowered, const Target& target, const CodegenOptions& options,
                       CompileStats* stats) {
  CompileStats local;
  codegen::Compilation c = codegen::Compile(lowered, target, options, options.optimize, &local);
  codegen::Clock::time_point start = codegen::Clock::now();
  std::string object = codegen::EmitFile(*c.module, *c.tm, llvm::CodeGenFileType::ObjectFile);
  local.emit_ms = codegen::MsSince(start);
  if (stats != nullptr) *stats = local;
  return object;
}

std::unique_ptr<Kernel> JitCompile(const PrimFunc& lowered, const Target& target,
                                   const CodegenOptions& options) {
  CompileStats stats;
  std::string object = EmitObject(lowered, target, options, &stats);
  return codegen::LinkKernel(object, lowered->name, target, stats);
}

std::unique_ptr<Kernel> LoadObject(const std::string& object_bytes, const std::string& func_name,
                                   const Target& target) {
  return codegen::LinkKernel(object_bytes, func_name, target, CompileStats{});
}

std::string EmitLLVMIR(const PrimFunc& lowered, const Target& target, bool optimized,
                       const CodegenOptions& options) {
  codegen::Compilation c = codegen::Compile(lowered, target, options, optimized, nullptr);
  std::string text;
  llvm::raw_string_ostream os(text);
  c.module->print(os, nullptr);
  return os.str();
}

std::string EmitAssembly(const PrimFunc& lowered, const Target& target,
                         const CodegenOptions& options) {
  codegen::Compilation c = codegen::Compile(lowered, target, options, options.optimize, nullptr);
  return codegen::EmitFile(*c.module, *c.tm, llvm::CodeGenFileType::AssemblyFile);
}

}  // namespace tirtune
