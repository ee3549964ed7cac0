// Layout strings decoded by letter (src/core/layout.h), against axes and strides worked out
// by hand from spec/ops.md's layout definitions.
#include "core/layout.h"

#include <gtest/gtest.h>

namespace webnn {
namespace {

TEST(LayoutTest, AxesByLetter) {
  LayoutAxes nhwc("nhwc");
  EXPECT_EQ(nhwc['n'], 0u);
  EXPECT_EQ(nhwc['h'], 1u);
  EXPECT_EQ(nhwc['w'], 2u);
  EXPECT_EQ(nhwc['c'], 3u);
  LayoutAxes ihwo("ihwo");
  EXPECT_EQ(ihwo['o'], 3u);
  EXPECT_EQ(ihwo['i'], 0u);
}

TEST(LayoutTest, SizesAndRowMajorStrides) {
  // hwio [3, 5, 7, 11]: o is innermost, h outermost.
  LayoutStrides f("hwio", {3, 5, 7, 11});
  EXPECT_EQ(f.size('h'), 3);
  EXPECT_EQ(f.size('w'), 5);
  EXPECT_EQ(f.size('i'), 7);
  EXPECT_EQ(f.size('o'), 11);
  EXPECT_EQ(f.stride('o'), 1);
  EXPECT_EQ(f.stride('i'), 11);
  EXPECT_EQ(f.stride('w'), 77);
  EXPECT_EQ(f.stride('h'), 385);
  LayoutStrides x("nchw", {2, 3, 4, 5});
  EXPECT_EQ(x.stride('n'), 60);
  EXPECT_EQ(x.stride('c'), 20);
  EXPECT_EQ(x.stride('h'), 5);
  EXPECT_EQ(x.stride('w'), 1);
}

}  // namespace
}  // namespace webnn
