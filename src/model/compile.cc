// CompileModel: the best record (or the default schedule) of every task, lowered, compiled to an
// object (a GpuProgram for a cuda target), and written with the graph and its weights as an
// artifact directory. The directory is built under a temporary name and swapped into place at
// the end, so that a compile that fails or is killed half-way leaves the previous artifact whole.
#include "tirtune/model/compile.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tirtune/codegen/build.h"
#include "tirtune/codegen/cuda.h"
#include "tirtune/graph/validate.h"
#include "tirtune/ir/packed_layout.h"
#include "tirtune/ir/printer.h"
#include "tirtune/lower/lower.h"
#include "tirtune/lower/lower_gpu.h"
#include "tirtune/measure/gpu_program.h"
#include "tirtune/model/artifact.h"
#include "tirtune/offload/library.h"
#include "tirtune/search/default_schedule.h"
#include "tirtune/search/tune.h"
#include "tirtune/support/error.h"
#include "tirtune/support/sha256.h"

namespace tirtune::model {
namespace {

namespace fs = std::filesystem;

// The files of an artifact being written, and their SHA-256 for the manifest.
class ArtifactFiles {
 public:
  explicit ArtifactFiles(fs::path root) : root_(std::move(root)) {}
  void Write(const std::string& name, const std::string& bytes) {
    fs::path path = root_ / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) TT_USER_ERROR("cannot write '{}'", path.string());
    hashes_[name] = Sha256Hex(bytes);
  }
  const nlohmann::json& hashes() const { return hashes_; }

 private:
  fs::path root_;
  nlohmann::json hashes_ = nlohmann::json::object();
};

// Moves the finished `staging` directory to `dir`. An artifact already there is exchanged
// atomically (renameat2) and then removed; a directory that is not an artifact is never replaced.
void Publish(const fs::path& staging, const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir)) {
    fs::rename(staging, dir, ec);
    if (ec) TT_USER_ERROR("cannot move the artifact to '{}': {}", dir.string(), ec.message());
    return;
  }
  if (renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
    // A file system without atomic exchange: the old artifact steps aside for a moment.
    fs::path old = staging.string() + ".old";
    fs::rename(dir, old, ec);
    if (!ec) fs::rename(staging, dir, ec);
    if (ec) TT_USER_ERROR("cannot move the artifact to '{}': {}", dir.string(), ec.message());
    fs::remove_all(old, ec);
    return;
  }
  fs::remove_all(staging, ec);  // now the previous artifact
}

// A task's schedule built for the target: an object (CPU) or a GpuProgram (cuda: the kernels
// lowered, compiled by NVRTC and past the resource gates). Throws when it does not build.
struct BuiltTask {
  std::string bytes;
  std::string extension;  // of its file in kernels/
  /// Instead, with --offload measured: the record kept is the library's; its description.
  std::optional<std::string> library = std::nullopt;
  /// The parameters the kernel reads packed (Schedule::TransformLayout), by index.
  std::map<int, PackedLayout> packed = {};
};

BuiltTask BuildForTarget(const PrimFunc& scheduled, const std::string& name, const Target& target) {
  if (!target.is_cuda()) {
    return {EmitObject(Lower(scheduled).WithName(name), target), ".o", std::nullopt,
            PackedParams(scheduled)};
  }
  GpuModule module = LowerGpu(scheduled.WithName(name), target.gpu);
  return {GpuProgram::Of(module, CompileCudaGated(module, target)).Serialize(), ".gpu"};
}

// The first parameter of `packed` that some call of task `task` does not pass a constant to, or
// -1: a packed weight is packed once, at compile time.
int PackedNonConstant(const ModelTasks& model, int task,
                      const std::map<int, PackedLayout>& packed) {
  for (size_t c = 0; c < model.fused.calls().size(); ++c) {
    if (model.call_task[c] != task) continue;
    const graph::Call& call = model.fused.call(static_cast<int>(c));
    for (const auto& [index, layout] : packed) {
      if (index >= static_cast<int>(call.args.size()) ||
          model.fused.value(call.args[index]).kind != graph::ValueKind::kConstant) {
        return index;
      }
    }
  }
  return -1;
}

