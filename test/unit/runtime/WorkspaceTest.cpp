//===- WorkspaceTest.cpp - The scratch memory of a step -------------------===//
#include "mbt/runtime/Workspace.h"

#include <gtest/gtest.h>

using namespace mbt::runtime;

namespace {

TEST(WorkspaceTest, GrowsByHalfAgainAtLeast) {
  Workspace workspace;
  workspace.reserve(1000);
  EXPECT_EQ(workspace.size(), 1000);
  // A little more, as the next longer batch asks: half again, so that a
  // run of such steps reallocates a logarithmic number of times.
  workspace.reserve(1010);
  EXPECT_EQ(workspace.size(), 1500);
  workspace.reserve(1400);
  EXPECT_EQ(workspace.size(), 1500);
  // Far more: exactly what was asked.
  workspace.reserve(10000);
  EXPECT_EQ(workspace.size(), 10000);
  EXPECT_EQ(workspace.descriptor().sizes[0], 10000);
}

TEST(WorkspaceTest, NegativeSizeIsAnError) {
  Workspace workspace;
  EXPECT_THROW(workspace.reserve(-1), RuntimeError);
}

} // namespace
