// Trace: JSON form, replay with changed decisions, simplification, text, and bad documents.
#include "gemm_text.h"
#include "schedule_check.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;
using json = nlohmann::json;

// Tiles the i loop with a sampled 2-way tile and parallelizes the outer part.
Schedule TiledGemm(const PrimFunc& f, uint64_t seed) {
  Schedule sch(f, seed);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  auto tiles = sch.SamplePerfectTile(loops[0], 2, 0);
  auto parts = sch.Split(loops[0], {tiles[0], tiles[1]});
  sch.Parallel(parts[0]);
  return sch;
}

TEST(Trace, JsonNamesRandomVariablesInOrderOfDefinition) {
  Schedule sch = TiledGemm(ParseFunc(kGemm), 1);
  json j = sch.trace().ToJson();
  EXPECT_EQ(j["format"], "tirtune-trace");
  EXPECT_EQ(j["version"], 1);
  ASSERT_EQ(j["insts"].size(), 5u);
  EXPECT_EQ(j["insts"][0]["kind"], "GetBlock");
  EXPECT_EQ(j["insts"][0]["outputs"], json({"b0"}));
  EXPECT_EQ(j["insts"][1]["inputs"], json({"b0"}));
  EXPECT_EQ(j["insts"][1]["outputs"], json({"l1", "l2", "l3"}));
  EXPECT_EQ(j["insts"][2]["outputs"], json({"e4", "e5"}));
  EXPECT_EQ(j["insts"][3]["inputs"], json({"l1", "e4", "e5"}));
  EXPECT_TRUE(j["insts"][2].contains("decision"));
}

TEST(Trace, ReplayWithChangedDecisionMutatesTheTiling) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch = TiledGemm(f, 1);
  Trace mutated = sch.trace().WithDecision(2, json({4, 4}));
  Schedule replay(f);
  mutated.ApplyTo(replay);
  auto loops = replay.GetLoops(replay.GetBlock("C"));
  EXPECT_TRUE(IsConstInt(replay.Get(loops[0])->extent, 4));
  EXPECT_TRUE(IsConstInt(replay.Get(loops[1])->extent, 4));
  EXPECT_EQ(replay.Get(loops[0])->for_kind, ForKind::kParallel);
  ExpectSameNumbers(f, replay.func());
}

TEST(Trace, SimplifiedDropsUnusedPureInstructions) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV block = sch.GetBlock("C");
  auto loops = sch.GetLoops(block);
  sch.SampleCategorical({1, 2}, {0.5, 0.5});  // unused
  sch.GetLoops(block);                         // unused
  sch.Unroll(loops[2]);
  Trace simple = sch.trace().Simplified(/*remove_postproc=*/false);
  ASSERT_EQ(simple.insts().size(), 3u);
  EXPECT_EQ(simple.insts()[2].kind->name, "Unroll");
  Schedule replay(f);
  simple.ApplyTo(replay);
  EXPECT_TRUE(StructuralEqual(replay.func(), sch.func()));
}

TEST(Trace, RemovePostprocStopsAtTheMarker) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.EnterPostproc();
  sch.Parallel(loops[0]);
  Schedule replay(f);
  sch.trace().ApplyTo(replay, {}, /*remove_postproc=*/true);
  EXPECT_TRUE(StructuralEqual(replay.func(), f));
}

TEST(Trace, TextShowsCallsAndDecisions) {
  Schedule sch = TiledGemm(ParseFunc(kGemm), 1);
  std::string text = sch.trace().ToText();
  EXPECT_NE(text.find("b0 = GetBlock(name=\"C\")"), std::string::npos) << text;
  EXPECT_NE(text.find("l1, l2, l3 = GetLoops(b0)"), std::string::npos) << text;
  EXPECT_NE(text.find("# decision: ["), std::string::npos) << text;
  EXPECT_NE(text.find("Parallel(l6)"), std::string::npos) << text;
}

