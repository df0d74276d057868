// Replays fuzzer inputs without libFuzzer: `fuzz_replay_TARGET PATH...` calls the target's
// LLVMFuzzerTestOneInput on every file given and every file in the directories given (in name
// order), so the committed corpora and past findings run in every CTest run. A target that
// throws fails the replay naming the input; a trap or a crash fails it as a crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry& e : fs::directory_iterator(arg)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (fs::is_regular_file(arg)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "fuzz_replay: '%s' is neither a file nor a directory\n", argv[i]);
      return 2;
    }
  }
  for (const fs::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz_replay: '%s' threw: %s\n", path.c_str(), e.what());
      return 1;
    } catch (...) {
      std::fprintf(stderr, "fuzz_replay: '%s' threw something that is not a std::exception\n",
                   path.c_str());
      return 1;
    }
  }
  std::printf("fuzz_replay: %zu inputs, none refused badly\n", inputs.size());
  return inputs.empty() ? 1 : 0;
}
