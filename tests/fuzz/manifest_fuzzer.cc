// libFuzzer target for compiled-model artifacts (built by scripts/fuzz.sh manifest, and replayed
// over its committed corpus by the fuzz_replay tests): the input is the text of manifest.json,
// a line "----", and the text of graph.json (without that line, all of it is the manifest), written
// into an artifact directory beside a small weights.bin and read by ReadArtifact as `tirtune run`
// does before it loads anything. Refusals must be UserErrors; an artifact that is accepted has
// every reference in range.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "tirtune/model/artifact.h"
#include "tirtune/support/error.h"

namespace {

void WriteFile(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tirtune;
  namespace fs = std::filesystem;
  static const fs::path dir = fs::temp_directory_path() /
                              ("tirtune_manifest_fuzz_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t cut = input.find("\n----\n");
  std::string_view manifest = input.substr(0, cut);
  std::string_view graph = cut == std::string_view::npos ? "" : input.substr(cut + 6);
  WriteFile(dir / "manifest.json", manifest);
  WriteFile(dir / "graph.json", graph);
  WriteFile(dir / "weights.bin", std::string(64, '\0'));
  model::Artifact artifact;
  try {
    artifact = model::ReadArtifact(dir.string());
  } catch (const UserError&) {
    return 0;  // refused with a message naming the file
  }
  const size_t values = artifact.values.size();
  for (const model::ArtifactCall& call : artifact.calls) {
    bool in_range = call.function >= 0 &&
                    static_cast<size_t>(call.function) < artifact.functions.size() &&
                    call.output >= 0 && static_cast<size_t>(call.output) < values;
    for (int arg : call.args) in_range = in_range && arg >= 0 && static_cast<size_t>(arg) < values;
    if (!in_range) __builtin_trap();  // accepted with a reference out of range
  }
  for (int id : artifact.inputs) {
    if (id < 0 || static_cast<size_t>(id) >= values) __builtin_trap();
  }
  for (int id : artifact.outputs) {
    if (id < 0 || static_cast<size_t>(id) >= values) __builtin_trap();
  }
  return 0;
}
