#pragma once
// Reads a dead-letter topic as a downstream team would: Kafka's console consumer, read_committed,
// with keys and headers; and checks one dead letter's headers (processor/kafka/failure_policy.hpp).

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "processor/kafka/failure_policy.hpp"
#include "tool_run.hpp"

namespace processor::testing {

// What kafka-console-consumer prints for `topic` from its start (at most `max_messages`; it waits
// 5 s for more), stdout and stderr together.
inline std::string console_read_dead_letters(const std::string& bootstrap, const std::string& topic,
                                             int max_messages = 2) {
  const char* script = std::getenv("KAFKA_BROKER_SCRIPT");
  const std::string broker_script =
      script != nullptr ? script : PROCESSOR_SOURCE_DIR "/scripts/kafka/broker.sh";
  const auto read =
      run_tool("bash '" + broker_script + "' tool console-consumer --bootstrap-server " + bootstrap +
               " --topic " + topic + " --from-beginning --isolation-level read_committed" +
               " --max-messages " + std::to_string(max_messages) +
               " --timeout-ms 5000 --property print.key=true --property print.headers=true");
  return read.out + read.err;
}

// The one dead letter of input record `input`:`partition`@`offset` (key `key`, value `value`,
// header origin:test) after `attempts` tries, as the console consumer printed it.
struct ExpectedDeadLetter {
  std::string input;
  int partition = 0;
  long long offset = 0;
  int attempts = 0;
  std::string exception_class;
  std::string message_start;  // the start of the failure's message
  std::string key;
  std::string value;
};

inline void expect_one_dead_letter(const std::string& printed, const ExpectedDeadLetter& expected) {
  for (const std::string& part : std::vector<std::string>{
           "origin:test", std::string(kafka::kDeadLetterTopic) + ":" + expected.input,
           std::string(kafka::kDeadLetterPartition) + ":" + std::to_string(expected.partition),
           std::string(kafka::kDeadLetterOffset) + ":" + std::to_string(expected.offset),
           std::string(kafka::kDeadLetterAttempts) + ":" + std::to_string(expected.attempts),
           std::string(kafka::kDeadLetterException) + ":" + expected.exception_class,
           std::string(kafka::kDeadLetterMessage) + ":" + expected.message_start,
           "\t" + expected.key + "\t" + expected.value}) {
    EXPECT_NE(printed.find(part), std::string::npos) << "missing '" << part << "' in:\n" << printed;
  }
  EXPECT_NE(printed.find("Processed a total of 1 messages"), std::string::npos) << printed;
}

}  // namespace processor::testing
