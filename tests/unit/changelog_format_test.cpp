// The byte formats of the streams state (src/streams/changelog_format.hpp): a changelog record's
// value and a store partition's changelog position, both read back as untrusted bytes.

#include "streams/changelog_format.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "encoding/crc32c.hpp"
#include "encoding/fixed.hpp"
#include "processor/error.hpp"
#include "state_error_of.hpp"
#include "streams/state_keys.hpp"

namespace processor::streams::internal {
namespace {

using processor::testing::error_of;
using processor::testing::mentions;

constexpr std::string_view kWhere = "counts-changelog:3@1234";
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::string changelog_value(std::string_view value) {
  std::string out;
  append_changelog_value(out, value);
  return out;
}

// A position record as the format lays it out, whatever it holds, sealed with its checksum.
std::string position_record(std::uint8_t version, std::int64_t position) {
  std::string out(1, static_cast<char>(version));
  encoding::put_le<std::int64_t>(out, position);
  encoding::put_le<std::uint32_t>(out, encoding::crc32c_portable(out));
  return out;
}

// ---- changelog record values ----

TEST(ChangelogValue, IsTheVersionByteFollowedByTheStoreValue) {
  EXPECT_EQ(changelog_value("42"), std::string("\x01"
                                               "42"));
  EXPECT_EQ(changelog_value(""), std::string("\x01"));
}

TEST(ChangelogValue, AppendsToWhatTheBufferAlreadyHolds) {
  std::string out = "key|";
  append_changelog_value(out, "42");
  EXPECT_EQ(out, std::string("key|\x01"
                             "42"));
}

TEST(ChangelogValue, AnyStoreValueRoundTrips) {
  for (const std::string& value :
       {std::string(), std::string("42"), std::string("\0\x01\xff\0", 4), std::string(1 << 20, 'v')}) {
    const std::string bytes = changelog_value(value);
    EXPECT_EQ(decode_changelog_value(bytes, kWhere), value);
    EXPECT_EQ(changelog_value(decode_changelog_value(bytes, kWhere)), bytes);
  }
}

TEST(ChangelogValue, AnEmptyValueIsCorruptionNamingWhereItWasRead) {
  const StateError error = error_of([] { decode_changelog_value("", kWhere); });
  EXPECT_EQ(error.kind(), ErrorKind::Corruption);
  EXPECT_TRUE(mentions(error, kWhere));
  EXPECT_TRUE(mentions(error, "empty value"));
}

TEST(ChangelogValue, AnUnknownVersionIsCorruptionNamingWhereAndTheVersion) {
  for (const char version : {'\x00', '\x02', '\xff'}) {
    const StateError error =
        error_of([&] { decode_changelog_value(std::string(1, version) + "42", kWhere); });
    EXPECT_EQ(error.kind(), ErrorKind::Corruption);
    EXPECT_TRUE(mentions(error, kWhere));
    EXPECT_TRUE(mentions(error, "unknown version " + std::to_string(static_cast<std::uint8_t>(version))));
  }
}

TEST(ChangelogValue, TheErrorShowsControlBytesOfWhereEscapedAndKeepsTheReason) {
  const StateError error =
      error_of([] { decode_changelog_value("", std::string_view("odd\0topic:0@7", 13)); });
  EXPECT_EQ(error.kind(), ErrorKind::Corruption);
  EXPECT_TRUE(mentions(error, "odd\\x00topic:0@7"));
  EXPECT_TRUE(mentions(error, "empty value"));
}

// ---- changelog positions ----

TEST(ChangelogPosition, IsTheVersionThePositionLittleEndianAndTheCrc32cOfBoth) {
  const std::string bytes = encode_position(0x0102030405060708);
  ASSERT_EQ(bytes.size(), 13u);
  EXPECT_EQ(bytes.substr(0, 9), std::string("\x01\x08\x07\x06\x05\x04\x03\x02\x01"));
  EXPECT_EQ(encoding::load_le<std::uint32_t>(bytes.data() + 9),
            encoding::crc32c_portable(bytes.substr(0, 9)));
}

TEST(ChangelogPosition, EveryPositionFromZeroToTheLargestRoundTripsByteForByte) {
  for (const std::int64_t position : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1234}, kInt64Max}) {
    const std::string bytes = encode_position(position);
    EXPECT_EQ(decode_position(bytes, "k"), position);
    EXPECT_EQ(encode_position(decode_position(bytes, "k")), bytes);
  }
}

TEST(ChangelogPosition, AWrongSizeIsCorruptionNamingTheKeyAndTheSize) {
  const std::string valid = encode_position(1234);
  for (const std::string& bytes : {std::string(), valid.substr(0, 12), valid + '\0'}) {
    const StateError error = error_of([&] { decode_position(bytes, "position-of-counts"); });
    EXPECT_EQ(error.kind(), ErrorKind::Corruption);
    EXPECT_TRUE(mentions(error, "'position-of-counts'"));
    EXPECT_TRUE(mentions(error, "size " + std::to_string(bytes.size()) + ", expected 13"));
  }
}

TEST(ChangelogPosition, AnUnknownVersionIsCorruptionEvenWithAValidChecksum) {
  const StateError error = error_of([] { decode_position(position_record(2, 1234), "position-of-counts"); });
  EXPECT_EQ(error.kind(), ErrorKind::Corruption);
  EXPECT_TRUE(mentions(error, "'position-of-counts'"));
  EXPECT_TRUE(mentions(error, "unknown version 2"));
}

TEST(ChangelogPosition, AnyFlippedBitOfThePositionOrChecksumIsAChecksumMismatch) {
  const std::string valid = encode_position(1234);
  for (std::size_t byte = 1; byte < valid.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bytes = valid;
      bytes[byte] = static_cast<char>(bytes[byte] ^ (1 << bit));
      const StateError error = error_of([&] { decode_position(bytes, "position-of-counts"); });
      EXPECT_EQ(error.kind(), ErrorKind::Corruption);
      EXPECT_TRUE(mentions(error, "'position-of-counts'"));
      EXPECT_TRUE(mentions(error, "checksum mismatch")) << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(ChangelogPosition, ANegativePositionIsCorruptionEvenWithAValidChecksum) {
  for (const std::int64_t position : {std::int64_t{-1}, std::numeric_limits<std::int64_t>::min()}) {
    const StateError error =
        error_of([&] { decode_position(position_record(kPositionVersion, position), "position-of-counts"); });
    EXPECT_EQ(error.kind(), ErrorKind::Corruption);
    EXPECT_TRUE(mentions(error, "'position-of-counts'"));
    EXPECT_TRUE(mentions(error, "negative position " + std::to_string(position)));
  }
}

// A store partition's position key holds 0x00 and its partition in binary: the message shows them
// escaped, and goes on to say what is wrong (a raw 0x00 ended what() right after the store name).
TEST(ChangelogPosition, TheErrorNamesABinaryPositionKeyReadablyAndKeepsTheReason) {
  const std::string key = position_key("counts", 3);
  const StateError error = error_of([&] { decode_position(position_record(kPositionVersion, -1), key); });
  EXPECT_EQ(error.kind(), ErrorKind::Corruption);
  EXPECT_TRUE(mentions(error, "'pcounts\\x00\\x00\\x00\\x00\\x03'"));
  EXPECT_TRUE(mentions(error, "negative position -1"));
}

}  // namespace
}  // namespace processor::streams::internal
