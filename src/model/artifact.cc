// ReadArtifact: manifest.json and graph.json of a compiled model, checked before anything is
// loaded, so that a corrupt directory is a clear error rather than a crash in a kernel.
#include "tirtune/model/artifact.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tirtune/ir/packed_layout.h"
#include "tirtune/schedule/json_text.h"
#include "tirtune/support/error.h"
#include "tirtune/support/sha256.h"

namespace tirtune::model {
namespace {

namespace fs = std::filesystem;

nlohmann::json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) TT_USER_ERROR("'{}' is missing (not a compiled model directory?)", path.string());
  std::stringstream text;
  text << in.rdbuf();
  return ParseJsonText(text.str(), "'" + path.string() + "'");
}

int ValueIndex(const nlohmann::json& j, size_t num_values, const std::string& where) {
  int64_t index = JsonInteger(j, where + ": a value id");
  if (index < 0 || static_cast<size_t>(index) >= num_values) {
    TT_USER_ERROR("{}: value {} out of range (the graph has {} values)", where, index, num_values);
  }
  return static_cast<int>(index);
}

ArtifactValueKind ParseKind(const std::string& kind, const std::string& where) {
  if (kind == "input") return ArtifactValueKind::kInput;
  if (kind == "constant") return ArtifactValueKind::kConstant;
  if (kind == "call") return ArtifactValueKind::kCall;
  TT_USER_ERROR("{}: unknown value kind '{}'", where, kind);
}

// `name`, a path the manifest gives, when it stays inside the artifact directory (relative and
// without ".."): an artifact never makes tirtune read or hash a file elsewhere.
std::string InsidePath(const std::string& name, const std::string& m) {
  fs::path rel(name);
  bool inside = !rel.is_absolute() && !rel.empty();
  for (const fs::path& part : rel) inside = inside && part != "..";
  if (!inside) TT_USER_ERROR("'{}': file '{}' is not inside the artifact", m, name);
  return name;
}

// Every file the manifest lists has the SHA-256 it lists: a kernel object with a flipped bit
// must never be linked into the process.
void CheckFiles(const std::string& dir, const nlohmann::json& files, const std::string& m) {
  if (!files.is_object()) TT_USER_ERROR("'{}': \"files\" is not an object", m);
  for (const auto& [name, sha] : files.items()) {
    fs::path path = fs::path(dir) / InsidePath(name, m);
    std::ifstream in(path, std::ios::binary);
    if (!in) TT_USER_ERROR("'{}' is missing (the manifest lists it)", path.string());
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (!sha.is_string() || Sha256Hex(bytes.str()) != sha.get<std::string>()) {
      TT_USER_ERROR(
          "'{}' is damaged or was changed after compile: its SHA-256 is not the "
          "manifest's; compile the model again",
          path.string());
    }
  }
}

}  // namespace

