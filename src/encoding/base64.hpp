#pragma once
// Base64 (RFC 4648, standard alphabet, padded): binary payloads carried in text fields, such as
// the acknowledgement metadata of an offset commit.

#include <cstddef>
#include <string>
#include <string_view>

namespace processor::encoding {

// The length of the encoding of `binary_size` bytes.
inline std::size_t base64_size(std::size_t binary_size) noexcept { return (binary_size + 2) / 3 * 4; }

std::string base64_encode(std::string_view binary);

// Strict: padded, canonical (unused bits zero), nothing outside the alphabet.
// Throws StateError(Corruption) "corrupt <what>: <why>" for anything else.
std::string base64_decode(std::string_view text, std::string_view what);

}  // namespace processor::encoding
