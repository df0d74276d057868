// libFuzzer target for JSON-lines databases (built by scripts/fuzz.sh jsonl, and replayed over its
// committed corpus by the fuzz_replay tests): the input is written as a .jsonl file and opened
// read-only, then every reader runs on it (the workloads, each one's records and top records,
// statistics, the integrity check, every record in turn). Opening may refuse with a UserError; what
// opens must answer every query without an exception (damaged rows are skipped with a warning), a
// sanitizer report, a trap or a hang.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "read_everything.h"
#include "tirtune/database/database.h"
#include "tirtune/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tirtune;
  static const std::string path = "/tmp/tirtune_jsonl_fuzz_" + std::to_string(getpid()) + ".jsonl";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::unique_ptr<Database> db;
  try {
    OpenOptions options;
    options.create_if_missing = false;
    options.on_warning = [](const std::string&) {};
    db = OpenJsonlDatabase(path, options);
  } catch (const UserError&) {
    return 0;  // refused with a message
  }
  testing::ReadEverything(*db);
  return 0;
}
