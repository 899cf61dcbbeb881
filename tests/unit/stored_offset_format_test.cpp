#include "kafka/store/stored_offset_format.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <optional>
#include <string>

#include "encoding/crc32c.hpp"
#include "encoding/fixed.hpp"
#include "processor/error.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

// The stored form, byte by byte as version 1 defined it (sealed with the table CRC): values
// written before the codec was rewritten must read back, and new values must be the same bytes.
std::string version_1_value(std::int64_t offset, std::int64_t micros, std::int64_t high_watermark,
                            const std::string& metadata) {
  std::string out;
  out.push_back(1);      // version
  out.push_back(1 | 2);  // high watermark and metadata
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
  EXPECT_EQ(
      std::chrono::duration_cast<std::chrono::microseconds>(decoded.last_updated.time_since_epoch()).count(),
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

// A value sealed with a valid checksum: what a buggy writer or another tool could leave behind.
std::string sealed_value(std::int64_t micros, std::optional<std::int64_t> high_watermark) {
  std::string out;
  out.push_back(1);                       // version
  out.push_back(high_watermark ? 1 : 0);  // flags
  encoding::put_le<std::int64_t>(out, 42);
  encoding::put_le<std::int64_t>(out, micros);
  if (high_watermark) encoding::put_le<std::int64_t>(out, *high_watermark);
  encoding::put_le<std::uint32_t>(out, encoding::crc32c_portable(out));
  return out;
}

TEST(OffsetCodec, AnUpdateTimeTheClockCannotHoldIsCorruptionNotOverflow) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  EXPECT_STATE_ERROR(internal::decode_offset(sealed_value(max, std::nullopt), "k"), ErrorKind::Corruption,
                     "last update time 9223372036854775807us is out of range");
  EXPECT_STATE_ERROR(internal::decode_offset(sealed_value(min, std::nullopt), "k"), ErrorKind::Corruption,
                     "-9223372036854775808us");
  // The clock's own limits still read back.
  const auto latest =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::duration::max());
  const OffsetInfo decoded = internal::decode_offset(sealed_value(latest.count(), std::nullopt), "k");
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::microseconds>(decoded.last_updated.time_since_epoch()),
            latest);
}

TEST(OffsetCodec, ANegativeHighWatermarkIsCorruptionAsTheStoresRefuseToWriteIt) {
  EXPECT_STATE_ERROR(internal::decode_offset(sealed_value(0, -1), "k"), ErrorKind::Corruption,
                     "negative high watermark -1");
  EXPECT_EQ(internal::decode_offset(sealed_value(0, 0), "k").high_watermark, 0);
}

}  // namespace
}  // namespace processor::kafka
