// Parsing and printing of targets: CPU targets ("llvm -mcpu=znver5 -num-cores=2") and CUDA
// targets ("cuda -arch=sm_90 -max-threads-per-block=512 -host=\"llvm -mcpu=znver5\"").
#include "tirtune/codegen/target.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "llvm_target_info.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// Splits at spaces and tabs outside double quotes; the quotes themselves are dropped
// (-host="llvm -mcpu=znver5" is one token, -host=llvm -mcpu=znver5).
std::vector<std::string> SplitTokens(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i == text.size()) break;
    std::string token;
    bool quoted = false;
    for (; i < text.size() && (quoted || (text[i] != ' ' && text[i] != '\t')); ++i) {
      if (text[i] == '"') {
        quoted = !quoted;
      } else {
        token += text[i];
      }
    }
    if (quoted) TT_USER_ERROR("unterminated quote in target \"{}\"", text);
    out.push_back(std::move(token));
  }
  return out;
}

void CheckFeatures(const std::string& mattr, std::string_view text) {
  size_t start = 0;
  while (start <= mattr.size()) {
    size_t comma = mattr.find(',', start);
    std::string entry =
        mattr.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (entry.size() < 2 || (entry[0] != '+' && entry[0] != '-')) {
      TT_USER_ERROR("bad feature '{}' in -mattr of target \"{}\": write +FEATURE or -FEATURE",
                    entry, text);
    }
    if (!codegen::IsKnownFeature(entry.substr(1))) {
      TT_USER_ERROR("unknown CPU feature '{}' in -mattr of target \"{}\"", entry.substr(1), text);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

// One "-key=value" option: its key and value, checked for a value and against repetition.
struct Option {
  std::string key;
  std::string value;
};

Option SplitOption(const std::string& token, std::set<std::string>* seen, std::string_view text,
                   std::string_view known) {
  size_t eq = token.find('=');
  std::string key = token.substr(0, eq);
  // A key is known when `known` lists it as " KEY=..." (at the start or after a space).
  if (key.empty() || key[0] != '-' ||
      (" " + std::string(known)).find(" " + key + "=") == std::string::npos) {
    TT_USER_ERROR("unknown target option '{}' in target \"{}\" (known: {})", token, text, known);
  }
  if (eq == std::string::npos || eq + 1 == token.size()) {
    TT_USER_ERROR("target option '{}' needs a value ({}=...) in target \"{}\"", token, key, text);
  }
  if (!seen->insert(key).second) {
    TT_USER_ERROR("target option '{}' is given twice in target \"{}\"", key, text);
  }
  return {key, token.substr(eq + 1)};
}

// The integer in `value`, or nullopt when it is not one.
std::optional<int64_t> ParseInt(const std::string& value) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return n;
}

Target ParseLlvm(const std::vector<std::string>& tokens, std::string_view text) {
  Target t = Target::Host();
  std::set<std::string> seen;
  for (size_t k = 1; k < tokens.size(); ++k) {
    auto [key, value] =
        SplitOption(tokens[k], &seen, text, "-mcpu=CPU, -mattr=+F,-G, -num-cores=N");
    if (key == "-mcpu") {
      if (!codegen::IsKnownCpu(value)) {
        TT_USER_ERROR("unknown CPU '{}' in target \"{}\" (llc-19 -mcpu=help lists them)", value,
                      text);
      }
      t.mcpu = value;
    } else if (key == "-mattr") {
      CheckFeatures(value, text);
      t.mattr = value;
    } else {
      std::optional<int64_t> cores = ParseInt(value);
      if (!cores || *cores < 1 || *cores > 4096) {
        TT_USER_ERROR(
            "bad core count '{}' in target \"{}\": -num-cores takes an integer in "
            "[1, 4096]",
            value, text);
      }
      t.num_cores = static_cast<int>(*cores);
    }
  }
  return t;
}

// The GPU limits a cuda target may lower, by option name, in the order str() prints them.
struct LimitOption {
  const char* name;
  int64_t GpuLimits::*field;
};
constexpr LimitOption kLimitOptions[] = {
    {"-max-threads-per-block", &GpuLimits::max_threads_per_block},
    {"-max-shared-memory-per-block", &GpuLimits::max_shared_memory_per_block},
    {"-max-dynamic-shared-memory-per-block", &GpuLimits::max_dynamic_shared_memory_per_block},
    {"-max-registers-per-thread", &GpuLimits::max_registers_per_thread},
    {"-max-registers-per-block", &GpuLimits::max_registers_per_block},
    {"-max-vthreads", &GpuLimits::max_vthreads},
    {"-vector-bytes", &GpuLimits::vector_bytes},
    {"-max-local-memory-per-thread", &GpuLimits::max_local_memory_per_thread},
};
constexpr std::string_view kCudaOptions =
    "-arch=sm_80|sm_89|sm_90, -host=\"llvm ...\", -max-threads-per-block=N, "
    "-max-shared-memory-per-block=BYTES, -max-dynamic-shared-memory-per-block=BYTES, "
    "-max-registers-per-thread=N, -max-registers-per-block=N, -max-vthreads=N, "
    "-vector-bytes=N, -max-local-memory-per-thread=BYTES";

Target ParseCuda(const std::vector<std::string>& tokens, std::string_view text) {
  Target t = Target::Host();
  t.kind = "cuda";
  t.arch = "sm_90";
  std::set<std::string> seen;
  std::vector<Option> limits;
  for (size_t k = 1; k < tokens.size(); ++k) {
    Option option = SplitOption(tokens[k], &seen, text, kCudaOptions);
    if (option.key == "-arch") {
      Target::LimitsOfArch(option.value);  // names an unknown arch
      t.arch = option.value;
    } else if (option.key == "-host") {
      Target host = Target::Parse(option.value);
      if (host.kind != "llvm") {
        TT_USER_ERROR("-host of target \"{}\" must be a CPU target (llvm ...), got '{}'", text,
                      option.value);
      }
      t.mcpu = host.mcpu;
      t.mattr = host.mattr;
      t.num_cores = host.num_cores;
      t.explicit_host = true;
    } else {
      limits.push_back(option);
    }
  }
  // The limits after the arch, whichever order the options came in.
  t.gpu = Target::LimitsOfArch(t.arch);
  const GpuLimits arch_limits = t.gpu;
  for (const Option& option : limits) {
    for (const LimitOption& limit : kLimitOptions) {
      if (option.key != limit.name) continue;
      std::optional<int64_t> n = ParseInt(option.value);
      int64_t most = arch_limits.*limit.field;
      if (!n || *n < 1 || *n > most) {
        TT_USER_ERROR("bad value '{}' of {} in target \"{}\": {} allows an integer in [1, {}]",
                      option.value, option.key, text, t.arch, most);
      }
      if (limit.field == &GpuLimits::vector_bytes && (*n & (*n - 1)) != 0) {
        TT_USER_ERROR("bad value '{}' of -vector-bytes in target \"{}\": a power of two",
                      option.value, text);
      }
      t.gpu.*limit.field = *n;
    }
  }
  return t;
}

}  // namespace

int HostCoreCount() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

Target Target::Host() {
  Target t;
  t.mcpu = HostCpuName();
  t.num_cores = HostCoreCount();
  return t;
}

GpuLimits Target::LimitsOfArch(std::string_view arch) {
  GpuLimits limits;  // the defaults are sm_90's
  if (arch == "sm_90") {
    limits.max_dynamic_shared_memory_per_block = 227 * 1024;
  } else if (arch == "sm_80") {
    limits.max_dynamic_shared_memory_per_block = 163 * 1024;
  } else if (arch == "sm_89") {
    limits.max_dynamic_shared_memory_per_block = 99 * 1024;
  } else {
    TT_USER_ERROR("unknown CUDA arch '{}' (supported: sm_80, sm_89, sm_90)", arch);
  }
  return limits;
}

Target Target::Parse(std::string_view text) {
  std::vector<std::string> tokens = SplitTokens(text);
  if (tokens.empty()) TT_USER_ERROR("empty target string: expected \"llvm [-mcpu=CPU] ...\"");
  if (tokens[0] == "llvm") return ParseLlvm(tokens, text);
  if (tokens[0] == "cuda") return ParseCuda(tokens, text);
  TT_USER_ERROR("unknown target kind '{}' in target \"{}\" (supported: llvm, cuda)", tokens[0],
                text);
}

Target Target::HostTarget() const {
  Target host = *this;
  host.kind = "llvm";
  host.arch.clear();
  host.gpu = GpuLimits();
  host.explicit_host = false;
  return host;
}

std::string Target::str() const {
  if (is_cuda()) {
    std::string s = "cuda -arch=" + arch;
    const GpuLimits arch_limits = LimitsOfArch(arch);
    for (const LimitOption& limit : kLimitOptions) {
      if (gpu.*limit.field != arch_limits.*limit.field) {
        s += std::string(" ") + limit.name + "=" + std::to_string(gpu.*limit.field);
      }
    }
    if (explicit_host) s += " -host=\"" + HostTarget().str() + "\"";
    return s;
  }
  std::string s = kind + " -mcpu=" + mcpu;
  if (!mattr.empty()) s += " -mattr=" + mattr;
  s += " -num-cores=" + std::to_string(num_cores);
  return s;
}

void RequireCpuTarget(const Target& target, std::string_view what) {
  if (!target.is_cuda()) return;
  TT_USER_ERROR("{} needs a CPU target (llvm ...); \"{}\" is a cuda target", what, target.str());
}

}  // namespace tirtune
