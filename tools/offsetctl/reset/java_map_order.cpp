#include "reset/java_map_order.hpp"

#include <algorithm>
#include <numeric>

namespace processor::offsetctl {
namespace {

// Java int arithmetic: two's complement, wrapping.
std::uint32_t mix(std::uint32_t hash, std::uint32_t unit) { return hash * 31U + unit; }

}  // namespace

std::vector<std::string> in_java_sized_hash_map_order(const std::vector<std::string>& keys) {
  // new HashMap<>(n): tableSizeFor(n) buckets, doubled while the entries exceed (int)(0.75 * buckets).
  std::vector<std::string> unique;
  for (const auto& key : keys) {
    if (std::find(unique.begin(), unique.end(), key) == unique.end()) unique.push_back(key);
  }
  std::size_t capacity = 1;
  while (capacity < keys.size()) capacity *= 2;
  while (unique.size() > capacity * 3 / 4) capacity *= 2;
  std::vector<std::uint32_t> buckets;
  for (const auto& key : unique) {
    const auto h = static_cast<std::uint32_t>(java_string_hash(key));
    buckets.push_back((h ^ (h >> 16)) & static_cast<std::uint32_t>(capacity - 1));
  }
  std::vector<std::size_t> order(unique.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return buckets[a] < buckets[b]; });
  std::vector<std::string> ordered;
  for (const std::size_t i : order) ordered.push_back(unique[i]);
  return ordered;
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

std::vector<std::size_t> java_hash_map_order_of_hashes(const std::vector<std::int32_t>& hashes) {
  std::vector<std::size_t> order(hashes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<std::uint32_t> buckets(hashes.size());
  for (std::size_t i = 0; i < hashes.size(); ++i) buckets[i] = java_hash_map_bucket(hashes[i], hashes.size());
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return buckets[a] < buckets[b]; });
  return order;
}

std::vector<kafka::TopicPartition> in_java_hash_map_order(
    const std::vector<kafka::TopicPartition>& partitions) {
  std::vector<std::int32_t> hashes;
  hashes.reserve(partitions.size());
  for (const auto& tp : partitions) hashes.push_back(java_topic_partition_hash(tp));
  std::vector<kafka::TopicPartition> ordered;
  ordered.reserve(partitions.size());
  for (const std::size_t i : java_hash_map_order_of_hashes(hashes)) ordered.push_back(partitions[i]);
  return ordered;
}

std::vector<std::string> in_java_hash_map_order(const std::vector<std::string>& groups) {
  std::vector<std::string> ordered;
  ordered.reserve(groups.size());
  for (const std::size_t i : java_hash_map_order(groups)) ordered.push_back(groups[i]);
  return ordered;
}

}  // namespace processor::offsetctl
