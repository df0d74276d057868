// `tirtune db list | best | show | export | import | prune --db FILE`: inspecting and moving
// tuning databases (any backend OpenDatabase knows: .db/.sqlite, .jsonl, postgresql://).
#include <fmt/chrono.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "tirtune/codegen/target.h"
#include "tirtune/database/database.h"
#include "tirtune/database/record_json.h"
#include "tirtune/database/transfer.h"
#include "tirtune/schedule/trace.h"
#include "tirtune/search/tune.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

std::unique_ptr<Database> OpenExisting(const std::string& path) {
  OpenOptions options;
  options.create_if_missing = false;
  return OpenDatabase(path, options);
}

std::string FormatSeconds(std::optional<double> secs) {
  if (!secs) return "-";
  double s = *secs;
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} us", s * 1e6);
}

std::string FormatTime(double unix_seconds) {
  if (!(unix_seconds >= 0 && unix_seconds < 1e11)) return "?";
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", fmt::gmtime(t));
}

ordered_json WorkloadJson(const WorkloadEntry& w) {
  return ordered_json{
      {"id", w.id}, {"shash", w.shash}, {"name", w.name}, {"created_at", w.created_at}};
}

/// The workload a user named: an id, a hash (or a prefix of at least 4 hex digits that only one
/// workload has), or a workload spec such as "gemm:256,256,256".
WorkloadEntry ResolveWorkload(Database& db, const std::string& selector) {
  if (selector.find(':') != std::string::npos) {
    std::optional<WorkloadEntry> found = db.FindWorkload(MakeWorkload(selector).func);
    if (!found) TT_USER_ERROR("{} holds no workload {}", db.Describe(), selector);
    return *found;
  }
  std::vector<WorkloadEntry> all = db.Workloads();
  bool numeric = !selector.empty() && selector.size() <= 9 &&
                 std::all_of(selector.begin(), selector.end(), ::isdigit);
  if (numeric) {
    WorkloadId id = std::stoll(selector);
    for (const WorkloadEntry& w : all) {
      if (w.id == id) return w;
    }
  }
  std::vector<const WorkloadEntry*> matches;
  if (selector.size() >= 4) {
    for (const WorkloadEntry& w : all) {
      if (w.shash.rfind(selector, 0) == 0) matches.push_back(&w);
    }
  }
  if (matches.size() == 1) return *matches[0];
  if (matches.size() > 1) {
    TT_USER_ERROR("'{}' matches {} workloads; give more of the hash or the id", selector,
                  matches.size());
  }
  TT_USER_ERROR(
      "{} has no workload '{}' (give an id, a hash or a spec like gemm:64,64,64; see "
      "`tirtune db list`)",
      db.Describe(), selector);
}

void PrintRecordLine(size_t rank, const TuningRecord& r) {
  std::string detail = r.status == RecordStatus::kOk ? r.device : r.error;
  std::replace(detail.begin(), detail.end(), '\n', ' ');
  if (detail.size() > 60) detail = detail.substr(0, 57) + "...";
  fmt::print("  {:>4}  {:<13} {:>12}  {:>7}  {}  {}\n", rank, RecordStatusName(r.status),
             FormatSeconds(r.median_secs), r.run_secs.size(), FormatTime(r.created_at), detail);
}

void PrintRecordHeader() {
  fmt::print("  {:>4}  {:<13} {:>12}  {:>7}  {:<19}  {}\n", "#", "status", "median", "samples",
             "measured (UTC)", "device / error");
}

// ---- list

struct DbOptions {
  std::string db;
};

