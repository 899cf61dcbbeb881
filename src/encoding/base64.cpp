#include "encoding/base64.hpp"

#include <cstdint>

#include "processor/error.hpp"

namespace processor::encoding {
namespace {

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) noexcept {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

[[noreturn]] void corrupt_base64(std::string_view what, const std::string& why) {
  throw StateError(ErrorKind::Corruption, "corrupt " + std::string(what) + ": " + why);
}

}  // namespace

std::string base64_encode(std::string_view binary) {
  std::string out;
  out.reserve(base64_size(binary.size()));
  std::size_t i = 0;
  auto byte = [&](std::size_t at) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(binary[at]));
  };
  for (; i + 3 <= binary.size(); i += 3) {
    const std::uint32_t group = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kBase64Alphabet[(group >> shift) & 0x3f]);
  }
  if (const std::size_t rest = binary.size() - i; rest > 0) {
    const std::uint32_t group = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    out.push_back(kBase64Alphabet[(group >> 18) & 0x3f]);
    out.push_back(kBase64Alphabet[(group >> 12) & 0x3f]);
    out.push_back(rest == 2 ? kBase64Alphabet[(group >> 6) & 0x3f] : '=');
    out.push_back('=');
  }
  return out;
}

std::string base64_decode(std::string_view text, std::string_view what) {
  if (text.size() % 4 != 0)
    corrupt_base64(what, "base64 length " + std::to_string(text.size()) + " is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last_group = i + 4 == text.size();
    const int padding = last_group ? (text[i + 3] == '=') + (text[i + 3] == '=' && text[i + 2] == '=') : 0;
    std::uint32_t group = 0;
    for (int k = 0; k < 4; ++k) {
      const int value = k >= 4 - padding ? 0 : base64_value(text[i + k]);
      if (value < 0) corrupt_base64(what, "not base64 at character " + std::to_string(i + k));
      group = group << 6 | static_cast<std::uint32_t>(value);
    }
    if ((padding == 1 && (group & 0xff) != 0) || (padding == 2 && (group & 0xffff) != 0)) {
      corrupt_base64(what, "non-canonical base64 padding");
    }
    out.push_back(static_cast<char>(group >> 16));
    if (padding < 2) out.push_back(static_cast<char>((group >> 8) & 0xff));
    if (padding < 1) out.push_back(static_cast<char>(group & 0xff));
  }
  return out;
}

}  // namespace processor::encoding
