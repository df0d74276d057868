// `tirtune ir check FILE.tir`: parse a text IR file, verify each function, print it back.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "file_text.h"
#include "tirtune/ir/parser.h"
#include "tirtune/ir/printer.h"
#include "tirtune/ir/structural_equal.h"
#include "tirtune/ir/verify.h"

namespace tirtune::cli {
namespace {

struct CheckOptions {
  std::string file;
};

void RunCheck(const CheckOptions& opts, const GlobalOptions& global) {
  std::string text = ReadTextFile(opts.file);
  std::vector<PrimFunc> funcs = ParsePrimFuncs(text, opts.file);
  nlohmann::json out = nlohmann::json::array();
  size_t problems = 0;
  for (const PrimFunc& f : funcs) {
    std::vector<std::string> errors = VerifyWellFormed(f);
    problems += errors.size();
    if (global.json) {
      out.push_back({{"name", f->name},
                     {"hash", StructuralHashHex(f)},
                     {"well_formed", errors.empty()},
                     {"errors", errors},
                     {"text", Print(f)}});
      continue;
    }
    fmt::print("{}", Print(f));
    for (const std::string& e : errors) fmt::print(stderr, "{}: {}: {}\n", opts.file, f->name, e);
  }
  if (global.json) fmt::print("{}\n", out.dump(2));
  if (problems > 0) {
    TT_USER_ERROR("{}: {} well-formedness problem{} found", opts.file, problems,
                  problems == 1 ? "" : "s");
  }
}

}  // namespace

void AddIrCommand(CLI::App& app, const GlobalOptions& global) {
  CLI::App* ir = app.add_subcommand("ir", "work with text IR files");
  ir->require_subcommand(1);
  auto opts = std::make_shared<CheckOptions>();
  CLI::App* check = ir->add_subcommand("check", "parse, verify and print a .tir file");
  check->add_option("file", opts->file, "the .tir file")->required();
  check->callback([opts, &global] { RunCheck(*opts, global); });
}

}  // namespace tirtune::cli
