// Writing GPU bundles and running them in tirtune-gpu-runner (see measure/gpu_bundle.h).
#include "tirtune/measure/gpu_bundle.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sibling_program.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/ir/gpu_module.h"
#include "tirtune/measure/verify.h"
#include "tirtune/support/error.h"
#include "tirtune/support/ndarray.h"

extern char** environ;

namespace tirtune::gpu_bundle {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

json WriteCase(const std::string& dir, const CaseSpec& spec, const GpuModule& module,
               const CudaBinary& binary, const std::vector<bool>& written,
               const std::vector<Input>& inputs) {
  std::string cubin = spec.name + ".cubin";
  {
    std::ofstream out(fs::path(dir) / cubin, std::ios::binary);
    out << binary.cubin;
    if (!out) TT_USER_ERROR("cannot write {}", (fs::path(dir) / cubin).string());
  }
  json c = {{"name", spec.name}, {"workload", spec.workload}, {"schedule", spec.schedule},
            {"cubin", cubin},    {"flops", spec.flops},       {"time", spec.time},
            {"expect", spec.expect}, {"rtol", spec.rtol},     {"atol", spec.atol}};
  if (!spec.same_as.empty()) c["same_as"] = spec.same_as;
  json buffers = json::array();
  std::vector<std::string> names;
  for (size_t p = 0; p < module.params.size(); ++p) {
    const Buffer& b = module.params[p];
    if (b->dtype != DataType::Float(32)) {
      TT_USER_ERROR("parameter {} is {}: GPU bundles carry float32 buffers only", b->name,
                    b->dtype.str());
    }
    bool output = p < written.size() && written[p];
    json j = {{"name", b->name},
              {"dtype", "float32"},
              {"elements", b.ConstNumElements()},
              {"kind", output ? "output" : "input"}};
    if (!output) {
      TT_ICHECK(p < inputs.size(), "no input given for parameter {}", b->name);
      if (inputs[p].file.empty()) {
        j["seed"] = inputs[p].seed;
        j["low"] = inputs[p].low;
      } else {
        j["file"] = inputs[p].file;
      }
    }
    buffers.push_back(j);
    names.push_back(b->name);
  }
  for (const Buffer& b : module.global_allocs) {
    if (b->dtype != DataType::Float(32)) {
      TT_USER_ERROR("intermediate {} is {}: GPU bundles carry float32 buffers only", b->name,
                    b->dtype.str());
    }
    buffers.push_back({{"name", b->name},
                       {"dtype", "float32"},
                       {"elements", b.ConstNumElements()},
                       {"kind", "intermediate"}});
    names.push_back(b->name);
  }
  c["buffers"] = buffers;
  json kernels = json::array();
  for (const GpuKernel& k : module.kernels) {
    json args = json::array();
    for (const Buffer& b : k.params) {
      auto at = std::find(names.begin(), names.end(), b->name);
      TT_ICHECK(at != names.end(), "kernel {} uses a buffer {} the module does not have", k.name,
                b->name);
      args.push_back(at - names.begin());
    }
    kernels.push_back({{"name", k.name},
                       {"grid", k.grid},
                       {"block", k.block},
                       {"args", args},
                       {"dynamic_shared", k.DynamicSharedBytes()}});
  }
  c["kernels"] = kernels;
  return c;
}

json CheckOf(const NDArray& expected, double reduction_length, int64_t limit) {
  json indices = json::array(), values = json::array();
  for (int64_t at : SpreadIndices(expected.size(), limit)) {
    indices.push_back(at);
    values.push_back(EncodeValue(expected.GetDouble(at)));
  }
  Tolerance tolerance = Tolerance::ForSum(expected.dtype(), reduction_length);
  return {{"indices", indices},
          {"values", values},
          {"rtol", tolerance.rtol},
          {"atol", tolerance.atol * AtolScale(expected)}};
}

void WriteManifest(const std::string& dir, const std::string& arch, const json& cases) {
  fs::path path = fs::path(dir) / "manifest.json";
  std::ofstream out(path);
  out << json{{"format", kFormat}, {"arch", arch}, {"cases", cases}}.dump() << "\n";
  if (!out) TT_USER_ERROR("cannot write {}", path.string());
}

std::string DefaultRunnerPath() {
#ifdef TIRTUNE_GPU_RUNNER_DEFAULT_PATH
  return SiblingProgram("tirtune-gpu-runner", TIRTUNE_GPU_RUNNER_DEFAULT_PATH);
#else
  return SiblingProgram("tirtune-gpu-runner", "tirtune-gpu-runner");
#endif
}

json RunBundle(const std::string& dir, double timeout_s, const std::string& runner_path) {
  std::string runner = runner_path.empty() ? DefaultRunnerPath() : runner_path;
  fs::path results = fs::path(dir) / "results.json";
  fs::path out = fs::path(dir) / "runner.out", err = fs::path(dir) / "runner.err";
  fs::remove(results);
  std::vector<std::string> args = {runner, dir, "--json", results.string()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, runner.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    TT_USER_ERROR("cannot start the GPU runner {}: {}", runner, std::strerror(rc));
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      TT_USER_ERROR("the GPU runner ran past {} s and was stopped", timeout_s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string said = ReadText(err);
  while (!said.empty() && said.back() == '\n') said.pop_back();
  if (said.rfind("error: ", 0) == 0) said = said.substr(7);
  if (!fs::exists(results)) {
    if (WIFSIGNALED(status)) {
      TT_USER_ERROR("the GPU runner died of signal {}{}", WTERMSIG(status),
                    said.empty() ? "" : ": " + said);
    }
    TT_USER_ERROR("{}", said.empty() ? "the GPU runner wrote no results" : said);
  }
  try {
    return json::parse(ReadText(results));
  } catch (const json::exception&) {
    TT_USER_ERROR("the GPU runner's results ({}) are not JSON", results.string());
  }
}

}  // namespace tirtune::gpu_bundle