void RunList(const DbOptions& opts, const GlobalOptions& global) {
  std::unique_ptr<Database> db = OpenExisting(opts.db);
  std::vector<WorkloadEntry> workloads = db->Workloads();
  std::map<WorkloadId, std::vector<RecordGroupStats>> stats;
  for (RecordGroupStats& s : db->Stats()) {
    // The counts come from the storage; the best is read like any record (a row that cannot
    // be used, however fast it claims to be, is skipped with a warning).
    s.best_median_secs.reset();
    try {
      std::vector<TuningRecord> top = db->TopK(s.workload, s.target, 1);
      if (!top.empty()) s.best_median_secs = top[0].median_secs;
    } catch (const UserError&) {
      // a damaged target key: the counts still show, the best as "-"
    }
    stats[s.workload].push_back(std::move(s));
  }
  if (global.json) {
    ordered_json out = ordered_json::array();
    for (const WorkloadEntry& w : workloads) {
      ordered_json targets = ordered_json::array();
      for (const RecordGroupStats& s : stats[w.id]) {
        targets.push_back(
            {{"target", s.target},
             {"records", s.num_records},
             {"ok", s.num_ok},
             {"best_median_secs",
              s.best_median_secs ? ordered_json(*s.best_median_secs) : ordered_json(nullptr)}});
      }
      ordered_json j = WorkloadJson(w);
      j["targets"] = targets;
      out.push_back(std::move(j));
    }
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("{}: {} workloads, {} records\n", db->Describe(), workloads.size(), db->Size());
  for (const WorkloadEntry& w : workloads) {
    fmt::print("{:>4}  {}  {}\n", w.id, w.shash, w.name);
    for (const RecordGroupStats& s : stats[w.id]) {
      fmt::print("        {:>6} records {:>6} ok  best {:>12}  {}\n", s.num_records, s.num_ok,
                 FormatSeconds(s.best_median_secs), s.target);
    }
  }
}

// ---- best

struct BestOptions {
  std::string db;
  std::string workload;
  std::string target;
  size_t k = 1;
};

void RunBest(const BestOptions& opts, const GlobalOptions& global) {
  std::unique_ptr<Database> db = OpenExisting(opts.db);
  std::vector<WorkloadEntry> workloads;
  if (opts.workload.empty()) {
    workloads = db->Workloads();
  } else {
    workloads.push_back(ResolveWorkload(*db, opts.workload));
  }
  // A target the way records store it: "llvm -num-cores=2" means the host CPU, as in `tune`.
  std::string wanted;
  if (!opts.target.empty()) {
    try {
      wanted = Target::Parse(opts.target).str();
    } catch (const UserError&) {
      wanted = CanonicalTarget(opts.target);  // a target of another machine, matched as written
    }
  }
  std::map<WorkloadId, std::vector<std::string>> targets;
  for (const RecordGroupStats& s : db->Stats()) {
    if (wanted.empty() || s.target == wanted) {
      targets[s.workload].push_back(s.target);
    }
  }
  ordered_json out = ordered_json::array();
  for (const WorkloadEntry& w : workloads) {
    for (const std::string& target : targets[w.id]) {
      std::vector<TuningRecord> top = db->TopK(w.id, target, opts.k);
      if (top.empty()) continue;
      // The record `compile --offload measured` (the default) runs: the best, or a library's
      // that the best does not beat by 3% (KeptRecord, LibraryKept).
      TuningRecord runs = KeptRecord(*db, w.id, target).value_or(top[0]);
      if (global.json) {
        ordered_json records = ordered_json::array();
        for (const TuningRecord& r : top) records.push_back(RecordToJson(r));
        out.push_back({{"workload", WorkloadJson(w)},
                       {"target", target},
                       {"records", records},
                       {"runs", RecordToJson(runs)}});
        continue;
      }
      fmt::print("{:>4}  {}  {}  on \"{}\"\n", w.id, w.shash, w.name, target);
      PrintRecordHeader();
      for (size_t i = 0; i < top.size(); ++i) PrintRecordLine(i + 1, top[i]);
      if (runs.trace != top[0].trace) {
        fmt::print("      compile (--offload measured) runs the library's record ({}): {}\n",
                   FormatSeconds(runs.median_secs), LibraryKeptWhy(runs, top[0]));
      }
    }
  }
  if (global.json) fmt::print("{}\n", out.dump(2));
}

// ---- show

struct ShowOptions {
  std::string db;
  std::string workload;
  bool traces = false;
};

void RunShow(const ShowOptions& opts, const GlobalOptions& global) {
  std::unique_ptr<Database> db = OpenExisting(opts.db);
  WorkloadEntry w = ResolveWorkload(*db, opts.workload);
  std::vector<TuningRecord> records = db->RecordsOf(w.id);
  if (global.json) {
    ordered_json j = WorkloadJson(w);
    j["ir"] = w.text;
    ordered_json rs = ordered_json::array();
    for (const TuningRecord& r : records) rs.push_back(RecordToJson(r));
    fmt::print("{}\n", ordered_json{{"workload", j}, {"records", rs}}.dump(2));
    return;
  }
  fmt::print("# workload {}  {}  {}\n{}\n", w.id, w.shash, w.name, w.text);
  std::map<std::string, std::vector<const TuningRecord*>> by_target;
  for (const TuningRecord& r : records) by_target[r.target].push_back(&r);
  for (auto& [target, rs] : by_target) {
    std::stable_sort(rs.begin(), rs.end(), [](const TuningRecord* a, const TuningRecord* b) {
      bool a_ok = a->status == RecordStatus::kOk, b_ok = b->status == RecordStatus::kOk;
      if (a_ok != b_ok) return a_ok;
      return a_ok && *a->median_secs < *b->median_secs;
    });
    fmt::print("target \"{}\": {} records\n", target, rs.size());
    PrintRecordHeader();
    for (size_t i = 0; i < rs.size(); ++i) {
      PrintRecordLine(i + 1, *rs[i]);
      if (opts.traces) {
        std::string text = Trace::FromJson(rs[i]->trace).ToText();
        for (std::string_view rest = text; !rest.empty();) {
          size_t nl = rest.find('\n');
          fmt::print("          {}\n", rest.substr(0, nl));
          rest = nl == std::string_view::npos ? "" : rest.substr(nl + 1);
        }
      }
    }
  }
}

// ---- export / import

struct ExportOptions {
  std::string db;
  std::string output;
  bool force = false;
};

// `path` with `tag` before its extension: "runs/t.jsonl" -> "runs/t.TAG.jsonl", so that the
// backend chosen by the extension stays the same.
std::string WithTag(const std::string& path, const std::string& tag) {
  std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + "." + tag + p.extension().string())).string();
}

