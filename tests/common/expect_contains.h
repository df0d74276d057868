// EXPECT_CONTAINS(text, part): a GoogleTest check that `text` holds `part`, printing `text`
// when it does not.
#pragma once

#include <gtest/gtest.h>

#include <string>

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)
