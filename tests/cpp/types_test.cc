#include "webnn/types.h"

#include <gtest/gtest.h>

#include <cmath>

namespace webnn {
namespace {

TEST(DataTypeTest, NamesRoundTrip) {
  for (int i = 0; i < kDataTypeCount; ++i) {
    auto t = static_cast<DataType>(i);
    EXPECT_EQ(parse_data_type(data_type_name(t)), t);
  }
  EXPECT_FALSE(parse_data_type("float64").has_value());
  EXPECT_FALSE(parse_data_type("Float32").has_value());
}

TEST(DataTypeTest, StorageBytes) {
  EXPECT_EQ(*storage_bytes(DataType::kFloat32, 6), 24u);
  EXPECT_EQ(*storage_bytes(DataType::kFloat16, 3), 6u);
  EXPECT_EQ(*storage_bytes(DataType::kInt4, 5), 3u);
  EXPECT_EQ(*storage_bytes(DataType::kUint4, 4), 2u);
  EXPECT_FALSE(storage_bytes(DataType::kInt64, UINT64_MAX / 4).has_value());
}

TEST(PackingTest, FourBitLowNibbleFirst) {
  const uint8_t values[5] = {0x1, 0xF, 0x7, 0x8, 0x3};
  uint8_t packed[3];
  pack_4bit(values, 5, packed);
  EXPECT_EQ(packed[0], 0xF1);
  EXPECT_EQ(packed[1], 0x87);
  EXPECT_EQ(packed[2], 0x03);  // odd count leaves the high nibble zero
  uint8_t signed_out[5];
  unpack_4bit(packed, 5, true, signed_out);
  EXPECT_EQ(static_cast<int8_t>(signed_out[1]), -1);
  EXPECT_EQ(static_cast<int8_t>(signed_out[3]), -8);
  EXPECT_EQ(signed_out[2], 7);
  uint8_t unsigned_out[5];
  unpack_4bit(packed, 5, false, unsigned_out);
  EXPECT_EQ(unsigned_out[1], 15);
  EXPECT_EQ(unsigned_out[3], 8);
}

TEST(Float16Test, RoundsToNearestEven) {
  EXPECT_EQ(static_cast<double>(static_cast<float16>(1.0 + 1.0 / 2048)), 1.0);  // tie -> even
  EXPECT_EQ(static_cast<double>(static_cast<float16>(65504.0)), 65504.0);
  EXPECT_TRUE(std::isinf(static_cast<double>(static_cast<float16>(65520.0))));
  EXPECT_EQ(static_cast<double>(static_cast<float16>(5.960464477539063e-08)),
            5.960464477539063e-08);  // smallest subnormal
}

TEST(ShapeTest, ElementCountOverflow) {
  EXPECT_EQ(*element_count(std::vector<int64_t>{2, 3, 4}), 24u);
  EXPECT_EQ(*element_count(std::vector<int64_t>{}), 1u);
  EXPECT_FALSE(element_count(std::vector<int64_t>{1LL << 40, 1LL << 40}).has_value());
}

}  // namespace
}  // namespace webnn
