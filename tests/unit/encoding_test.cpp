// The byte encodings under every stored format: CRC32C, fixed little-endian, varints, base64.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "encoding/base64.hpp"
#include "encoding/crc32c.hpp"
#include "encoding/fixed.hpp"
#include "encoding/varint.hpp"
#include "processor/error.hpp"

namespace processor::encoding {
namespace {

std::string random_bytes(std::mt19937_64& random, std::size_t size) {
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random() & 0xff);
  return bytes;
}

TEST(Crc32c, BothImplementationsMatchTheStandardCheckValue) {
  EXPECT_EQ(crc32c_portable("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  if (!crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 crc32 on this CPU";
  EXPECT_EQ(crc32c_hardware("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c_hardware(""), 0u);
}

TEST(Crc32c, HardwareEqualsTheTableOnRandomInputsOfEveryLengthAndAlignment) {
  if (!crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 crc32 on this CPU";
  std::mt19937_64 random(20261129);
  const std::string buffer = random_bytes(random, 4096 + 8);
  // Every length up to 300 at every start offset modulo 8: the 8-, 4- and 1-byte steps and
  // their tails all run, from aligned and unaligned addresses.
  for (std::size_t start = 0; start < 8; ++start) {
    for (std::size_t length = 0; length <= 300; ++length) {
      const std::string_view bytes = std::string_view(buffer).substr(start, length);
      ASSERT_EQ(crc32c_hardware(bytes), crc32c_portable(bytes)) << "start " << start << ", length " << length;
    }
  }
  for (int round = 0; round < 50; ++round) {
    const std::string bytes = random_bytes(random, static_cast<std::size_t>(random() % 100'000));
    ASSERT_EQ(crc32c_hardware(bytes), crc32c_portable(bytes)) << "length " << bytes.size();
  }
}

TEST(Crc32c, DispatchAgreesWithTheTable) {
  std::mt19937_64 random(7);
  for (std::size_t length : {0u, 1u, 7u, 8u, 9u, 22u, 4095u}) {
    const std::string bytes = random_bytes(random, length);
    EXPECT_EQ(crc32c(bytes), crc32c_portable(bytes));
  }
}

TEST(LittleEndianCodec, RoundTripsEveryWidthIncludingNegativeValues) {
  char bytes[8];
  EXPECT_EQ(store_le<std::int64_t>(bytes, -2), bytes + 8);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0xfe);
  EXPECT_EQ(static_cast<unsigned char>(bytes[7]), 0xff);
  EXPECT_EQ(load_le<std::int64_t>(bytes), -2);
  store_le<std::uint32_t>(bytes, 0x01020304u);
  EXPECT_EQ(bytes[0], 4);
  EXPECT_EQ(bytes[3], 1);
  EXPECT_EQ(load_le<std::uint32_t>(bytes), 0x01020304u);
  std::string out;
  put_le<std::int16_t>(out, -300);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(load_le<std::int16_t>(out.data()), -300);
}

TEST(Varint, RoundTripsTheEdgesOfEveryLength) {
  for (std::uint64_t value :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{127}, std::uint64_t{128}, std::uint64_t{16'383},
        std::uint64_t{16'384}, std::uint64_t{1} << 63, std::numeric_limits<std::uint64_t>::max()}) {
    std::string out;
    put_varint(out, value);
    ASSERT_EQ(out.size(), varint_size(value)) << value;
    std::size_t pos = 0;
    std::uint64_t decoded = 0;
    ASSERT_EQ(get_varint(out, &pos, &decoded), VarintStatus::Ok) << value;
    EXPECT_EQ(decoded, value);
    EXPECT_EQ(pos, out.size());
  }
  EXPECT_EQ(varint_size(std::numeric_limits<std::uint64_t>::max()), 10u);
}

TEST(Varint, RefusesTruncatedOverflowingAndOverLongEncodings) {
  std::size_t pos = 0;
  std::uint64_t value = 0;
  EXPECT_EQ(get_varint(std::string("\x80"), &pos, &value), VarintStatus::Truncated);
  pos = 0;
  EXPECT_EQ(get_varint(std::string(9, '\xff') + "\x02", &pos, &value), VarintStatus::Overflow);
  pos = 0;
  EXPECT_EQ(get_varint(std::string("\x81\x00", 2), &pos, &value), VarintStatus::OverLong);
}

TEST(Base64, RoundTripsEveryPaddingCase) {
  std::mt19937_64 random(3);
  for (std::size_t length = 0; length <= 64; ++length) {
    const std::string binary = random_bytes(random, length);
    const std::string text = base64_encode(binary);
    EXPECT_EQ(text.size(), base64_size(length));
    EXPECT_EQ(base64_decode(text, "test value"), binary);
  }
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
}

TEST(Base64, RefusesNonCanonicalTextNamingWhatIsCorrupt) {
  for (const char* text : {"Zm8", "Zm9=", "Z!8=", "Zm8=Zm8="}) {
    try {
      base64_decode(text, "acknowledgement metadata");
      ADD_FAILURE() << "accepted " << text;
    } catch (const StateError& error) {
      EXPECT_EQ(error.kind(), ErrorKind::Corruption);
      EXPECT_EQ(std::string(error.what()).rfind("corrupt acknowledgement metadata: ", 0), 0u) << error.what();
    }
  }
}

}  // namespace
}  // namespace processor::encoding
