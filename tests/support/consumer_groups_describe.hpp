#pragma once
// Kafka's own view of a group, for cross-checks: ConsumerGroupCommand (kafka-consumer-groups
// --describe), run through scripts/kafka/broker.sh against the real broker, its table parsed.

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

namespace processor::testing {

// One row of the describe table; -1 where Kafka prints "-" (no committed offset).
struct DescribedPartition {
  std::int64_t current_offset = -1;
  std::int64_t log_end_offset = -1;
  std::int64_t lag = -1;
};

struct DescribedGroup {
  std::map<int, DescribedPartition> partitions;  // the rows of `topic`, by partition
  bool has_table = false;  // false when Kafka printed no table (e.g. the group does not exist)
  std::string output;      // what the tool printed, for failure messages
};

inline DescribedGroup describe_group(const std::string& bootstrap, const std::string& group,
                                     const std::string& topic) {
  const char* script = std::getenv("KAFKA_BROKER_SCRIPT");
  const std::string broker_script =
      script != nullptr ? script : std::string(PROCESSOR_SOURCE_DIR "/scripts/kafka/broker.sh");
  const std::string command = "bash '" + broker_script + "' tool consumer-groups --bootstrap-server " +
                              bootstrap + " --describe --group '" + group + "' 2>&1";
  DescribedGroup described;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 4096> buffer;
    while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) described.output += buffer.data();
    pclose(pipe);
  }
  std::istringstream lines(described.output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string group_field, topic_field, partition, current, log_end, lag;
    if (!(fields >> group_field >> topic_field >> partition >> current >> log_end >> lag)) continue;
    if (group_field == "GROUP") {
      described.has_table = true;
      continue;
    }
    if (!described.has_table || topic_field != topic) continue;
    DescribedPartition row;
    row.current_offset = current == "-" ? -1 : std::stoll(current);
    row.log_end_offset = log_end == "-" ? -1 : std::stoll(log_end);
    row.lag = lag == "-" ? -1 : std::stoll(lag);
    described.partitions[std::stoi(partition)] = row;
  }
  return described;
}

}  // namespace processor::testing
