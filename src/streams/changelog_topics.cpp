#include "streams/changelog_topics.hpp"

#include <map>
#include <optional>
#include <vector>

#include "common/log_internal.hpp"
#include "kafka/rdkafka/admin_request.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "kafka/rdkafka/retry.hpp"
#include "processor/error.hpp"

namespace processor::streams::internal {
namespace {

using kafka::internal::RdPtr;

// Partition counts of the topics that exist, from one metadata request for all topics (asking
// for named topics could create them where the broker auto-creates topics).
std::map<std::string, std::int32_t> partition_counts(rd_kafka_t* rk, std::chrono::milliseconds timeout) {
  std::map<std::string, std::int32_t> counts;
  kafka::internal::with_retries(kafka::internal::RetryPolicy{timeout}, [&]() -> std::optional<StateError> {
    const rd_kafka_metadata_t* raw = nullptr;
    const rd_kafka_resp_err_t error =
        rd_kafka_metadata(rk, 1, nullptr, &raw, kafka::internal::to_timeout_ms(timeout));
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR)
      return kafka::internal::kafka_error(error, "reading the topics' metadata");
    RdPtr<const rd_kafka_metadata_t> metadata(raw);
    counts.clear();
    for (int i = 0; i < metadata->topic_cnt; ++i) {
      const auto& topic = metadata->topics[i];
      if (topic.err == RD_KAFKA_RESP_ERR_NO_ERROR) counts[topic.topic] = topic.partition_cnt;
    }
    return std::nullopt;
  });
  return counts;
}

// Creates `topics` and returns those this call created: another member starting at the same
// time may have created some of them first.
std::vector<std::string> create_topics(rd_kafka_t* rk, const std::vector<std::string>& topics,
                                       std::int32_t partitions, int replication_factor,
                                       std::chrono::milliseconds timeout) {
  std::vector<RdPtr<rd_kafka_NewTopic_t>> requests;
  std::vector<rd_kafka_NewTopic_t*> raw;
  char error_text[512];
  for (const auto& topic : topics) {
    RdPtr<rd_kafka_NewTopic_t> request(
        rd_kafka_NewTopic_new(topic.c_str(), partitions, replication_factor, error_text, sizeof error_text));
    if (!request)
      throw StateError(ErrorKind::InvalidArgument, "cannot create topic '" + topic + "': " + error_text);
    rd_kafka_NewTopic_set_config(request.get(), "cleanup.policy", "compact");
    raw.push_back(request.get());
    requests.push_back(std::move(request));
  }
  RdPtr<rd_kafka_event_t> event;
  const rd_kafka_resp_err_t error = kafka::internal::admin_request(
      rk, RD_KAFKA_ADMIN_OP_CREATETOPICS, timeout,
      [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
        rd_kafka_CreateTopics(rk, raw.data(), raw.size(), options, queue);
      },
      &event);
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw kafka::internal::kafka_error(error, "creating the changelog topics");
  std::size_t count = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &count);
  std::vector<std::string> created;
  for (std::size_t i = 0; i < count; ++i) {
    const rd_kafka_resp_err_t topic_error = rd_kafka_topic_result_error(results[i]);
    const char* name = rd_kafka_topic_result_name(results[i]);
    if (topic_error == RD_KAFKA_RESP_ERR_NO_ERROR) {
      created.emplace_back(name);
    } else if (topic_error != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      throw kafka::internal::kafka_error(topic_error, std::string("creating changelog topic '") + name + "'");
    }
    // Already there: another member created it since we looked; its partition count is checked
    // again below.
  }
  return created;
}

}  // namespace

std::int32_t ensure_changelog_topics(rd_kafka_t* rk, const std::string& input_topic,
                                     const std::vector<std::string>& changelogs, int replication_factor,
                                     std::chrono::milliseconds timeout) {
  auto counts = partition_counts(rk, timeout);
  const auto input = counts.find(input_topic);
  if (input == counts.end()) {
    throw StateError(ErrorKind::InvalidArgument, "input topic '" + input_topic + "' does not exist");
  }
  const std::int32_t partitions = input->second;
  auto check = [&](const std::string& changelog, std::int32_t count) {
    if (count != partitions) {
      throw StateError(
          ErrorKind::InvalidArgument,
          "changelog topic '" + changelog + "' has " + std::to_string(count) +
              " partitions but input topic '" + input_topic + "' has " + std::to_string(partitions) +
              ": a changelog partition holds the state of the input partition with its number; "
              "delete the changelog topic (its state is lost) or restore the input's partition count");
    }
  };
  std::vector<std::string> missing;
  for (const auto& changelog : changelogs) {
    if (const auto it = counts.find(changelog); it != counts.end()) {
      check(changelog, it->second);
    } else {
      missing.push_back(changelog);
    }
  }
  if (missing.empty()) return partitions;

  for (const auto& changelog : create_topics(rk, missing, partitions, replication_factor, timeout)) {
    processor::internal::log(LogLevel::Info, "streams", "created changelog topic '", changelog, "' (",
                             partitions, " partitions, cleanup.policy=compact)");
  }
  // The new topics' metadata reaches every broker shortly after creation.
  const kafka::internal::RetryPolicy policy{timeout, std::chrono::milliseconds(100),
                                            std::chrono::milliseconds(100)};
  kafka::internal::with_retries(policy, [&]() -> std::optional<StateError> {
    counts = partition_counts(rk, timeout);
    for (const auto& changelog : missing) {
      const auto it = counts.find(changelog);
      if (it == counts.end()) {
        return StateError(ErrorKind::Timeout,
                          "the changelog topic '" + changelog +
                              "' created is still missing from the metadata after " +
                              std::to_string(timeout.count()) + " ms",
                          RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, /*retriable=*/true);
      }
      check(changelog, it->second);
    }
    return std::nullopt;
  });
  return partitions;
}

}  // namespace processor::streams::internal