void RunExport(const ExportOptions& opts, const GlobalOptions& global) {
  std::unique_ptr<Database> db = OpenExisting(opts.db);
  std::error_code ec;
  // A file is written under a temporary name and renamed over the output only once the export
  // is complete: a failing export (a damaged database, a full disk) leaves an existing file
  // whole. A PostgreSQL database is written in place, one transaction per batch.
  const bool file = opts.output != ":memory:" && opts.output.rfind("postgresql://", 0) != 0 &&
                    opts.output.rfind("postgres://", 0) != 0;
  if (file && std::filesystem::exists(opts.output, ec)) {
    if (!opts.force) TT_USER_ERROR("'{}' exists; use --force to replace it", opts.output);
    if (std::filesystem::equivalent(opts.output, opts.db, ec)) {
      TT_USER_ERROR("'{}' is the database itself", opts.output);
    }
  }
  const std::string written =
      file ? WithTag(opts.output, fmt::format("partial-{}", getpid())) : opts.output;
  struct RemoveOnFailure {
    std::string path;
    bool keep = false;
    ~RemoveOnFailure() {
      if (keep || path.empty()) return;
      std::error_code ignored;
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        std::filesystem::remove(path + suffix, ignored);
      }
    }
  } partial{file ? written : std::string()};
  std::unique_ptr<Database> out = OpenDatabase(written);
  CopyStats stats = CopyDatabase(*db, *out);
  std::string described = out->Describe();
  out.reset();  // closes (and for SQLite checkpoints) the file before it is renamed
  if (file) {
    std::filesystem::rename(written, opts.output, ec);
    if (ec) TT_USER_ERROR("cannot move the export to '{}': {}", opts.output, ec.message());
    partial.keep = true;
    described = opts.output;
  }
  if (global.json) {
    fmt::print("{}\n", ordered_json{{"file", opts.output},
                                    {"workloads", stats.workloads},
                                    {"records", stats.records_new}}
                           .dump(2));
    return;
  }
  fmt::print("exported {} workloads and {} records to {}\n", stats.workloads, stats.records_new,
             described);
}

struct ImportOptions {
  std::string db;
  std::string input;
};

void RunImport(const ImportOptions& opts, const GlobalOptions& global) {
  std::unique_ptr<Database> in = OpenExisting(opts.input);
  std::unique_ptr<Database> db = OpenDatabase(opts.db);
  CopyStats stats = CopyDatabase(*in, *db);
  if (global.json) {
    fmt::print("{}\n", ordered_json{{"workloads", stats.workloads},
                                    {"records_read", stats.records_read},
                                    {"records_new", stats.records_new}}
                           .dump(2));
    return;
  }
  fmt::print("imported {} of {} records ({} already present) and {} workloads into {}\n",
             stats.records_new, stats.records_read, stats.records_read - stats.records_new,
             stats.workloads, db->Describe());
}

// ---- prune

struct PruneOptions {
  std::string db;
  size_t keep = 1;
};

void RunPrune(const PruneOptions& opts, const GlobalOptions& global) {
  std::unique_ptr<Database> db = OpenExisting(opts.db);
  // A library's records stay too: `compile` runs one in place of a tuned record not 3% faster
  // (KeptRecord), and `tune` would measure the library again without them.
  size_t removed = db->Prune(opts.keep, [](const TuningRecord& r) { return Offloads(r); });
  size_t left = db->Size();
  if (global.json) {
    fmt::print("{}\n", ordered_json{{"removed", removed}, {"left", left}}.dump(2));
    return;
  }
  fmt::print(
      "removed {} records; {} left ({} best per workload and target, and the library's records)\n",
      removed, left, opts.keep);
}

// ---- check

struct CheckOptions {
  std::string db;
};

