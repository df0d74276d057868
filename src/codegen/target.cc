// Parsing and printing of CPU targets ("llvm -mcpu=znver5 -num-cores=2").
#include "tirtune/codegen/target.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <thread>
#include <vector>

#include "llvm_target_info.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

std::vector<std::string> SplitWhitespace(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) out.emplace_back(text.substr(start, i - start));
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

Target Target::Parse(std::string_view text) {
  std::vector<std::string> tokens = SplitWhitespace(text);
  if (tokens.empty()) TT_USER_ERROR("empty target string: expected \"llvm [-mcpu=CPU] ...\"");
  if (tokens[0] != "llvm") {
    TT_USER_ERROR("unknown target kind '{}' in target \"{}\" (supported: llvm)", tokens[0], text);
  }
  Target t = Host();
  std::set<std::string> seen;
  for (size_t k = 1; k < tokens.size(); ++k) {
    const std::string& token = tokens[k];
    size_t eq = token.find('=');
    std::string key = token.substr(0, eq);
    if (key != "-mcpu" && key != "-mattr" && key != "-num-cores") {
      TT_USER_ERROR(
          "unknown target option '{}' in target \"{}\" (known: -mcpu=CPU, -mattr=+F,-G, "
          "-num-cores=N)",
          token, text);
    }
    if (eq == std::string::npos || eq + 1 == token.size()) {
      TT_USER_ERROR("target option '{}' needs a value ({}=...) in target \"{}\"", token, key, text);
    }
    if (!seen.insert(key).second) {
      TT_USER_ERROR("target option '{}' is given twice in target \"{}\"", key, text);
    }
    std::string value = token.substr(eq + 1);
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
      int cores = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), cores);
      if (ec != std::errc() || end != value.data() + value.size() || cores < 1 || cores > 4096) {
        TT_USER_ERROR(
            "bad core count '{}' in target \"{}\": -num-cores takes an integer in "
            "[1, 4096]",
            value, text);
      }
      t.num_cores = cores;
    }
  }
  return t;
}

std::string Target::str() const {
  std::string s = kind + " -mcpu=" + mcpu;
  if (!mattr.empty()) s += " -mattr=" + mattr;
  s += " -num-cores=" + std::to_string(num_cores);
  return s;
}

}  // namespace tirtune
