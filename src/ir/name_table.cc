// Unique printed names. Vars and buffers share one namespace because the parser resolves a bare
// identifier to either; words the format itself uses are never handed out, so a variable called
// `in` or `float32` prints as `in_1` / `float32_1` and still parses.
#include "name_table.h"

#include <array>

#include "tirtune/ir/expr.h"
#include "tirtune/support/dtype.h"

namespace tirtune {
namespace {

constexpr std::array<std::string_view, 41> kReservedWords = {
    "and",       "or",       "not",       "if",         "else",      "elif",           "for",
    "in",        "with",     "def",       "True",       "False",     "None",           "inf",
    "nan",       "range",    "parallel",  "vectorized", "unroll",    "thread_binding", "block",
    "init",      "axis",     "where",     "reads",      "writes",    "alloc_buffer",   "block_attr",
    "func_attr", "evaluate", "let",       "allocate",   "select",    "cast",           "min",
    "max",       "ramp",     "broadcast", "Buffer",     "prim_func", "sync_threads",
};

bool IsReserved(const std::string& name) {
  for (std::string_view w : kReservedWords) {
    if (name == w) return true;
  }
  Intrinsic unused;
  return DataType::Parse(name).has_value() || IntrinsicFromName(name, &unused);
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The hint as an identifier: other characters (as in "A.shared") become '_'.
std::string Identifier(std::string_view hint, std::string_view fallback) {
  if (hint.empty()) return std::string(fallback);
  std::string id;
  for (char c : hint) id += IsIdentChar(c) ? c : '_';
  if (id[0] >= '0' && id[0] <= '9') id.insert(0, "_");
  return id;
}

}  // namespace

std::string NameTable::Fresh(std::string_view hint, std::string_view fallback) {
  std::string base = Identifier(hint, fallback);
  std::string name = base;
  for (int suffix = 1; taken_.count(name) || IsReserved(name); ++suffix) {
    name = base + "_" + std::to_string(suffix);
  }
  taken_.insert(name);
  return name;
}

const std::string& NameTable::DefineVar(const Object* var, std::string_view hint) {
  if (canonical_) return names_[var] = "v" + std::to_string(next_var_++);
  return Var(var, hint);
}

const std::string& NameTable::DefineBuffer(const Object* buffer, std::string_view hint) {
  if (canonical_) return names_[buffer] = "b" + std::to_string(next_buffer_++);
  return Buffer(buffer, hint);
}

const std::string& NameTable::Var(const Object* var, std::string_view hint) {
  auto it = names_.find(var);
  if (it != names_.end()) return it->second;
  if (canonical_) return names_[var] = "v" + std::to_string(next_var_++);
  return names_[var] = Fresh(hint, "v");
}

const std::string& NameTable::Buffer(const Object* buffer, std::string_view hint) {
  auto it = names_.find(buffer);
  if (it != names_.end()) return it->second;
  if (canonical_) return names_[buffer] = "b" + std::to_string(next_buffer_++);
  return names_[buffer] = Fresh(hint, "buf");
}

}  // namespace tirtune
