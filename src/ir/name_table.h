// Printed names of variables and buffers: the name hint made unique within one printout (or
// v0, v1, ... and b0, b1, ... in canonical mode), keyed by node identity.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "tirtune/support/object.h"

namespace tirtune {

class NameTable {
 public:
  explicit NameTable(bool canonical) : canonical_(canonical) {}

  bool canonical() const { return canonical_; }

  /// Names a variable or buffer at its definition point. In canonical mode every definition
  /// gets the next number, so that names depend only on structure; otherwise a node that was
  /// already named keeps its name.
  const std::string& DefineVar(const Object* var, std::string_view hint);
  const std::string& DefineBuffer(const Object* buffer, std::string_view hint);

  /// The name of a use. A node not seen before (a free variable) is named now.
  const std::string& Var(const Object* var, std::string_view hint);
  const std::string& Buffer(const Object* buffer, std::string_view hint);

 private:
  std::string Fresh(std::string_view hint, std::string_view fallback);

  bool canonical_;
  int next_var_ = 0;
  int next_buffer_ = 0;
  std::unordered_map<const Object*, std::string> names_;
  std::unordered_set<std::string> taken_;
};

}  // namespace tirtune
