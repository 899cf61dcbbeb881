#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>

#include "encoding/crc32c.hpp"
#include "encoding/fixed.hpp"
#include "kafka/store/stored_offset_format.hpp"
#include "processor/error.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

std::string random_bytes(std::mt19937_64& random, std::size_t size) {
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random() & 0xff);
  return bytes;
}

TEST(Crc32c, BothImplementationsMatchTheStandardCheckValue) {
  EXPECT_EQ(encoding::crc32c_portable("123456789"), 0xE3069283u);
  EXPECT_EQ(encoding::crc32c(""), 0u);
  if (!encoding::crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 crc32 on this CPU";
  EXPECT_EQ(encoding::crc32c_hardware("123456789"), 0xE3069283u);
  EXPECT_EQ(encoding::crc32c_hardware(""), 0u);
}

TEST(Crc32c, HardwareEqualsTheTableOnRandomInputsOfEveryLengthAndAlignment) {
  if (!encoding::crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 crc32 on this CPU";
  std::mt19937_64 random(20261129);
  const std::string buffer = random_bytes(random, 4096 + 8);
  // Every length up to 300 at every start offset modulo 8: the 8-, 4- and 1-byte steps and
  // their tails all run, from aligned and unaligned addresses.
  for (std::size_t start = 0; start < 8; ++start) {
    for (std::size_t length = 0; length <= 300; ++length) {
      const std::string_view bytes = std::string_view(buffer).substr(start, length);
      ASSERT_EQ(encoding::crc32c_hardware(bytes), encoding::crc32c_portable(bytes))
          << "start " << start << ", length " << length;
    }
  }
  for (int round = 0; round < 50; ++round) {
    const std::string bytes = random_bytes(random, static_cast<std::size_t>(random() % 100'000));
    ASSERT_EQ(encoding::crc32c_hardware(bytes), encoding::crc32c_portable(bytes)) << "length " << bytes.size();
  }
}

TEST(Crc32c, DispatchAgreesWithTheTable) {
  std::mt19937_64 random(7);
  for (std::size_t length : {0u, 1u, 7u, 8u, 9u, 22u, 4095u}) {
    const std::string bytes = random_bytes(random, length);
    EXPECT_EQ(encoding::crc32c(bytes), encoding::crc32c_portable(bytes));
  }
}

TEST(LittleEndianCodec, RoundTripsEveryWidthIncludingNegativeValues) {
  char bytes[8];
  EXPECT_EQ(encoding::store_le<std::int64_t>(bytes, -2), bytes + 8);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0xfe);
  EXPECT_EQ(static_cast<unsigned char>(bytes[7]), 0xff);
  EXPECT_EQ(encoding::load_le<std::int64_t>(bytes), -2);
  encoding::store_le<std::uint32_t>(bytes, 0x01020304u);
  EXPECT_EQ(bytes[0], 4);
  EXPECT_EQ(bytes[3], 1);
  EXPECT_EQ(encoding::load_le<std::uint32_t>(bytes), 0x01020304u);
  std::string out;
  encoding::put_le<std::int16_t>(out, -300);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(encoding::load_le<std::int16_t>(out.data()), -300);
}

// The stored form, byte by byte as version 1 defined it (sealed with the table CRC): values
// written before the codec was rewritten must read back, and new values must be the same bytes.
std::string version_1_value(std::int64_t offset, std::int64_t micros, std::int64_t high_watermark,
                            const std::string& metadata) {
  std::string out;
  out.push_back(1);           // version
  out.push_back(1 | 2);       // high watermark and metadata
  encoding::put_le<std::int64_t>(out, offset);
  encoding::put_le<std::int64_t>(out, micros);
  encoding::put_le<std::int64_t>(out, high_watermark);
  encoding::put_le<std::uint32_t>(out, static_cast<std::uint32_t>(metadata.size()));
  out += metadata;
  encoding::put_le<std::uint32_t>(out, encoding::crc32c_portable(out));
  return out;
}

TEST(OffsetCodec, ValuesOfFormatVersion1ReadBackAndEncodeToTheSameBytes) {
  const std::int64_t micros = 1'764'000'000'123'456;
  const std::string stored = version_1_value(42, micros, 99, "acks:1-3");

  const OffsetInfo decoded = internal::decode_offset(stored, "k");
  EXPECT_EQ(decoded.offset, 42);
  EXPECT_EQ(decoded.high_watermark, 99);
  EXPECT_EQ(decoded.metadata, "acks:1-3");
  EXPECT_FALSE(decoded.leader_epoch);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::microseconds>(decoded.last_updated.time_since_epoch()).count(),
            micros);

  EXPECT_EQ(internal::encode_offset(decoded), stored);
  std::string appended = "prefix";
  internal::append_offset(appended, decoded);
  EXPECT_EQ(appended, "prefix" + stored);
}

TEST(OffsetCodec, EveryOptionalFieldRoundTrips) {
  OffsetInfo info(7);
  info.high_watermark = 11;
  info.leader_epoch = 3;
  info.metadata = std::string(300, 'm');
  const OffsetInfo decoded = internal::decode_offset(internal::encode_offset(info), "k");
  EXPECT_EQ(decoded.offset, 7);
  EXPECT_EQ(decoded.high_watermark, 11);
  EXPECT_EQ(decoded.leader_epoch, 3);
  EXPECT_EQ(decoded.metadata, info.metadata);
}

TEST(OffsetCodec, AFlippedBitAnywhereIsCorruption) {
  OffsetInfo info(5);
  info.metadata = "m";
  const std::string stored = internal::encode_offset(info);
  for (std::size_t i = 0; i < stored.size(); ++i) {
    std::string damaged = stored;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x10);
    EXPECT_STATE_ERROR(internal::decode_offset(damaged, "key"), ErrorKind::Corruption, "key");
  }
}

}  // namespace
}  // namespace processor::kafka
