// DeviceLock: one holder at a time per device lock file (flock, so two holders in one process
// exclude each other too), released when the holder goes; no lock where the file cannot be made.
#include "tirtune/measure/device_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

namespace tirtune {
namespace {

TEST(DeviceLock, ThePathNamesThePciLocationInTheTemporaryDirectory) {
  std::string path = DeviceLockPath("0000:1b:00");
  EXPECT_EQ(std::filesystem::path(path).filename(), "tirtune-device-0000-1b-00.lock");
  EXPECT_EQ(std::filesystem::path(path).parent_path(), std::filesystem::temp_directory_path());
}

TEST(DeviceLock, ASecondHolderWaitsUntilTheFirstLetsGo) {
  std::string path = DeviceLockPath("test-" + std::to_string(::getpid()));
  {
    auto first = std::make_unique<DeviceLock>(path);
    ASSERT_TRUE(first->held());
    DeviceLock busy(path, /*wait=*/false);
    EXPECT_FALSE(busy.held());
    first.reset();
    DeviceLock free(path, /*wait=*/false);
    EXPECT_TRUE(free.held());
  }
  std::filesystem::remove(path);
}

TEST(DeviceLock, AFileThatCannotBeMadeLocksNothing) {
  DeviceLock lock("/nonexistent-directory/tirtune-device.lock");
  EXPECT_FALSE(lock.held());
}

}  // namespace
}  // namespace tirtune