int64_t ArtifactValue::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Artifact ReadArtifact(const std::string& dir) {
  if (!fs::is_directory(dir)) TT_USER_ERROR("'{}' is not a directory", dir);
  Artifact a;
  a.dir = dir;
  fs::path manifest_path = fs::path(dir) / "manifest.json";
  nlohmann::json manifest = ReadJson(manifest_path);
  const std::string m = manifest_path.string();
  try {
    if (manifest.value("format", "") != kArtifactFormat) {
      TT_USER_ERROR("'{}' is not a tirtune model manifest (format '{}')", m,
                    manifest.value("format", ""));
    }
    int64_t version = JsonInteger(manifest.at("version"), "'" + m + "': \"version\"");
    if (version < 1 || version > kArtifactVersion) {
      TT_USER_ERROR("'{}' has version {}; this tirtune reads versions 1 to {}", m, version,
                    kArtifactVersion);
    }
    if (version >= 2) CheckFiles(dir, manifest.at("files"), m);
    a.target = manifest.at("target").get<std::string>();
    a.weights_file = InsidePath(manifest.at("weights").get<std::string>(), m);
    for (const nlohmann::json& f : manifest.at("functions")) {
      ArtifactFunction function;
      function.name = f.at("name").get<std::string>();
      // A function a library runs (version 3) has the composite's description, no object.
      if (f.contains("library")) {
        if (!f.at("library").is_object()) {
          TT_USER_ERROR("'{}': function '{}': \"library\" is not an object", m, function.name);
        }
        function.library = f.at("library").dump();
      } else {
        function.object_file = InsidePath(f.at("object").get<std::string>(), m);
      }
      function.ir_file = InsidePath(f.at("ir").get<std::string>(), m);
      function.tuned = f.value("tuned", false);
      a.functions.push_back(std::move(function));
    }
  } catch (const nlohmann::json::exception& e) {
    TT_USER_ERROR("'{}' is malformed: {}", m, JsonErrorText(e));
  }

  fs::path graph_path = fs::path(dir) / "graph.json";
  nlohmann::json graph = ReadJson(graph_path);
  const std::string g = graph_path.string();
  try {
    for (const nlohmann::json& v : graph.at("values")) {
      ArtifactValue value;
      value.name = v.at("name").get<std::string>();
      value.kind = ParseKind(v.at("kind").get<std::string>(), g);
      std::optional<DataType> dtype = DataType::Parse(v.at("dtype").get<std::string>());
      if (!dtype) TT_USER_ERROR("{}: value '{}' has an unknown dtype", g, value.name);
      value.dtype = *dtype;
      const std::string shape_of = fmt::format("{}: value '{}': a dimension", g, value.name);
      int64_t elements = 1;
      const nlohmann::json& dims = v.at("shape");
      if (!dims.is_array()) TT_USER_ERROR("{}: value '{}': \"shape\" is not a list", g, value.name);
      for (const nlohmann::json& d : dims) {
        value.shape.push_back(JsonInteger(d, shape_of, 0));
        if (__builtin_mul_overflow(elements, value.shape.back(), &elements) ||
            elements > (int64_t{1} << 48)) {
          TT_USER_ERROR("{}: value '{}' has more elements than any tensor tirtune makes", g,
                        value.name);
        }
      }
      if (value.kind == ArtifactValueKind::kConstant) {
        value.offset = JsonInteger(v.at("offset"), g + ": an offset", 0);
        value.nbytes = JsonInteger(v.at("nbytes"), g + ": a size", 0);
        if (value.nbytes != value.NumElements() * value.dtype.bytes()) {
          TT_USER_ERROR("{}: constant '{}' has a bad offset or size", g, value.name);
        }
        if (v.contains("packed")) {
          value.layout = v.at("packed").dump();
          PackedLayout layout =
              PackedLayout::FromJson(value.layout, fmt::format("{}: constant '{}'", g, value.name));
          if (layout.PackedShape() != value.shape) {
            TT_USER_ERROR("{}: constant '{}': its packed layout has another shape", g, value.name);
          }
        }
      }
      a.values.push_back(std::move(value));
    }
    const size_t n = a.values.size();
    for (const nlohmann::json& c : graph.at("calls")) {
      ArtifactCall call;
      int64_t function = JsonInteger(c.at("function"), g + ": a call's function");
      if (function < 0 || static_cast<size_t>(function) >= a.functions.size()) {
        TT_USER_ERROR("{}: a call names function {}, the manifest has {}", g, function,
                      a.functions.size());
      }
      call.function = static_cast<int>(function);
      for (const nlohmann::json& arg : c.at("args")) call.args.push_back(ValueIndex(arg, n, g));
      call.output = ValueIndex(c.at("output"), n, g);
      if (a.values[call.output].kind != ArtifactValueKind::kCall) {
        TT_USER_ERROR("{}: a call writes value '{}', which is not a call result", g,
                      a.values[call.output].name);
      }
      a.calls.push_back(std::move(call));
    }
    for (const nlohmann::json& i : graph.at("inputs")) a.inputs.push_back(ValueIndex(i, n, g));
    for (const nlohmann::json& o : graph.at("outputs")) a.outputs.push_back(ValueIndex(o, n, g));
  } catch (const nlohmann::json::exception& e) {
    TT_USER_ERROR("'{}' is malformed: {}", g, JsonErrorText(e));
  }
  // Every argument must be defined before its call.
  std::vector<bool> defined(a.values.size(), false);
  for (size_t i = 0; i < a.values.size(); ++i) {
    defined[i] = a.values[i].kind != ArtifactValueKind::kCall;
  }
  for (const ArtifactCall& call : a.calls) {
    for (int arg : call.args) {
      if (!defined[arg]) {
        TT_USER_ERROR("{}: value '{}' is used before it is computed", g, a.values[arg].name);
      }
    }
    defined[call.output] = true;
  }
  for (int o : a.outputs) {
    if (!defined[o]) TT_USER_ERROR("{}: output '{}' is never computed", g, a.values[o].name);
  }
  return a;
}

}  // namespace tirtune::model
