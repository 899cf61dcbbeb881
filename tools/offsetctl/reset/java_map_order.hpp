#pragma once
// The iteration order of a java.util.HashMap<TopicPartition, ?>, which kafka-consumer-groups
// --reset-offsets prints its rows in (and writes its --export CSV in). offsetctl orders its rows
// the same way so that its output equals Kafka's byte for byte. Builds on java_hash_order.hpp
// (String keys, for --list).
//
// A HashMap built with default capacity iterates by bucket, (h ^ (h >>> 16)) & (capacity - 1),
// capacity the smallest power of two >= 16 that holds the entries at load factor 0.75; entries of
// one bucket come in insertion order. Kafka builds its maps from the partitions in the order it
// got them, so a stable sort by bucket of the input order gives its order.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "groups/java_hash_order.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::offsetctl {

// org.apache.kafka.common.TopicPartition.hashCode().
std::int32_t java_topic_partition_hash(const kafka::TopicPartition& tp);

// The bucket index of the Java hash `hash` in a HashMap holding `entries` entries.
std::uint32_t java_hash_map_bucket(std::int32_t hash, std::size_t entries);

// The positions 0..hashes.size()-1 of the entries, in the order a HashMap into which they were
// put in this order iterates them.
std::vector<std::size_t> java_hash_map_order_of_hashes(const std::vector<std::int32_t>& hashes);

// `partitions` reordered as a HashMap<TopicPartition, ...> built from them iterates.
std::vector<kafka::TopicPartition> in_java_hash_map_order(
    const std::vector<kafka::TopicPartition>& partitions);

// `groups` reordered as a HashMap<String, ...> built from them iterates.
std::vector<std::string> in_java_hash_map_order(const std::vector<std::string>& groups);

// `keys` (duplicates dropped) in the order a `new HashMap<String, ...>(keys.size())` into which
// they were put in this order iterates them: the map of describeTopics(keys), whose order gives
// --reset-offsets the order of the partitions of topics named without partitions. Such a map
// starts smaller than the default 16 buckets, so its order differs from in_java_hash_map_order's.
std::vector<std::string> in_java_sized_hash_map_order(const std::vector<std::string>& keys);

}  // namespace processor::offsetctl
