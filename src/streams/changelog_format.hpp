#pragma once
// The byte formats of the streams state: the changelog record value, and the local changelog
// position kept with each store partition in RocksDB. Both are read back from Kafka or disk, so
// the decoders treat them as untrusted (tests/fuzz/fuzz_changelog_record.cpp). Internal.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace processor::streams::internal {

// A changelog record's value is one version byte (kChangelogVersion) and the store value; a
// removed key is a tombstone (a null Kafka value, which compaction deletes).
inline constexpr std::uint8_t kChangelogVersion = 1;

void append_changelog_value(std::string& out, std::string_view value);
// Whether `bytes` is a changelog value decode_changelog_value() accepts: not empty, of this version.
inline bool is_changelog_value(std::string_view bytes) noexcept {
  return !bytes.empty() && static_cast<std::uint8_t>(bytes[0]) == kChangelogVersion;
}
// Throws decode_changelog_value()'s StateError(Corruption) for `bytes`, which is not one.
[[noreturn]] void throw_corrupt_changelog_value(std::string_view bytes, std::string_view where);

// The store value in a changelog record's value. Throws StateError(Corruption) naming `where`
// (e.g. "counts-changelog:3@1234") for an empty value or an unknown version.
inline std::string_view decode_changelog_value(std::string_view bytes, std::string_view where) {
  if (!is_changelog_value(bytes)) throw_corrupt_changelog_value(bytes, where);
  return bytes.substr(1);
}
// The same, with `where()` called only for the error: a restore names no record it reads well.
template <typename Where>
requires std::is_invocable_r_v<std::string, Where&> std::string_view decode_changelog_value(
    std::string_view bytes, Where&& where) {
  if (!is_changelog_value(bytes)) throw_corrupt_changelog_value(bytes, where());
  return bytes.substr(1);
}

// A store partition's local position: every changelog record below `position` is applied to the
// local state, and nothing else is. Stored as version byte, int64 LE, crc32c of both.
inline constexpr std::uint8_t kPositionVersion = 1;
std::string encode_position(std::int64_t position);
// Throws StateError(Corruption) naming `key` for a wrong size, version or checksum, or a
// negative position.
std::int64_t decode_position(std::string_view bytes, std::string_view key);

}  // namespace processor::streams::internal
