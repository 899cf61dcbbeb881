#include "kafka/store/stored_offset_format.hpp"

#include <chrono>
#include <cstring>

#include "encoding/crc32c.hpp"
#include "encoding/epoch_micros.hpp"
#include "encoding/fixed.hpp"
#include "processor/error.hpp"

namespace processor::kafka::internal {
namespace {

using encoding::crc32c;
using encoding::LeReader;
using encoding::store_le;

constexpr std::uint8_t kHasHighWatermark = 1 << 0;
constexpr std::uint8_t kHasMetadata = 1 << 1;
constexpr std::uint8_t kHasLeaderEpoch = 1 << 2;
constexpr std::uint8_t kKnownFlags = kHasHighWatermark | kHasMetadata | kHasLeaderEpoch;

[[noreturn]] void corrupt(std::string_view key, const std::string& why) {
  throw StateError(ErrorKind::Corruption, "corrupt stored offset at key '" + std::string(key) + "': " + why);
}

}  // namespace

std::size_t encoded_offset_size(const OffsetInfo& info) noexcept {
  return 2 + 8 + 8 + (info.high_watermark ? 8 : 0) + (info.leader_epoch ? 4 : 0) +
         (info.metadata ? 4 + info.metadata->size() : 0) + 4;
}

char* encode_offset_into(char* out, const OffsetInfo& info) noexcept {
  std::uint8_t flags = 0;
  if (info.high_watermark) flags |= kHasHighWatermark;
  if (info.metadata) flags |= kHasMetadata;
  if (info.leader_epoch) flags |= kHasLeaderEpoch;

  char* field = out;
  field = store_le<std::uint8_t>(field, kOffsetCodecVersion);
  field = store_le<std::uint8_t>(field, flags);
  field = store_le<std::int64_t>(field, info.offset);
  field = store_le<std::int64_t>(field, encoding::to_epoch_micros(info.last_updated));
  if (info.high_watermark) field = store_le<std::int64_t>(field, *info.high_watermark);
  if (info.leader_epoch) field = store_le<std::int32_t>(field, *info.leader_epoch);
  if (info.metadata) {
    field = store_le<std::uint32_t>(field, static_cast<std::uint32_t>(info.metadata->size()));
    std::memcpy(field, info.metadata->data(), info.metadata->size());
    field += info.metadata->size();
  }
  const auto crc = crc32c(std::string_view(out, static_cast<std::size_t>(field - out)));
  return store_le<std::uint32_t>(field, crc);
}

void append_offset(std::string& out, const OffsetInfo& info) {
  const std::size_t start = out.size();
  out.resize(start + encoded_offset_size(info));
  encode_offset_into(out.data() + start, info);
}

std::string encode_offset(const OffsetInfo& info) {
  std::string out;
  out.reserve(40 + (info.metadata ? info.metadata->size() : 0));
  append_offset(out, info);
  return out;
}

OffsetInfo decode_offset(std::string_view bytes, std::string_view key) {
  if (bytes.size() < 4) corrupt(key, "value of " + std::to_string(bytes.size()) + " bytes is too short");
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  LeReader trailer(bytes.substr(bytes.size() - 4), key, "stored offset");
  const auto stored_crc = trailer.get<std::uint32_t>();
  if (stored_crc != crc32c(body)) corrupt(key, "checksum mismatch");

  LeReader reader(body, key, "stored offset");
  const auto version = reader.get<std::uint8_t>();
  if (version != kOffsetCodecVersion) corrupt(key, "unsupported format version " + std::to_string(version));
  const auto flags = reader.get<std::uint8_t>();
  if ((flags & ~kKnownFlags) != 0) corrupt(key, "unknown flags " + std::to_string(flags));

  OffsetInfo info;
  info.offset = reader.get<std::int64_t>();
  const auto micros = reader.get<std::int64_t>();
  const auto last_updated = encoding::from_epoch_micros(micros);
  if (!last_updated) corrupt(key, "last update time " + std::to_string(micros) + "us is out of range");
  info.last_updated = *last_updated;
  if (flags & kHasHighWatermark) info.high_watermark = reader.get<std::int64_t>();
  if (flags & kHasLeaderEpoch) info.leader_epoch = reader.get<std::int32_t>();
  if (flags & kHasMetadata) {
    const auto length = reader.get<std::uint32_t>();
    info.metadata = std::string(reader.take(length));
  }
  if (reader.remaining() != 0)
    corrupt(key, std::to_string(reader.remaining()) + " unexpected trailing bytes");
  if (info.offset < 0) corrupt(key, "negative offset " + std::to_string(info.offset));
  // What the stores refuse to write (validate_offset_entry) is never read back as valid.
  if (info.high_watermark && *info.high_watermark < 0) {
    corrupt(key, "negative high watermark " + std::to_string(*info.high_watermark));
  }
  return info;
}

}  // namespace processor::kafka::internal
