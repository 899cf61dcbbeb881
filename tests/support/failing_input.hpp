#pragma once
// The input of the failure-policy tests on the real broker: `a b X c d` on partition 0 of a topic
// (keys k0..k4), where X, at offset 2, is the record that fails and carries a header of its own
// (origin:test) that its dead letter keeps; and the group's committed offset there as Kafka's
// kafka-consumer-groups reports it.

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <string>
#include <vector>

#include "consumer_groups_describe.hpp"
#include "kafka_test_support.hpp"
#include "processor/kafka/failure_policy.hpp"

namespace processor::testing {

inline const std::vector<std::string> kFailingInput{"a", "b", "X", "c", "d"};
constexpr std::int64_t kFailingOffset = 2;

inline void produce_failing_input(const std::string& bootstrap, const std::string& topic) {
  Producer producer(bootstrap);
  for (std::size_t i = 0; i < kFailingInput.size(); ++i) {
    const std::string key = "k" + std::to_string(i);
    const std::string& value = kFailingInput[i];
    ASSERT_EQ(rd_kafka_producev(producer.handle(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
                                RD_KAFKA_V_KEY(key.data(), key.size()),
                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                RD_KAFKA_V_HEADER("origin", "test", 4),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  producer.flush();
}

// The CURRENT-OFFSET of `topic`:0 in kafka-consumer-groups --describe of `group`; -1 for "-", -2
// when there is no row.
inline std::int64_t described_committed_offset(const std::string& bootstrap, const std::string& group,
                                               const std::string& topic) {
  const auto described = describe_group(bootstrap, group, topic);
  EXPECT_TRUE(described.has_table) << described.output;
  const auto row = described.partitions.find(0);
  return row == described.partitions.end() ? -2 : row->second.current_offset;
}

// "Fail", "Skip" or "DeadLetter", for test names.
inline const char* action_name(kafka::FailureAction action) {
  return action == kafka::FailureAction::Fail   ? "Fail"
         : action == kafka::FailureAction::Skip ? "Skip"
                                                : "DeadLetter";
}

}  // namespace processor::testing
