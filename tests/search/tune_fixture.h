// The fixture of the tuning loop's tests (tune_test.cc, tune_library_test.cc): a temporary
// directory per test and the options of a small, quick run.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tirtune/search/tune.h"

namespace tirtune::testing {

class TuneFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tirtune_tune_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static TuneOptions SmallOptions(int trials) {
    TuneOptions o;
    o.max_trials = trials;
    o.trials_per_round = 8;
    o.evolutionary.population_size = 32;
    o.evolutionary.init_min_unmeasured = 8;
    o.runner.timer.repeat = 2;
    o.runner.timer.min_repeat_ms = 0.2;
    o.runner.timeout_s = 10;
    o.library_retimes = 1;  // three turns for these kernels, all under 0.5 ms
    return o;
  }

  std::filesystem::path dir_;
};

}  // namespace tirtune::testing