// The composite description of task `task` when a library runs every call of it (with
// `algorithm`, LibraryBackend::Algorithms, or its default), checked by building each call's
// kernel; nullopt (with the reason in `report`) when it does not.
std::optional<std::string> LibraryFunction(const ModelTasks& model, int task,
                                           const CompileModelOptions& options, CompiledTask* report,
                                           const std::string& algorithm = "") {
  if (options.offload == Offload::kNever) return std::nullopt;
  std::optional<std::string> description;
  for (size_t c = 0; c < model.fused.calls().size(); ++c) {
    if (model.call_task[c] != task) continue;
    const graph::Call& call = model.fused.call(static_cast<int>(c));
    if (!call.attrs.Has(graph::kCompositeAttr)) return std::nullopt;
    graph::Graph standalone = offload::StandaloneComposite(model.fused, call);
    if (!algorithm.empty()) standalone.mutable_call(0).attrs.Set(graph::kAlgorithmAttr, algorithm);
    const std::string backend = call.attrs.GetString(graph::kCodegenAttr);
    const offload::LibraryBackend* library = offload::FindBackend(backend);
    if (library == nullptr) TT_USER_ERROR("{}", offload::BackendUnavailable(backend));
    try {
      std::unique_ptr<offload::LibraryKernel> kernel =
          library->Build(standalone, standalone.call(0), {.threads = options.target.num_cores});
      if (!description) {
        report->library = kernel->Describe();
        description = offload::CompositeToJson(standalone);
      }
    } catch (const offload::LibraryDeclined& e) {
      report->offload_note = e.what();
      return std::nullopt;
    }
  }
  return description;
}

