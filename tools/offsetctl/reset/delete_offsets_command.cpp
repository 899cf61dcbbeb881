// `offsetctl groups delete-offsets`: kafka-consumer-groups --delete-offsets (Kafka 4.4): the
// top line and the TOPIC PARTITION STATUS table as Kafka prints them.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <unordered_set>

#include "cluster_config.hpp"
#include "command.hpp"
#include "processor/error.hpp"
#include "processor/kafka/group_admin.hpp"
#include "reset/command_failure.hpp"
#include "reset/java_errors.hpp"
#include "reset/reset_command.hpp"
#include "reset/reset_plan.hpp"

namespace processor::offsetctl {
namespace {

using kafka::TopicPartition;

constexpr int kNoError = 0;

struct Row {
  TopicPartition tp;   // partition -1: a topic that could not be described
  std::string status;  // "Successful" or "Error: <exception>: <message>"
};

std::string top_line(int code, const std::string& group) {
  if (code == kNoError) return "Request succeeded for deleting offsets from group " + group + ".\n";
  const JavaError error = java_error(code);
  switch (code) {
    case 24:
    case 69:
    case 30:
    case 68:  // the group's own errors
      return "\nError: " + error.message + "\n";
    case 86:
    case 29:
    case 3:  // errors of partitions
      return "\nError: Encountered some partition-level error, see the follow-up details.\n";
    default:
      return "\nError: Encountered some unknown error: " + error.name + "\n";
  }
}

std::string table(std::vector<Row> rows) {
  std::size_t topic_width = 15;
  for (const auto& row : rows) topic_width = std::max(topic_width, row.tp.topic.size());
  // Kafka sorts by the topic and partition written one after the other, as text.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.tp.topic + std::to_string(a.tp.partition) < b.tp.topic + std::to_string(b.tp.partition);
  });
  const auto pad = [](std::string text, std::size_t width) {
    if (text.size() < width) text.append(width - text.size(), ' ');
    return text;
  };
  std::string out = "\n" + pad("TOPIC", topic_width) + " " + pad("PARTITION", 10) + " " + pad("STATUS", 15);
  for (const auto& row : rows) {
    out += "\n" + pad(row.tp.topic, topic_width) + " " +
           pad(row.tp.partition >= 0 ? std::to_string(row.tp.partition) : "-", 10) + " " +
           pad(row.status, 15);
  }
  return out + "\n";
}

}  // namespace

int run_delete_offsets(const DeleteOffsetsOptions& options, std::ostream& out, std::ostream& err) {
  return run_kafka_style(out, err, [&]() -> int {
    std::vector<TopicPartition> partitions;
    std::vector<std::string> whole_topics;
    for (const auto& argument : options.topics) {
      const TopicArgument parsed = parse_topic_argument(argument);
      if (!parsed.partitions) {
        if (std::find(whole_topics.begin(), whole_topics.end(), parsed.topic) == whole_topics.end()) {
          whole_topics.push_back(parsed.topic);
        }
        continue;
      }
      for (const std::int32_t partition : *parsed.partitions)
        partitions.emplace_back(parsed.topic, partition);
    }
    const kafka::KafkaProperties properties =
        cluster_properties(options.bootstrap_server, options.command_config);
    const std::unique_ptr<kafka::GroupAdmin> admin = kafka::GroupAdmin::create(properties, options.timeout);

    std::vector<Row> rows;
    for (const auto& topic : whole_topics) {
      try {
        for (auto& tp : admin->partitions_of({topic})) partitions.push_back(std::move(tp));
      } catch (const StateError& e) {
        // A topic that does not exist, or that the principal may not describe: its row says so.
        const bool unauthorized = e.kafka_error_code() == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED;
        if (e.kind() != ErrorKind::NotFound && e.kind() != ErrorKind::InvalidArgument && !unauthorized) throw;
        err << "offsetctl: " << e.what() << "\n";
        rows.push_back(
            {TopicPartition(topic, -1),
             "Error: " +
                 java_error(unauthorized ? RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED : 3).to_string()});
      }
    }
    std::vector<TopicPartition> unique;
    std::unordered_set<TopicPartition> seen;
    for (const auto& tp : partitions) {
      if (seen.insert(tp).second) unique.push_back(tp);
    }

    int top_level = kNoError;
    try {
      for (const auto& result : admin->delete_offsets(options.group, unique)) {
        if (result.error.empty()) {
          rows.push_back({result.tp, "Successful"});
          continue;
        }
        const int code = error_code_of_text(result.error).value_or(-1);
        if (top_level == kNoError) top_level = code;
        rows.push_back({result.tp, "Error: " + (code >= 0 ? java_error(code).to_string() : result.error)});
      }
    } catch (const StateError& e) {
      if (e.kind() != ErrorKind::Kafka || !e.kafka_error_code()) throw;
      // The group's own error (it does not exist, has members, ...): every partition failed with it.
      top_level = *e.kafka_error_code();
      for (const auto& tp : unique) rows.push_back({tp, "Error: " + java_error(top_level).to_string()});
    }
    const bool any_failed = top_level != kNoError || std::any_of(rows.begin(), rows.end(), [](const Row& r) {
                              return r.status != "Successful";
                            });
    out << top_line(top_level, options.group) << table(std::move(rows));
    return any_failed ? kExitError : kExitOk;
  });
}

}  // namespace processor::offsetctl
