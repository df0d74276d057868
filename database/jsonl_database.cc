// The JSON-lines backend: one file, a header line and then one JSON object per line, either a
// workload or a record, appended as they are committed. It is the export/import format and
// what a review diff shows. It has one writer at a time: the first write takes an exclusive lock
// on the file (flock) that is held until the database is closed, and is refused, clearly, while
// another process holds it or when the file changed since it was read (tuners that run at the
// same time share SQLite or PostgreSQL instead).
//
//   {"format":"tirtune-database","version":1}
//   {"type":"workload","id":1,"shash":"…","name":"gemm","created_at":…,"ir":"@prim_func\n…"}
//   {"type":"record","workload":1,"target":"llvm …","status":"ok","median_secs":…,
//    "run_secs":[…],"error":"","device":"…","program_version":"…","created_at":…,"trace":{…}}
//
// Reading skips, with a warning, every line that cannot be used (not JSON, an unknown type, a
// record of an unknown workload, a trace that is not a trace, absurd numbers); an incomplete last
// line (a writer killed mid-line) is skipped too, and the next append starts a new line.
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "memory_database.h"
#include "tirtune/database/record_json.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/schedule/json_text.h"
#include "workload_text.h"

namespace tirtune {
namespace database_internal {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

constexpr const char* kFormat = "tirtune-database";
constexpr int kFormatVersion = 1;

/// A line that cannot be used; it is skipped with a warning.
class BadLine : public std::runtime_error {
 public:
  explicit BadLine(const std::string& what) : std::runtime_error(what) {}
};

std::string HeaderLine() {
  return ordered_json{{"format", kFormat}, {"version", kFormatVersion}}.dump() + "\n";
}

std::string WorkloadLine(const WorkloadEntry& w) {
  ordered_json j = {{"type", "workload"},         {"id", w.id},
                    {"shash", w.shash},           {"name", w.name},
                    {"created_at", w.created_at}, {"ir", w.text}};
  return j.dump() + "\n";
}

std::string RecordLine(const TuningRecord& r) {
  ordered_json j = {{"type", "record"}};
  j.update(RecordToJson(r));
  return j.dump() + "\n";
}

std::string OptionalString(const json& j, const char* key) {
  if (!j.contains(key)) return "";
  if (!j[key].is_string()) throw BadLine(fmt::format("\"{}\" is not a string", key));
  return j[key].get<std::string>();
}

// An integer field that fits int64 (a JSON number such as 1e62 or 2^64 - 1 does not).
int64_t IntegerField(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() &&
       v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
    throw BadLine(fmt::format("\"{}\" is not an integer of at most 64 bits", key));
  }
  return v.get<int64_t>();
}

void WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) TT_USER_ERROR("cannot write '{}': {}", path, std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

class JsonlDatabase : public MemoryDatabase {
 public:
  JsonlDatabase(std::string path, const OpenOptions& options)
      : MemoryDatabase(options), path_(std::move(path)) {
    Load(options);
  }
  ~JsonlDatabase() override {
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  std::string Describe() const override { return fmt::format("JSON-lines database '{}'", path_); }

 protected:
  void PersistWorkload(const WorkloadEntry& entry) override { Append(WorkloadLine(entry)); }

  void PersistRecords(const std::vector<const CheckedRecord*>& records) override {
    std::string text;
    for (const CheckedRecord* c : records) text += RecordLine(c->record);
    Append(text);  // one write: a killed writer leaves at most one incomplete line
  }

  void PersistRewrite(const std::vector<const WorkloadEntry*>& workloads,
                      const std::vector<const TuningRecord*>& records) override {
    Lock();
    std::string text = HeaderLine();
    for (const WorkloadEntry* w : workloads) text += WorkloadLine(*w);
    for (const TuningRecord* r : records) text += RecordLine(*r);
    std::string tmp = fmt::format("{}.tmp-{}", path_, ::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) TT_USER_ERROR("cannot write '{}': {}", tmp, std::strerror(errno));
    try {
      WriteAll(fd, text, tmp);
    } catch (...) {
      ::close(fd);
      ::unlink(tmp.c_str());
      throw;
    }
    bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced || std::rename(tmp.c_str(), path_.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      TT_USER_ERROR("cannot replace '{}': {}", path_, std::strerror(err));
    }
    needs_newline_ = false;
    // The lock was on the replaced file; the next write locks the new one.
    ::close(lock_fd_);
    lock_fd_ = -1;
    expected_size_ = static_cast<int64_t>(text.size());
  }

 private:
  // Takes the writer's lock, once: refused while another process writes, or when the file is no
  // longer what was read (another writer appended since), whose ids this object does not know.
  void Lock() {
    if (lock_fd_ >= 0) return;
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) TT_USER_ERROR("cannot open '{}' for writing: {}", path_, std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK) {
        TT_USER_ERROR(
            "'{}' is being written by another tirtune process: a JSON-lines database has one "
            "writer at a time (tuners that run together share a SQLite or PostgreSQL database)",
            path_);
      }
      TT_USER_ERROR("cannot lock '{}': {}", path_, std::strerror(err));
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_size != expected_size_) {
      ::close(fd);
      TT_USER_ERROR(
          "'{}' changed since it was read (another process wrote to it); nothing was "
          "written: run the command again",
          path_);
    }
    lock_fd_ = fd;
  }

  void Append(const std::string& text) {
    Lock();
    int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) TT_USER_ERROR("cannot open '{}' for writing: {}", path_, std::strerror(errno));
    std::string bytes = needs_newline_ ? "\n" + text : text;
    try {
      WriteAll(fd, bytes, path_);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    expected_size_ += static_cast<int64_t>(bytes.size());
    needs_newline_ = false;
  }

  void Load(const OpenOptions& options) {
    std::error_code ec;
    if (std::filesystem::is_directory(path_, ec)) {
      TT_USER_ERROR("'{}' is a directory, not a database", path_);
    }
    if (!std::filesystem::exists(path_, ec)) {
      if (!options.create_if_missing) TT_USER_ERROR("'{}': no such database", path_);
      std::ofstream out(path_, std::ios::binary);
      out << HeaderLine();
      if (!out) TT_USER_ERROR("cannot create '{}'", path_);
      expected_size_ = static_cast<int64_t>(HeaderLine().size());
      return;
    }
    std::ifstream in(path_, std::ios::binary);
    if (!in) TT_USER_ERROR("cannot open '{}'", path_);
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    expected_size_ = static_cast<int64_t>(text.size());
    if (text.empty()) {
      Append(HeaderLine());
      return;
    }
    needs_newline_ = text.back() != '\n';
    std::map<int64_t, WorkloadId> workload_ids;  // id in the file -> id here
    size_t line_no = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      bool complete = end != std::string::npos;
      if (!complete) end = text.size();
      std::string_view line(text.data() + pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (line_no == 1) {
        CheckHeader(line);
        continue;
      }
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      std::string why;
      std::optional<json> parsed = TryParseJsonText(line, &why);
      if (!parsed) {
        warn()(fmt::format("'{}' line {}: {}; skipped", path_, line_no,
                           complete ? why : "incomplete last line (an interrupted write?)"));
        continue;
      }
      json& j = *parsed;
      try {
        LoadLine(j, line_no, workload_ids);
      } catch (const BadLine& e) {
        warn()(fmt::format("'{}' line {}: {}; skipped", path_, line_no, e.what()));
      } catch (const json::exception& e) {  // a field of the wrong type
        warn()(fmt::format("'{}' line {}: {}; skipped", path_, line_no, JsonErrorText(e)));
      } catch (const UserError& e) {  // an empty target
        warn()(fmt::format("'{}' line {}: {}; skipped", path_, line_no, e.what()));
      }
    }
  }

  void CheckHeader(std::string_view line) {
    std::string why;
    json j = TryParseJsonText(line, &why).value_or(json::value_t::discarded);
    if (j.is_discarded() || !j.is_object() || !j.contains("format") || j["format"] != kFormat) {
      TT_USER_ERROR(
          "'{}' is not a tirtune JSON-lines database (its first line is not the "
          "{{\"format\": \"{}\", ...}} header)",
          path_, kFormat);
    }
    if (!j.contains("version") || !j["version"].is_number_integer()) {
      TT_USER_ERROR("'{}': the header has no integer \"version\"", path_);
    }
    int64_t version = j["version"].get<int64_t>();
    if (version < 1 || version > kFormatVersion) {
      TT_USER_ERROR("'{}' has format version {}; this tirtune reads version {}", path_, version,
                    kFormatVersion);
    }
  }

  void LoadLine(const json& j, size_t line_no, std::map<int64_t, WorkloadId>& workload_ids) {
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
      throw BadLine("not an object with a string \"type\"");
    }
    const std::string type = j["type"].get<std::string>();
    if (type == "workload") {
      int64_t file_id = IntegerField(j, "id");
      if (workload_ids.count(file_id)) {
        throw BadLine(fmt::format("a second workload with id {}", file_id));
      }
      std::string problem;
      std::optional<PrimFunc> func = ParseWorkloadText(j.at("ir").get<std::string>(), &problem);
      if (!func) throw BadLine(problem);
      WorkloadEntry entry;
      entry.id = file_id;
      entry.shash = StructuralHashHex(*func);
      entry.name = OptionalString(j, "name");
      entry.text = j.at("ir").get<std::string>();
      entry.func = *func;
      entry.created_at = j.value("created_at", 0.0);
      if (OptionalString(j, "shash") != entry.shash) {
        warn()(fmt::format(
            "'{}' line {}: the stored hash {} differs from the hash of the stored text ({}); "
            "using the latter",
            path_, line_no, OptionalString(j, "shash"), entry.shash));
      }
      workload_ids[file_id] = AddLoadedWorkload(std::move(entry));
      return;
    }
    if (type != "record") throw BadLine(fmt::format("unknown type \"{}\"", type));
    int64_t file_id = IntegerField(j, "workload");
    auto it = workload_ids.find(file_id);
    if (it == workload_ids.end()) {
      throw BadLine(fmt::format("no readable workload with id {}", file_id));
    }
    TuningRecord r;
    r.workload = it->second;
    r.target = CanonicalTarget(j.at("target").get<std::string>());
    std::string status = j.at("status").get<std::string>();
    std::optional<RecordStatus> parsed = ParseRecordStatus(status);
    if (!parsed) throw BadLine(fmt::format("unknown status \"{}\"", status));
    r.status = *parsed;
    const json& run_secs = j.at("run_secs");
    if (!run_secs.is_array() || run_secs.size() > kMaxRunSamples) {
      throw BadLine(
          fmt::format("\"run_secs\" is not an array of at most {} numbers", kMaxRunSamples));
    }
    r.run_secs = run_secs.get<std::vector<double>>();
    if (j.contains("median_secs") && !j["median_secs"].is_null()) {
      r.median_secs = j["median_secs"].get<double>();
    }
    r.error = OptionalString(j, "error");
    r.device = OptionalString(j, "device");
    r.program_version = OptionalString(j, "program_version");
    r.created_at = j.value("created_at", 0.0);
    r.trace = j.at("trace");
    if (std::optional<std::string> problem = RecordProblem(r)) {
      throw BadLine(*problem);
    }
    AddLoadedRecord(r);
  }

  std::string path_;
  /// The file does not end with a newline (an interrupted write): the next append adds one.
  int lock_fd_ = -1;
  // The file's size as this object knows it: what it read plus what it appended.
  int64_t expected_size_ = 0;
  bool needs_newline_ = false;
};

}  // namespace
}  // namespace database_internal

std::unique_ptr<Database> OpenJsonlDatabase(const std::string& path, const OpenOptions& options) {
  return std::make_unique<database_internal::JsonlDatabase>(path, options);
}

}  // namespace tirtune