// A task built: its best record replayed (with --offload measured, a library record, also one kept
// over a tuned record not 3% faster: the library), or the default schedule.
BuiltTask BuildTask(const ModelTasks& model, int t, const CompileModelOptions& options,
                    CompiledTask* report) {
  const graph::Task& task = model.tasks[t];
  report->fallback_reason = "no database";
  if (options.db != nullptr) {
    // The best records in order: one that no longer replays or builds (an older program's
    // trace, a damaged row) gives way to the next, and the report says so.
    constexpr size_t kCompileCandidates = 8;
    std::optional<WorkloadEntry> entry = options.db->FindWorkload(task.func);
    std::vector<TuningRecord> best;
    std::string kept_note;
    if (entry) {
      const std::string target = CanonicalTarget(options.target.str());
      best = options.db->TopK(entry->id, target, kCompileCandidates);
      // The library's record first where the best tuned one does not beat it (LibraryKept).
      std::optional<TuningRecord> kept;
      if (options.offload == Offload::kMeasured && !best.empty() && !Offloads(best[0])) {
        kept = KeptRecord(*options.db, entry->id, target);
      }
      if (kept && kept->trace != best[0].trace) {
        kept_note = "the library's record: " + LibraryKeptWhy(*kept, best[0]);
        std::erase_if(best, [&](const TuningRecord& r) { return r.trace == kept->trace; });
        best.insert(best.begin(), std::move(*kept));
      }
    }
    std::string first_problem;
    for (size_t i = 0; i < best.size(); ++i) {
      std::string problem;
      std::optional<Schedule> sch = ReplayRecord(task.func, best[i].trace);
      if (sch && !OffloadedComposite(sch->func()).empty()) {
        // A library record: the library's kernel beat the tuned ones when it was measured.
        std::optional<std::string> library;
        if (options.offload == Offload::kMeasured) {
          library = LibraryFunction(model, t, options, report, OffloadedAlgorithm(sch->func()));
        }
        if (library) {
          report->best_seconds = best[i].median_secs;
          report->fallback_reason.clear();
          if (i == 0) report->note = kept_note;
          return BuiltTask{"", "", library};
        }
        problem = options.offload == Offload::kMeasured
                      ? fmt::format("is the library's, which cannot run it now ({})",
                                    report->offload_note.empty() ? "not a composite here"
                                                                 : report->offload_note)
                      : std::string("is the library's (compile with --offload measured)");
      } else if (sch && PackedNonConstant(model, t, PackedParams(sch->func())) >= 0) {
        problem = fmt::format("reads parameter {} packed, which is not a constant at every call",
                              PackedNonConstant(model, t, PackedParams(sch->func())));
      } else if (sch) {
        try {
          BuiltTask built = BuildForTarget(sch->func(), task.name, options.target);
          report->tuned = true;
          report->best_seconds = best[i].median_secs;
          report->fallback_reason.clear();
          if (i > 0) {
            report->note = fmt::format("used the record ranked {} of {}: the best {}", i + 1,
                                       best.size(), first_problem);
          }
          return built;
        } catch (const std::exception& e) {
          problem = fmt::format("does not build ({})", e.what());
        }
      } else {
        problem = "no longer replays";
      }
      if (first_problem.empty()) first_problem = problem;
    }
    if (!entry) {
      report->fallback_reason = "no workload in the database";
    } else if (best.empty()) {
      report->fallback_reason = "no record for the target";
    } else {
      report->fallback_reason = fmt::format("none of the {} best records is usable: the best {}",
                                            best.size(), first_problem);
    }
  }
  if (options.target.is_cuda()) {
    // No fallback past the default GPU schedule: an unbound kernel cannot run at all.
    try {
      return BuildForTarget(DefaultGpuSchedule(task.func, options.target).func(), task.name,
                            options.target);
    } catch (const UserError& e) {
      TT_USER_ERROR("function '{}': {}", task.name, e.what());
    }
  }
  try {
    return BuildForTarget(DefaultSchedule(task.func, options.target).func(), task.name,
                          options.target);
  } catch (const std::exception&) {
    // The default schedule is only a speed-up: the function as written always lowers.
    return BuildForTarget(task.func, task.name, options.target);
  }
}

std::string ValueKindName(graph::ValueKind kind) {
  switch (kind) {
    case graph::ValueKind::kInput:
      return "input";
    case graph::ValueKind::kConstant:
      return "constant";
    case graph::ValueKind::kCall:
      return "call";
  }
  return "?";
}

