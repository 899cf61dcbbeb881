#include "streams/changelog_format.hpp"

#include "encoding/crc32c.hpp"
#include "encoding/fixed.hpp"
#include "processor/error.hpp"

namespace processor::streams::internal {

namespace {

// `where` and position keys are bytes (a position key holds 0x00 and a binary partition): escaped
// as \xNN so that the message stays one readable line and what() does not end at a 0x00.
std::string printable(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size());
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '\\' || c == '\'') {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void append_changelog_value(std::string& out, std::string_view value) {
  out.reserve(out.size() + 1 + value.size());
  out.push_back(static_cast<char>(kChangelogVersion));
  out.append(value);
}

void throw_corrupt_changelog_value(std::string_view bytes, std::string_view where) {
  if (bytes.empty()) {
    throw StateError(ErrorKind::Corruption, "corrupt changelog record at " + printable(where) +
                                                ": empty value (a removal is a null value)");
  }
  const auto version = static_cast<std::uint8_t>(bytes[0]);
  throw StateError(ErrorKind::Corruption, "corrupt changelog record at " + printable(where) +
                                              ": unknown version " + std::to_string(version) + " (expected " +
                                              std::to_string(kChangelogVersion) + ")");
}

namespace {
constexpr std::size_t kPositionSize = 1 + 8 + 4;
}

std::string encode_position(std::int64_t position) {
  std::string out;
  out.reserve(kPositionSize);
  encoding::put_le<std::uint8_t>(out, kPositionVersion);
  encoding::put_le<std::int64_t>(out, position);
  encoding::put_le<std::uint32_t>(out, encoding::crc32c(out));
  return out;
}

std::int64_t decode_position(std::string_view bytes, std::string_view key) {
  auto corrupt = [&](const std::string& why) {
    return StateError(ErrorKind::Corruption,
                      "corrupt changelog position at key '" + printable(key) + "': " + why);
  };
  if (bytes.size() != kPositionSize) {
    throw corrupt("size " + std::to_string(bytes.size()) + ", expected " + std::to_string(kPositionSize));
  }
  const auto version = encoding::load_le<std::uint8_t>(bytes.data());
  if (version != kPositionVersion) throw corrupt("unknown version " + std::to_string(version));
  if (encoding::load_le<std::uint32_t>(bytes.data() + 9) != encoding::crc32c(bytes.substr(0, 9))) {
    throw corrupt("checksum mismatch");
  }
  const auto position = encoding::load_le<std::int64_t>(bytes.data() + 1);
  if (position < 0) throw corrupt("negative position " + std::to_string(position));
  return position;
}

}  // namespace processor::streams::internal