void ExpectFormatError(const json& doc, const std::string& text) {
  try {
    Trace::FromJson(doc);
    ADD_FAILURE() << "expected TraceFormatError for " << doc.dump();
  } catch (const TraceFormatError& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(Trace, RejectsMalformedDocuments) {
  ExpectFormatError(json::array(), "not a trace");
  ExpectFormatError({{"format", "tirtune-trace"}, {"version", 99}, {"insts", json::array()}},
                    "version 99 is not supported");
  json base = {{"format", "tirtune-trace"}, {"version", 1}};
  base["insts"] = {{{"kind", "Teleport"}, {"v", 1}}};
  ExpectFormatError(base, "unknown instruction kind");
  base["insts"] = {{{"kind", "GetLoops"}, {"v", 1}, {"inputs", {"b7"}}, {"outputs", {"l0"}}}};
  ExpectFormatError(base, "refers to 'b7'");
  base["insts"] = {{{"kind", "GetBlock"}, {"v", 5}, {"attrs", {{"name", "C"}}}}};
  ExpectFormatError(base, "version 5 is not supported");
  base["insts"] = {{{"kind", "GetBlock"}, {"v", 1}, {"outputs", {"x0"}}}};
  ExpectFormatError(base, "not a name like b0");
  base["insts"] = {{{"kind", "Split"}, {"v", 1}, {"inputs", {1.5}}}};
  ExpectFormatError(base, "inputs are names, integers or null");
}

TEST(Trace, ReplayOfMalformedAttrsIsAFormatError) {
  json doc = {{"format", "tirtune-trace"}, {"version", 1}};
  doc["insts"] = {{{"kind", "GetBlock"}, {"v", 1}, {"attrs", {{"name", 3}}}, {"outputs", {"b0"}}}};
  Trace trace = Trace::FromJson(doc);
  Schedule sch(ParseFunc(kGemm));
  EXPECT_THROW(trace.ApplyTo(sch), TraceFormatError);
}

// Mistakes in a trace's instructions are the user's, named with the instruction: inputs of the
// wrong kind or missing, a split with one factor, absurd or overflowing split factors, a tiling
// into 0 parts, an unknown storage scope, and a decision whose product overflows to the extent
// (2^62 + 1 times 128 is 128 modulo 2^64).
TEST(Trace, InstructionMistakesAreUserErrorsNamingTheInstruction) {
  auto doc = [](json insts) {
    json d = {{"format", "tirtune-trace"}, {"version", 1}};
    json all = {
        {{"kind", "GetBlock"}, {"v", 1}, {"attrs", {{"name", "C"}}}, {"outputs", {"b0"}}},
        {{"kind", "GetLoops"}, {"v", 1}, {"inputs", {"b0"}}, {"outputs", {"l1", "l2", "l3"}}}};
    for (const json& i : insts) all.push_back(i);
    d["insts"] = all;
    return d;
  };
  struct Case {
    json insts;
    std::string message;
  };
  std::vector<Case> cases = {
      {{{{"kind", "GetLoops"}, {"v", 1}, {"inputs", {"l1"}}, {"outputs", {"l4"}}}},
       "trace instruction 2 (GetLoops): input 0 is not a block"},
      {{{{"kind", "GetLoops"}, {"v", 1}, {"inputs", json::array()}, {"outputs", {"l4"}}}},
       "trace instruction 2 (GetLoops): it has 0 input(s), input 0 is missing"},
      {{{{"kind", "Split"},
         {"v", 1},
         {"inputs", {"l1", "l2", nullptr}},
         {"outputs", {"l4", "l5"}}}},
       "trace instruction 2 (Split): split factor 1 is not an expression"},
      {{{{"kind", "Split"}, {"v", 1}, {"inputs", {"l1", 64}}, {"outputs", {"l4"}}}},
       "InvalidSplitError"},
      // 2^40 iterations for 128 elements; factors whose product wraps around 64 bits.
      {{{{"kind", "Split"},
         {"v", 1},
         {"inputs", {"l1", 1, int64_t{1} << 40}},
         {"outputs", {"l4", "l5"}}}},
       "more than the extent and than 65536"},
      {{{{"kind", "Split"},
         {"v", 1},
         {"inputs", {"l1", int64_t{1} << 62, 8}},
         {"outputs", {"l4", "l5"}}}},
       "the product of its factors overflows 64 bits"},
      {{{{"kind", "SamplePerfectTile"},
         {"v", 1},
         {"inputs", {"l1"}},
         {"attrs", {{"n", 0}, {"max_innermost_factor", 16}}},
         {"outputs", json::array()}}},
       "InvalidTileCountError"},
      {{{{"kind", "SamplePerfectTile"},
         {"v", 1},
         {"inputs", {"l1"}},
         {"attrs", {{"n", 2}, {"max_innermost_factor", 0}}},
         {"outputs", {"e4", "e5"}},
         {"decision", {int64_t{4611686018427387905}, 128}}}},
       "trace instruction 2 (SamplePerfectTile): the decision's parts multiply to more than any "
       "loop's extent"},
      // Refused when read, so that a database row holding it is skipped before any replay.
      {{{{"kind", "SamplePerfectTile"},
         {"v", 1},
         {"inputs", {"l1"}},
         {"attrs", {{"n", 2}, {"max_innermost_factor", 0}}},
         {"outputs", {"e4", "e5"}},
         {"decision", {4, 0}}}},
       "the decision has a part 0"},
      {{{{"kind", "SamplePerfectTile"},
         {"v", 1},
         {"inputs", {"l1"}},
         {"attrs", {{"n", 3}, {"max_innermost_factor", 0}}},
         {"outputs", {"e4", "e5", "e6"}},
         {"decision", {4, 32}}}},
       "the decision has 2 parts where attribute \"n\" asks for 3"},
      {{{{"kind", "SampleCategorical"},
         {"v", 1},
         {"attrs", {{"candidates", {0, 16}}, {"probs", {0.5, 0.5}}}},
         {"decision", 2},
         {"outputs", {"e4"}}}},
       "trace instruction 2 (SampleCategorical): the decision = 2 is out of range"},
      {{{{"kind", "CacheRead"},
         {"v", 1},
         {"inputs", {"b0"}},
         {"attrs", {{"read_index", 0}, {"scope", "texture"}}},
         {"outputs", {"b4"}}}},
       "trace instruction 2 (CacheRead): unknown storage scope \"texture\""},
      // Found by the trace fuzzer (scripts/fuzz.sh trace): a fuse of nothing was an internal
      // error.
      {{{{"kind", "Fuse"}, {"v", 1}, {"inputs", json::array()}, {"outputs", {"l4"}}}},
       "trace instruction 2 (Fuse): it fuses no loops"},
      // A float where an integer belongs (4.6e20 tiles: converting it to int was undefined
      // behaviour, another fuzzer finding).
      {{{{"kind", "SamplePerfectTile"},
         {"v", 1},
         {"inputs", {"l1"}},
         {"attrs", {{"n", 4.6e20}, {"max_innermost_factor", 16}}},
         {"outputs", {"e4", "e5"}}}},
       "trace instruction 2 (SamplePerfectTile): attribute \"n\" is not an integer"},
      {{{{"kind", "SamplePerfectTile"},
         {"v", 1},
         {"inputs", {"l1"}},
         {"attrs", {{"n", 2}, {"max_innermost_factor", 16}}},
         {"outputs", {"e4", "e5"}},
         {"decision", {1.5, 2}}}},
       "the decision element is not an integer"},
      // A loop listed twice. (reorder's other fuzzer finding, a block among a loop's ancestors
      // cast to a loop, shows only under UBSan: its input is in tests/fuzz/corpus/trace.)
      {{{{"kind", "Reorder"},
         {"v", 1},
         {"inputs", {"l3", "l1", "l1"}},
         {"outputs", json::array()}}},
       "reorder lists loop 'i' twice"},
      // An expression named as a block, then used as one (the 1-hour trace fuzz run's finding:
      // an internal error in Unannotate).
      {{{{"kind", "SampleCategorical"},
         {"v", 1},
         {"attrs", {{"candidates", {0, 16}}, {"probs", {0.5, 0.5}}}},
         {"decision", 1},
         {"outputs", {"b4"}}},
        {{"kind", "Unannotate"}, {"v", 1}, {"inputs", {"b4"}}, {"attrs", {{"key", "k"}}}}},
       "trace instruction 2 (SampleCategorical): output 0 is an expression (e...), the trace "
       "names it as a block (b...)"},
  };
  // Fields of the wrong JSON type: a located refusal, not the JSON library's own error (the
  // trace fuzzer's second finding: "format" given as an array).
  for (const json& bad :
       {json{{"format", json::array()}, {"version", 1}, {"insts", json::array()}},
        json{{"format", "tirtune-trace"}, {"version", "1"}},
        json{{"format", "tirtune-trace"}, {"version", 1}, {"insts", {{{"kind", 3}}}}}}) {
    try {
      Trace::FromJson(bad);
      ADD_FAILURE() << "read " << bad.dump();
    } catch (const TraceFormatError& e) {
      EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();
    }
  }
  PrimFunc gemm = MakeWorkload("gemm:128,128,128").func;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    Schedule sch(gemm);
    try {
      Trace::FromJson(doc(c.insts)).ApplyTo(sch);
      ADD_FAILURE() << "replayed";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    } catch (const ScheduleError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tirtune