// graph.json and weights.bin of the fused graph. A constant that a kernel reads packed
// (`packed`, per task) is stored packed: in place when every use reads it in that one layout,
// else as another constant beside it; the value records its layout ("packed"), so that the
// reference graph can unpack it.
void WriteGraph(const ModelTasks& model, const std::vector<std::map<int, PackedLayout>>& packed,
                ArtifactFiles& files) {
  const graph::Graph& g = model.fused;
  // Step 1. Each use of a constant: its layout ("" unpacked).
  std::vector<std::vector<int>> args;
  std::map<int, std::map<std::string, int>> uses;  // value -> layout JSON -> count
  for (size_t c = 0; c < g.calls().size(); ++c) {
    const graph::Call& call = g.call(static_cast<int>(c));
    args.emplace_back(call.args.begin(), call.args.end());
    const std::map<int, PackedLayout>& p = packed[model.call_task[c]];
    for (size_t k = 0; k < call.args.size(); ++k) {
      if (g.value(call.args[k]).kind != graph::ValueKind::kConstant) continue;
      auto it = p.find(static_cast<int>(k));
      ++uses[call.args[k]][it == p.end() ? "" : it->second.ToJson()];
    }
  }
  for (int o : g.outputs()) {
    if (g.value(o).kind == graph::ValueKind::kConstant) ++uses[o][""];
  }
  // Step 2. The values: a constant used in one layout only is packed in place; otherwise each
  // other layout gets a value of its own, appended.
  nlohmann::json values = nlohmann::json::array();
  std::string weights;
  auto add_constant = [&](nlohmann::json j, const NDArray& data) {
    weights.resize((weights.size() + 63) / 64 * 64, '\0');
    j["offset"] = weights.size();
    j["nbytes"] = data.nbytes();
    weights.append(static_cast<const char*>(data.raw()), data.nbytes());
    values.push_back(std::move(j));
  };
  std::map<std::pair<int, std::string>, int> packed_value;  // (value, layout) -> value index
  for (size_t i = 0; i < g.values().size(); ++i) {
    const graph::Value& v = g.values()[i];
    nlohmann::json j = {{"name", v.name},
                        {"kind", ValueKindName(v.kind)},
                        {"dtype", v.type.dtype.str()},
                        {"shape", v.type.shape}};
    if (v.kind != graph::ValueKind::kConstant) {
      values.push_back(std::move(j));
      continue;
    }
    auto it = uses.find(static_cast<int>(i));
    if (it != uses.end() && it->second.size() == 1 && !it->second.begin()->first.empty()) {
      const std::string& text = it->second.begin()->first;
      PackedLayout layout = PackedLayout::FromJson(text, v.name);
      j["shape"] = layout.PackedShape();
      j["packed"] = nlohmann::json::parse(text);
      packed_value[{static_cast<int>(i), text}] = static_cast<int>(i);
      add_constant(std::move(j), layout.Pack(v.data));
    } else {
      add_constant(std::move(j), v.data);
    }
  }
  for (const auto& [value, layouts] : uses) {
    if (layouts.size() == 1) continue;
    for (const auto& [text, count] : layouts) {
      if (text.empty()) continue;
      const graph::Value& v = g.value(value);
      PackedLayout layout = PackedLayout::FromJson(text, v.name);
      packed_value[{value, text}] = static_cast<int>(values.size());
      add_constant({{"name", fmt::format("{}.packed{}", v.name, values.size())},
                    {"kind", "constant"},
                    {"dtype", v.type.dtype.str()},
                    {"shape", layout.PackedShape()},
                    {"packed", nlohmann::json::parse(text)}},
                   layout.Pack(v.data));
    }
  }
  // Step 3. The calls, reading the packed constants.
  nlohmann::json calls = nlohmann::json::array();
  for (int index : graph::TopologicalOrder(g)) {
    const graph::Call& call = g.call(index);
    const std::map<int, PackedLayout>& p = packed[model.call_task[index]];
    std::vector<int> call_args = args[index];
    for (const auto& [k, layout] : p) {
      if (k < static_cast<int>(call_args.size())) {
        call_args[k] = packed_value.at({call_args[k], layout.ToJson()});
      }
    }
    calls.push_back({{"function", model.call_task[index]},
                     {"args", call_args},
                     {"output", call.output},
                     {"op", call.op}});
  }
  nlohmann::json doc = {
      {"values", values}, {"calls", calls}, {"inputs", g.Inputs()}, {"outputs", g.outputs()}};
  files.Write("graph.json", doc.dump(1) + "\n");
  files.Write("weights.bin", weights);
}

}  // namespace

namespace {

// This host's name, for staging directories: a directory shared with other hosts (NFS) may hold
// another host's compile, whose process id means nothing here.
std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "host";
  std::string host(name);
  for (char& c : host) {
    if (c == '/' || c == '-') c = '_';
  }
  return host;
}

// What a compile killed with SIGKILL left beside `target_dir`: "NAME.partial-HOST-PID"
// directories of this host whose process is gone (a live one may be another compile writing
// now).
void RemoveAbandonedStaging(const fs::path& target_dir) {
  std::error_code ec;
  const std::string prefix = target_dir.filename().string() + ".partial-" + HostName() + "-";
  for (const fs::directory_entry& e : fs::directory_iterator(target_dir.parent_path(), ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos ||
        pid_text.size() > 9) {
      continue;
    }
    pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(e.path(), ignored);
    }
  }
}

}  // namespace