// The storage's own check, then every record read once: a row that cannot be used (a trace
// that is not a trace, absurd numbers) is a problem too, listed with the warning that readers
// skip it with. Exit 1 when anything is found: a script can refuse to tune into a damaged file.
void RunCheck(const CheckOptions& opts, const GlobalOptions& global) {
  std::vector<std::string> unreadable;
  OpenOptions options;
  options.create_if_missing = false;
  options.on_warning = [&unreadable](const std::string& w) { unreadable.push_back(w); };
  std::unique_ptr<Database> db = OpenDatabase(opts.db, options);
  std::vector<std::string> problems = db->CheckIntegrity();
  if (problems.empty()) db->ForEachRecord([](const TuningRecord&) {});
  problems.insert(problems.end(), unreadable.begin(), unreadable.end());
  if (global.json) {
    fmt::print(
        "{}\n",
        ordered_json{{"database", db->Describe()}, {"ok", problems.empty()}, {"problems", problems}}
            .dump(2));
  } else if (problems.empty()) {
    fmt::print("{}: no problem found ({} records)\n", db->Describe(), db->Size());
  } else {
    fmt::print("{}: {} problem(s) found:\n", db->Describe(), problems.size());
    for (const std::string& p : problems) fmt::print("  {}\n", p);
  }
  if (!problems.empty()) {
    TT_USER_ERROR("{} is damaged or holds unusable records; `tirtune db export` copies out "
                  "what still reads",
                  db->Describe());
  }
}

CLI::Option* AddDbOption(CLI::App* cmd, std::string& db) {
  return cmd
      ->add_option("--db", db, "the database (.db/.sqlite, .jsonl, postgresql://user@host:port/db)")
      ->required();
}

}  // namespace

void AddDbCommand(CLI::App& app, const GlobalOptions& global) {
  CLI::App* db = app.add_subcommand("db", "inspect, export, import and prune tuning databases");
  db->require_subcommand(1);

  auto list = std::make_shared<DbOptions>();
  CLI::App* list_cmd = db->add_subcommand("list", "workloads with record counts per target");
  AddDbOption(list_cmd, list->db);
  list_cmd->callback([list, &global] { RunList(*list, global); });

  auto best = std::make_shared<BestOptions>();
  CLI::App* best_cmd = db->add_subcommand(
      "best",
      "the best valid records per workload and target, and the one compile runs (a library's "
      "where the best tuned one is not 3% faster)");
  AddDbOption(best_cmd, best->db);
  best_cmd->add_option("--workload,-w", best->workload, "an id, a hash (prefix) or a spec");
  best_cmd->add_option("--target,-t", best->target, "only this target");
  best_cmd->add_option("-k", best->k, "how many per workload and target (default 1)")
      ->check(CLI::PositiveNumber);
  best_cmd->callback([best, &global] { RunBest(*best, global); });

  auto show = std::make_shared<ShowOptions>();
  CLI::App* show_cmd = db->add_subcommand("show", "one workload's IR and all its records");
  AddDbOption(show_cmd, show->db);
  show_cmd->add_option("workload", show->workload, "an id, a hash (prefix) or a spec")->required();
  show_cmd->add_flag("--traces", show->traces, "print each record's trace");
  show_cmd->callback([show, &global] { RunShow(*show, global); });

  auto exp = std::make_shared<ExportOptions>();
  CLI::App* export_cmd = db->add_subcommand("export", "write everything to a JSON-lines file");
  AddDbOption(export_cmd, exp->db);
  export_cmd
      ->add_option("-o,--output", exp->output, "where to write: a .jsonl file (or any database)")
      ->required();
  export_cmd->add_flag("--force", exp->force, "replace an existing output file");
  export_cmd->callback([exp, &global] { RunExport(*exp, global); });

  auto imp = std::make_shared<ImportOptions>();
  CLI::App* import_cmd =
      db->add_subcommand("import", "add another database's records (duplicates are skipped)");
  AddDbOption(import_cmd, imp->db);
  import_cmd->add_option("input", imp->input, "the database to read (.jsonl, .db, ...)")
      ->required();
  import_cmd->callback([imp, &global] { RunImport(*imp, global); });

  auto prune = std::make_shared<PruneOptions>();
  CLI::App* prune_cmd =
      db->add_subcommand("prune",
                         "keep only the best valid records of each workload and target, and the "
                         "library's (compile may run one in place of the best)");
  AddDbOption(prune_cmd, prune->db);
  prune_cmd->add_option("--keep", prune->keep,
                        "records to keep per workload and target (default 1)");
  prune_cmd->callback([prune, &global] { RunPrune(*prune, global); });

  auto check = std::make_shared<CheckOptions>();
  CLI::App* check_cmd =
      db->add_subcommand("check", "the storage's own consistency check (SQLite: integrity_check)");
  AddDbOption(check_cmd, check->db);
  check_cmd->callback([check, &global] { RunCheck(*check, global); });
}

}  // namespace tirtune::cli
