// The detailed message of a ScheduleError: "Kind: explanation", then the function with each
// offending loop or block underlined by a `^` line that names the error kind.
#include <sstream>

#include "gemm_text.h"
#include "schedule_check.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;

// Runs `body`, which must throw a ScheduleError, and returns its detailed message.
template <typename Fn>
std::string DetailedMessageOf(const Schedule& sch, Fn&& body) {
  try {
    body();
  } catch (const ScheduleError& e) {
    return e.DetailedMessage(sch.func());
  }
  ADD_FAILURE() << "expected a ScheduleError";
  return "";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines of `message` that are followed by a mark line for `kind`: the marked headers.
std::vector<std::string> MarkedLines(const std::string& message, const std::string& kind) {
  std::vector<std::string> lines = Lines(message);
  std::vector<std::string> marked;
  for (size_t k = 1; k < lines.size(); ++k) {
    size_t caret = lines[k].find('^');
    if (caret == std::string::npos || lines[k].find_first_not_of(' ') != caret) continue;
    const std::string& header = lines[k - 1];
    // The carets sit exactly under the header's text and are followed by the kind.
    std::string indent(caret, ' ');
    size_t width = header.size() - caret;
    EXPECT_EQ(header.substr(0, caret), indent) << message;
    EXPECT_EQ(lines[k], indent + std::string(width, '^') + " " + kind) << message;
    marked.push_back(header.substr(caret));
  }
  return marked;
}

TEST(ErrorMessage, ParallelOfAReductionLoopMarksTheLoopAndTheBlock) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  std::string message = DetailedMessageOf(sch, [&] { sch.Parallel(loops[2]); });
  EXPECT_EQ(Lines(message)[0],
            "WrongBlockIterTypeError: cannot parallelize loop 'k': block 'C' binds reduction "
            "iterator 'vk' to it. Only loops that every block under them uses for spatial "
            "iterators can run their iterations at once; split the reduction with rfactor "
            "first, or pick a spatial loop");
  EXPECT_EQ(MarkedLines(message, "WrongBlockIterTypeError"),
            (std::vector<std::string>{"for k in range(8):", "with block(\"C\"):"}));
  // The rest is the function as printed.
  std::string unmarked;
  for (const std::string& line : Lines(message)) {
    if (line.find('^') == std::string::npos) unmarked += line + "\n";
  }
  EXPECT_EQ(unmarked.substr(unmarked.find('\n') + 1), Print(sch.func()));
}

TEST(ErrorMessage, FuseOfLoopsThatAreNotNestedMarksBothLoops) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  std::string message = DetailedMessageOf(sch, [&] { sch.Fuse({loops[0], loops[2]}); });
  EXPECT_EQ(Lines(message)[0].rfind("NotOnlyChildError: fuse needs each loop to be the only child "
                                    "of the previous one; loop 'k' is not the only statement in "
                                    "the body of loop 'i'",
                                    0),
            0u)
      << message;
  EXPECT_EQ(MarkedLines(message, "NotOnlyChildError"),
            (std::vector<std::string>{"for i in range(16):", "for k in range(8):"}));
}

TEST(ErrorMessage, ShortMessageIsTheFirstLineWithoutTheFunction) {
  Schedule sch(ParseFunc(kGemm));
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  try {
    sch.Fuse({loops[0], loops[2]});
    FAIL() << "expected NotOnlyChildError";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.what()), std::string("NotOnlyChildError: ") + e.ShortMessage());
    EXPECT_EQ(e.ShortMessage().find('\n'), std::string::npos);
  }
}

// An error thrown out of a function that owned the Schedule is read after the schedule (and
// every node of its function) is gone: the nodes the message names live on with the error.
TEST(ErrorMessage, OutlivesTheScheduleThatThrewIt) {
  std::string message;
  try {
    [] {
      Schedule sch(MakeWorkload("softmax:4,64").func);
      BlockRV sum = sch.GetBlock("T_softmax_expsum");
      BlockRV norm = sch.GetBlock("T_softmax_norm");
      sch.ComputeAt(sum, sch.GetLoops(norm)[0]);
      sch.CacheWrite(sum, 0, StorageScope::kLocal);  // the two nests are one now: refused
    }();
  } catch (const ScheduleError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("cache_write of buffer 'T_softmax_expsum' for block 'T_softmax_expsum': "
                         "block 'T_softmax_norm' accesses the buffer"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace tirtune
