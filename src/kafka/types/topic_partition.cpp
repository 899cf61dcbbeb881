#include "processor/kafka/topic_partition.hpp"

#include <string>

#include "processor/error.hpp"

namespace processor::kafka {

std::string partition_key(std::string_view topic, std::int32_t partition) {
  std::string key;
  key.reserve(topic.size() + 12);
  key.append(topic).push_back(':');
  key += std::to_string(partition);
  return key;
}

std::string TopicPartition::to_key() const { return partition_key(topic, partition); }

std::string to_string(const TopicPartition& tp) { return tp.to_key(); }

std::ostream& operator<<(std::ostream& out, const TopicPartition& tp) {
  return out << tp.topic << ':' << tp.partition;
}

namespace {

bool legal_topic_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

// Quotes a name for an error message, escaping what would make the message ambiguous.
std::string quoted(std::string_view name) {
  constexpr std::size_t kShown = 64;
  std::string out = "'";
  for (char c : name.substr(0, kShown)) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\'' || c == '\\' ||
        static_cast<unsigned char>(c) >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xf];
      out += kHex[static_cast<unsigned char>(c) & 0xf];
    } else {
      out += c;
    }
  }
  if (name.size() > kShown) out += "...";
  return out + "'";
}

}  // namespace

void validate_topic(std::string_view topic) {
  if (topic.empty())
    throw StateError(ErrorKind::InvalidArgument, "invalid topic '': a topic name must not be empty");
  if (topic.size() > kMaxTopicLength) {
    throw StateError(ErrorKind::InvalidArgument, "invalid topic " + quoted(topic) + ": " +
                                                     std::to_string(topic.size()) +
                                                     " characters, Kafka allows at most 249");
  }
  if (topic == "." || topic == "..") {
    throw StateError(ErrorKind::InvalidArgument,
                     "invalid topic " + quoted(topic) + ": '.' and '..' are not allowed");
  }
  for (std::size_t i = 0; i < topic.size(); ++i) {
    if (!legal_topic_char(topic[i])) {
      throw StateError(ErrorKind::InvalidArgument, "invalid topic " + quoted(topic) + ": character " +
                                                       quoted(topic.substr(i, 1)) + " at position " +
                                                       std::to_string(i) + " is not in [a-zA-Z0-9._-]");
    }
  }
}

void validate_partition(std::string_view topic, std::int32_t partition) {
  if (partition < 0) {
    throw StateError(ErrorKind::InvalidArgument, "invalid partition " + std::to_string(partition) +
                                                     " of topic " + quoted(topic) +
                                                     ": partitions are numbered from 0");
  }
}

void validate_topic_partition(const TopicPartition& tp) {
  validate_topic(tp.topic);
  validate_partition(tp.topic, tp.partition);
}

}  // namespace processor::kafka
