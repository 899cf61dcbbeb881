#include "groups/java_hash_order.hpp"

#include <algorithm>
#include <numeric>

namespace processor::offsetctl {
namespace {

// Decodes one UTF-8 code point at text[*i], advancing *i; U+FFFD for a malformed sequence.
std::uint32_t next_code_point(std::string_view text, std::size_t* i) {
  const auto byte = [&](std::size_t at) { return static_cast<unsigned char>(text[at]); };
  const unsigned char lead = byte(*i);
  std::size_t length = lead < 0x80           ? 1
                       : (lead >> 5) == 0x6  ? 2
                       : (lead >> 4) == 0xE  ? 3
                       : (lead >> 3) == 0x1E ? 4
                                             : 0;
  if (length == 0 || *i + length > text.size()) {
    ++*i;
    return 0xFFFD;
  }
  std::uint32_t code = length == 1 ? lead : lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(*i + k) & 0xC0) != 0x80) {
      ++*i;
      return 0xFFFD;
    }
    code = (code << 6) | (byte(*i + k) & 0x3F);
  }
  *i += length;
  return code;
}

}  // namespace

std::int32_t java_string_hash(std::string_view text) {
  std::uint32_t hash = 0;  // Java's int arithmetic wraps; unsigned arithmetic wraps the same way
  for (std::size_t i = 0; i < text.size();) {
    const std::uint32_t code = next_code_point(text, &i);
    if (code < 0x10000) {
      hash = 31 * hash + code;
    } else {  // a surrogate pair
      hash = 31 * hash + (0xD800 + ((code - 0x10000) >> 10));
      hash = 31 * hash + (0xDC00 + ((code - 0x10000) & 0x3FF));
    }
  }
  return static_cast<std::int32_t>(hash);
}

std::vector<std::size_t> java_hash_map_order(const std::vector<std::string>& keys) {
  // HashMap starts with 16 buckets and doubles whenever its size passes 3/4 of them; splitting a
  // bucket keeps its keys' relative order, so the final table decides the order.
  std::size_t buckets = 16;
  while (keys.size() > buckets / 4 * 3) buckets *= 2;
  std::vector<std::size_t> bucket_of(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto hash = static_cast<std::uint32_t>(java_string_hash(keys[i]));
    bucket_of[i] = (hash ^ (hash >> 16)) & (buckets - 1);  // HashMap.hash() spreads the high bits
  }
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bucket_of[a] < bucket_of[b]; });
  return order;
}

}  // namespace processor::offsetctl
