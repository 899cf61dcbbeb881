#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace processor::kafka {

// TopicPartition names one partition of one Kafka topic. A plain value type: the constructor
// does not validate (use validate_topic_partition()), so that any stored pair can be held.
struct TopicPartition {
  std::string topic;
  std::int32_t partition = 0;

  TopicPartition() = default;
  TopicPartition(std::string topic_name, std::int32_t partition_id)
      : topic(std::move(topic_name)), partition(partition_id) {}

  // "topic:partition", e.g. "orders:3".
  std::string to_key() const;

  friend bool operator==(const TopicPartition&, const TopicPartition&) = default;
  // By topic, then partition: a key of ordered maps.
  friend auto operator<=>(const TopicPartition&, const TopicPartition&) = default;
};

// "topic:partition", e.g. "orders:3": TopicPartition::to_key() of a topic and partition not
// (yet) in a TopicPartition.
std::string partition_key(std::string_view topic, std::int32_t partition);
std::string to_string(const TopicPartition& tp);
std::ostream& operator<<(std::ostream& out, const TopicPartition& tp);

// Kafka's longest legal topic name.
inline constexpr std::size_t kMaxTopicLength = 249;

// Throws StateError(InvalidArgument) naming the topic when it is empty, longer than 249
// characters, "." or "..", or has a character outside [a-zA-Z0-9._-] — the rules the broker
// enforces.
void validate_topic(std::string_view topic);

// Throws StateError(InvalidArgument) when the partition is negative.
void validate_partition(std::string_view topic, std::int32_t partition);

// validate_topic() and validate_partition() together.
void validate_topic_partition(const TopicPartition& tp);

}  // namespace processor::kafka

template <>
struct std::hash<processor::kafka::TopicPartition> {
  std::size_t operator()(const processor::kafka::TopicPartition& tp) const noexcept {
    const std::size_t topic_hash = std::hash<std::string_view>{}(tp.topic);
    return topic_hash ^
           (static_cast<std::size_t>(static_cast<std::uint32_t>(tp.partition)) * 0x9E3779B97F4A7C15ULL);
  }
};
