#include "kafka/offset_codec.hpp"

#include <array>
#include <chrono>
#include <cstring>

#include "processor/error.hpp"

namespace processor::kafka::internal {
namespace {

constexpr std::uint8_t kHasHighWatermark = 1 << 0;
constexpr std::uint8_t kHasMetadata = 1 << 1;
constexpr std::uint8_t kHasLeaderEpoch = 1 << 2;
constexpr std::uint8_t kKnownFlags = kHasHighWatermark | kHasMetadata | kHasLeaderEpoch;

constexpr std::array<std::uint32_t, 256> make_crc32c_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    table[i] = crc;
  }
  return table;
}
constexpr auto kCrc32cTable = make_crc32c_table();

template <class T>
void put_le(std::string& out, T value) {
  auto bits = static_cast<std::make_unsigned_t<T>>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

[[noreturn]] void corrupt(std::string_view key, const std::string& why) {
  throw StateError(ErrorKind::Corruption, "corrupt stored offset at key '" + std::string(key) + "': " + why);
}

// Reads little-endian fields; a read past the end is corruption.
class Reader {
 public:
  Reader(std::string_view bytes, std::string_view key) : bytes_(bytes), key_(key) {}

  template <class T>
  T get() {
    need(sizeof(T));
    std::make_unsigned_t<T> bits = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      bits |= static_cast<std::make_unsigned_t<T>>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += sizeof(T);
    return static_cast<T>(bits);
  }

  std::string_view take(std::size_t length) {
    need(length);
    auto out = bytes_.substr(pos_, length);
    pos_ += length;
    return out;
  }

  std::size_t remaining() const noexcept { return bytes_.size() - pos_; }

 private:
  void need(std::size_t length) const {
    if (remaining() < length) corrupt(key_, "value is truncated");
  }

  std::string_view bytes_;
  std::string_view key_;
  std::size_t pos_ = 0;
};

}  // namespace

std::uint32_t crc32c(std::string_view bytes) noexcept {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (char c : bytes) crc = (crc >> 8) ^ kCrc32cTable[(crc ^ static_cast<unsigned char>(c)) & 0xff];
  return crc ^ 0xFFFFFFFFu;
}

std::string encode_offset(const OffsetInfo& info) {
  std::uint8_t flags = 0;
  if (info.high_watermark) flags |= kHasHighWatermark;
  if (info.metadata) flags |= kHasMetadata;
  if (info.leader_epoch) flags |= kHasLeaderEpoch;

  std::string out;
  out.reserve(40 + (info.metadata ? info.metadata->size() : 0));
  put_le<std::uint8_t>(out, kOffsetCodecVersion);
  put_le<std::uint8_t>(out, flags);
  put_le<std::int64_t>(out, info.offset);
  put_le<std::int64_t>(
      out, std::chrono::duration_cast<std::chrono::microseconds>(info.last_updated.time_since_epoch()).count());
  if (info.high_watermark) put_le<std::int64_t>(out, *info.high_watermark);
  if (info.leader_epoch) put_le<std::int32_t>(out, *info.leader_epoch);
  if (info.metadata) {
    put_le<std::uint32_t>(out, static_cast<std::uint32_t>(info.metadata->size()));
    out += *info.metadata;
  }
  put_le<std::uint32_t>(out, crc32c(out));
  return out;
}

OffsetInfo decode_offset(std::string_view bytes, std::string_view key) {
  if (bytes.size() < 4) corrupt(key, "value of " + std::to_string(bytes.size()) + " bytes is too short");
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  Reader trailer(bytes.substr(bytes.size() - 4), key);
  const auto stored_crc = trailer.get<std::uint32_t>();
  if (stored_crc != crc32c(body)) corrupt(key, "checksum mismatch");

  Reader reader(body, key);
  const auto version = reader.get<std::uint8_t>();
  if (version != kOffsetCodecVersion) corrupt(key, "unsupported format version " + std::to_string(version));
  const auto flags = reader.get<std::uint8_t>();
  if ((flags & ~kKnownFlags) != 0) corrupt(key, "unknown flags " + std::to_string(flags));

  OffsetInfo info;
  info.offset = reader.get<std::int64_t>();
  info.last_updated = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::microseconds(reader.get<std::int64_t>())));
  if (flags & kHasHighWatermark) info.high_watermark = reader.get<std::int64_t>();
  if (flags & kHasLeaderEpoch) info.leader_epoch = reader.get<std::int32_t>();
  if (flags & kHasMetadata) {
    const auto length = reader.get<std::uint32_t>();
    info.metadata = std::string(reader.take(length));
  }
  if (reader.remaining() != 0) corrupt(key, std::to_string(reader.remaining()) + " unexpected trailing bytes");
  if (info.offset < 0) corrupt(key, "negative offset " + std::to_string(info.offset));
  return info;
}

}  // namespace processor::kafka::internal
