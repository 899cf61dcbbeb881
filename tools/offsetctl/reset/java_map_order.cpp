#include "reset/java_map_order.hpp"

#include <algorithm>
#include <numeric>

namespace processor::offsetctl {
namespace {

// Java int arithmetic: two's complement, wrapping.
std::uint32_t mix(std::uint32_t hash, std::uint32_t unit) { return hash * 31U + unit; }

// Decodes one UTF-8 sequence at `at`; returns the code point (or the byte itself when invalid).
std::uint32_t next_code_point(std::string_view text, std::size_t& at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length <= 1 || at + length > text.size()) {
    ++at;
    return lead;
  }
  std::uint32_t code = lead & (0xFFU >> (length + 1));
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) {
      ++at;
      return lead;
    }
    code = (code << 6) | (byte(at + i) & 0x3FU);
  }
  at += length;
  return code;
}

}  // namespace

std::int32_t java_string_hash(std::string_view text) {
  std::uint32_t hash = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::uint32_t code = next_code_point(text, at);
    if (code >= 0x10000) {  // a surrogate pair in Java's UTF-16
      hash = mix(hash, 0xD800U + ((code - 0x10000) >> 10));
      hash = mix(hash, 0xDC00U + ((code - 0x10000) & 0x3FFU));
    } else {
      hash = mix(hash, code);
    }
  }
  return static_cast<std::int32_t>(hash);
}

std::int32_t java_topic_partition_hash(const kafka::TopicPartition& tp) {
  std::uint32_t result = 31U + static_cast<std::uint32_t>(tp.partition);
  result = mix(result, static_cast<std::uint32_t>(java_string_hash(tp.topic)));
  return static_cast<std::int32_t>(result);
}

std::uint32_t java_hash_map_bucket(std::int32_t hash, std::size_t entries) {
  std::size_t capacity = 16;
  while (entries * 4 > capacity * 3) capacity *= 2;  // resized once size exceeds 0.75 * capacity
  const auto h = static_cast<std::uint32_t>(hash);
  return (h ^ (h >> 16)) & static_cast<std::uint32_t>(capacity - 1);
}

std::vector<std::size_t> java_hash_map_order(const std::vector<std::int32_t>& hashes) {
  std::vector<std::size_t> order(hashes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<std::uint32_t> buckets(hashes.size());
  for (std::size_t i = 0; i < hashes.size(); ++i) buckets[i] = java_hash_map_bucket(hashes[i], hashes.size());
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return buckets[a] < buckets[b]; });
  return order;
}

std::vector<kafka::TopicPartition> in_java_hash_map_order(const std::vector<kafka::TopicPartition>& partitions) {
  std::vector<std::int32_t> hashes;
  hashes.reserve(partitions.size());
  for (const auto& tp : partitions) hashes.push_back(java_topic_partition_hash(tp));
  std::vector<kafka::TopicPartition> ordered;
  ordered.reserve(partitions.size());
  for (const std::size_t i : java_hash_map_order(hashes)) ordered.push_back(partitions[i]);
  return ordered;
}

std::vector<std::string> in_java_hash_map_order(const std::vector<std::string>& groups) {
  std::vector<std::int32_t> hashes;
  hashes.reserve(groups.size());
  for (const auto& group : groups) hashes.push_back(java_string_hash(group));
  std::vector<std::string> ordered;
  ordered.reserve(groups.size());
  for (const std::size_t i : java_hash_map_order(hashes)) ordered.push_back(groups[i]);
  return ordered;
}

}  // namespace processor::offsetctl