std::vector<CompiledTask> CompileModel(const ModelTasks& model, const std::string& dir,
                                       const CompileModelOptions& options) {
  fs::path target_dir = fs::absolute(fs::path(dir)).lexically_normal();
  if (target_dir.filename().empty()) target_dir = target_dir.parent_path();
  std::error_code ec;
  // An artifact (or what is left of one) is replaced; anything else is the user's and stays.
  bool artifact_like = fs::exists(target_dir / "manifest.json") ||
                       fs::exists(target_dir / "graph.json") || fs::exists(target_dir / "kernels");
  if (fs::exists(target_dir) &&
      (!fs::is_directory(target_dir) || (!fs::is_empty(target_dir) && !artifact_like))) {
    TT_USER_ERROR("'{}' exists and is not a compiled model; choose another output directory", dir);
  }
  fs::path root = target_dir.string() + fmt::format(".partial-{}-{}", HostName(), getpid());
  RemoveAbandonedStaging(target_dir);
  fs::remove_all(root, ec);
  fs::create_directories(root / "kernels", ec);
  if (ec)
    TT_USER_ERROR("cannot create the artifact directory '{}': {}", root.string(), ec.message());
  // Removes the half-written directory on a failure.
  struct Staging {
    fs::path path;
    bool published = false;
    ~Staging() {
      std::error_code ignored;
      if (!published) fs::remove_all(path, ignored);
    }
  } staging{root};
  ArtifactFiles files(root);

  std::vector<CompiledTask> report;
  nlohmann::json functions = nlohmann::json::array();
  std::vector<std::map<int, PackedLayout>> packed(model.tasks.size());
  for (size_t t = 0; t < model.tasks.size(); ++t) {
    const graph::Task& task = model.tasks[t];
    if (options.stop != nullptr && options.stop->load()) {
      throw Interrupted(fmt::format("compiling was interrupted; '{}' is as it was before", dir));
    }
    CompiledTask r;
    r.name = task.name;
    r.weight = task.weight;
    r.workload_key = task.workload_key;
    auto start = std::chrono::steady_clock::now();
    std::string ir_file = "kernels/" + task.name + ".tir";
    files.Write(ir_file, Print(task.func.WithName(task.name)));
    nlohmann::json f = {{"name", task.name},
                        {"ir", ir_file},
                        {"weight", task.weight},
                        {"workload_key", task.workload_key}};
    std::optional<std::string> library;
    if (options.offload == Offload::kAlways) {
      library = LibraryFunction(model, static_cast<int>(t), options, &r);
    }
    BuiltTask built;
    if (!library) {
      built = BuildTask(model, static_cast<int>(t), options, &r);
      library = built.library;
    }
    if (library) {
      f["library"] = nlohmann::json::parse(*library);
      f["tuned"] = false;
      if (r.best_seconds) f["best_seconds"] = *r.best_seconds;
    } else {
      packed[t] = built.packed;
      r.object_file = "kernels/" + task.name + built.extension;
      files.Write(r.object_file, built.bytes);
      f["object"] = r.object_file;
      f["tuned"] = r.tuned;
      if (r.best_seconds) f["best_seconds"] = *r.best_seconds;
      if (!r.tuned) f["fallback_reason"] = r.fallback_reason;
      if (!r.offload_note.empty()) f["offload_note"] = r.offload_note;
    }
    r.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    functions.push_back(std::move(f));
    report.push_back(std::move(r));
  }
  WriteGraph(model, packed, files);
  nlohmann::json manifest = {{"format", kArtifactFormat},      {"version", kArtifactVersion},
                             {"target", options.target.str()}, {"source", options.source},
                             {"graph", "graph.json"},          {"weights", "weights.bin"},
                             {"functions", functions},         {"files", files.hashes()}};
  // The manifest last: a directory without one is not an artifact.
  files.Write("manifest.json", manifest.dump(2) + "\n");
  Publish(root, target_dir);
  staging.published = true;
  return report;
}

}  // namespace tirtune::model
