// offsetctl groups reset / delete-offsets against Kafka's own kafka-consumer-groups on the real
// broker (scripts/kafka/broker.sh, KAFKA_BOOTSTRAP): for each of the eight reset scenarios the
// --dry-run output is Kafka's byte for byte on the same group; resets executed by one tool read
// back identically through the other; a group with a live member is refused with Kafka's message
// and keeps its offsets; bad arguments fail with Kafka's message and change nothing.
//
// Each Kafka tool run starts a JVM (~2 s): the suite runs about a dozen.

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "consumer_groups_describe.hpp"
#include "kafka_test_support.hpp"
#include "live_group_member.hpp"
#include "processor/kafka/group_admin.hpp"

namespace processor::offsetctl {
namespace {

using kafka::GroupAdmin;
using kafka::TopicPartition;
using testing::unique_name;

// 2024-01-01T00:00:00Z: record i of every partition is stamped kBaseMs + i seconds.
constexpr std::int64_t kBaseMs = 1704067200000;

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string quoted(const std::vector<std::string>& args) {
  std::string line;
  for (const auto& arg : args) line += " '" + arg + "'";
  return line;
}

Ran run_command(const std::string& command) {
  const std::string base = ::testing::TempDir() + unique_name("offsetctl-reset");
  const int status = std::system((command + " >'" + base + ".out' 2>'" + base + ".err'").c_str());
  Ran ran{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(base + ".out"), slurp(base + ".err")};
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return ran;
}

// kafka-consumer-groups <args>.
Ran kafka_tool(const std::string& bootstrap, const std::vector<std::string>& args) {
  const char* script = std::getenv("KAFKA_BROKER_SCRIPT");
  const std::string broker_script =
      script != nullptr ? script : PROCESSOR_SOURCE_DIR "/scripts/kafka/broker.sh";
  return run_command("bash '" + broker_script + "' tool consumer-groups --bootstrap-server " + bootstrap +
                     quoted(args));
}

// offsetctl groups <subcommand> <args>.
Ran offsetctl(const std::string& bootstrap, const std::string& subcommand,
              const std::vector<std::string>& args) {
  return run_command(std::string("'") + OFFSETCTL_PATH + "' groups " + subcommand + " --bootstrap-server " +
                     bootstrap + quoted(args));
}

// The messages of the "WARN <message>" lines, without Kafka's timestamp and logger name.
std::multiset<std::string> warnings(const std::string& err) {
  static const std::regex kWarn(R"((?:\[[^\]]*\] )?WARN (New offset .*?\.)(?: \(org\.apache[^)]*\))?$)");
  std::multiset<std::string> found;
  std::istringstream lines(err);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, match, kWarn)) found.insert(match[1]);
  }
  return found;
}

std::string with_group(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The CURRENT-OFFSET column of `offsetctl groups describe` (Kafka's --describe table) for `topic`,
// by partition; -1 for "-".
std::map<int, std::int64_t> described_offsets(const std::string& output, const std::string& topic) {
  std::map<int, std::int64_t> out;
  std::istringstream lines(output);
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string group, row_topic, partition, current;
    if (!(fields >> group >> row_topic >> partition >> current)) continue;
    if (group == "GROUP") {
      in_table = true;
    } else if (in_table && row_topic == topic) {
      out[std::stoi(partition)] = current == "-" ? -1 : std::stoll(current);
    }
  }
  return out;
}

class OffsetctlReset : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty()) return;
    topic_a_ = unique_name("reset-a");
    topic_b_ = unique_name("reset-b");
    // The records are stamped in 2024: without retention.ms=-1 the broker's retention check
    // (every 5 minutes) deletes them during the run, and the log start offsets move under the test.
    const std::vector<std::pair<std::string, std::string>> keep_forever{{"retention.ms", "-1"}};
    testing::create_topic(bootstrap_, topic_a_, 6, keep_forever);
    testing::create_topic(bootstrap_, topic_b_, 3, keep_forever);
    testing::Producer producer(bootstrap_);
    for (int p = 0; p < 6; ++p) produce_stamped(producer, topic_a_, p, 4 + 3 * p);  // 4, 7, ..., 19 records
    produce_stamped(producer, topic_b_, 0, 5);
    produce_stamped(producer, topic_b_, 1, 2);  // partition 2 stays empty
    producer.flush();
  }

  void SetUp() override {
    if (bootstrap_.empty())
      GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
    admin_ =
        GroupAdmin::create({{"bootstrap.servers", bootstrap_}, {"log_level", "3"}}, std::chrono::seconds(15));
  }

  static void produce_stamped(testing::Producer& producer, const std::string& topic, int partition,
                              int count) {
    for (int i = 0; i < count; ++i) {
      const std::string value = "value-" + std::to_string(i);
      const rd_kafka_resp_err_t error = rd_kafka_producev(
          producer.handle(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(kBaseMs + i * 1000), RD_KAFKA_V_END);
      ASSERT_EQ(error, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(error);
    }
  }

  // A group with no members whose committed offsets are A: 1, 3, 5, 7, 9, 11 and B-0: 2.
  std::string seeded_group(const std::string& base) {
    const std::string group = unique_name(base);
    std::vector<std::pair<TopicPartition, std::int64_t>> offsets;
    for (int p = 0; p < 6; ++p) offsets.emplace_back(TopicPartition(topic_a_, p), 2 * p + 1);
    offsets.emplace_back(TopicPartition(topic_b_, 0), 2);
    for (const auto& result : admin_->alter_offsets(group, offsets)) EXPECT_EQ(result.error, "") << result.tp;
    return group;
  }

  std::map<std::string, std::int64_t> committed(const std::string& group) {
    std::map<std::string, std::int64_t> out;
    for (const auto& offset : admin_->committed_offsets(group)) out[offset.tp.to_key()] = offset.offset;
    return out;
  }

  static std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  // Kafka's --dry-run and offsetctl's on the same group print the same lines and warnings.
  void expect_same_dry_run(const std::string& group, const std::vector<std::string>& scenario) {
    std::vector<std::string> args{"--group", group};
    args.insert(args.end(), scenario.begin(), scenario.end());
    args.push_back("--dry-run");
    std::vector<std::string> kafka_args{"--reset-offsets"};
    kafka_args.insert(kafka_args.end(), args.begin(), args.end());
    const Ran theirs = kafka_tool(bootstrap_, kafka_args);
    const Ran ours = offsetctl(bootstrap_, "reset", args);
    ASSERT_EQ(theirs.exit_code, 0) << theirs.out << theirs.err;
    EXPECT_EQ(ours.exit_code, 0) << ours.err;
    EXPECT_NE(theirs.out.find("NEW-OFFSET"), std::string::npos) << theirs.out;
    // Kafka prints its rows and "partition is empty" notices in the iteration order of a Java
    // HashMap<TopicPartition, ...>, which we reproduce bucket by bucket. Two partitions that share
    // a bucket come in the order Kafka's client received them from the broker (the OffsetFetch and
    // ListOffsets responses), which librdkafka does not give us: with the random topic names here
    // that happens in about one run in five. So the same lines are required, in any order.
    EXPECT_EQ(sorted_lines(ours.out), sorted_lines(theirs.out)) << "ours:\n"
                                                                << ours.out << "\nKafka's:\n"
                                                                << theirs.out;
    EXPECT_EQ(warnings(ours.err), warnings(theirs.err)) << "ours:\n"
                                                        << ours.err << "\nKafka's:\n"
                                                        << theirs.err;
  }

  static std::string bootstrap_, topic_a_, topic_b_;
  std::unique_ptr<GroupAdmin> admin_;
};

std::string OffsetctlReset::bootstrap_, OffsetctlReset::topic_a_, OffsetctlReset::topic_b_;

TEST_F(OffsetctlReset, EachScenarioDryRunPrintsKafkasBytes) {
  const std::string group = seeded_group("reset-dry");
  const std::string csv = ::testing::TempDir() + unique_name("plan") + ".csv";
  std::ofstream(csv) << topic_a_ << ",0,2\n"
                     << topic_a_ << ",1,100\n"
                     << topic_a_ << ",5,6\n"
                     << topic_b_ << ",1,1\n";
  const std::vector<std::vector<std::string>> scenarios{
      {"--to-earliest", "--topic", topic_a_, "--topic", topic_b_},
      {"--to-latest", "--topic", topic_a_, "--topic", topic_b_ + ":0,2"},
      {"--to-current", "--topic", topic_a_, "--topic", topic_b_},
      {"--to-offset", "8", "--topic", topic_a_, "--topic", topic_b_},
      {"--shift-by", "-3", "--topic", topic_a_},
      {"--to-datetime", "2024-01-01T01:00:05.000+01:00", "--topic", topic_a_, "--topic", topic_b_},
      {"--by-duration", "P1DT2H", "--all-topics"},
      {"--from-file", csv},
  };
  for (const auto& scenario : scenarios) {
    SCOPED_TRACE(scenario.front());
    expect_same_dry_run(group, scenario);
  }
  EXPECT_EQ(committed(group).at(topic_a_ + ":3"), 7) << "a dry run commits nothing";
  std::remove(csv.c_str());
}

TEST_F(OffsetctlReset, ExportPrintsKafkasCsv) {
  const std::string group = seeded_group("reset-export");
  const std::vector<std::string> args{"--group",       group,        "--topic", topic_a_,   "--topic",
                                      topic_b_ + ":1", "--shift-by", "2",       "--export", "--dry-run"};
  std::vector<std::string> kafka_args{"--reset-offsets"};
  kafka_args.insert(kafka_args.end(), args.begin(), args.end());
  const Ran theirs = kafka_tool(bootstrap_, kafka_args);
  // B-1 has no committed offset: Kafka refuses to shift it, with its usage message.
  EXPECT_NE(theirs.exit_code, 0);
  const Ran refused = offsetctl(bootstrap_, "reset", args);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(theirs.err.find(refused.err), std::string::npos)
      << "ours: " << refused.err << "Kafka's: " << theirs.err;

  const std::vector<std::string> shift_a{"--group",    group, "--topic",  topic_a_,
                                         "--shift-by", "2",   "--export", "--dry-run"};
  kafka_args = {"--reset-offsets"};
  kafka_args.insert(kafka_args.end(), shift_a.begin(), shift_a.end());
  const Ran kafka_csv = kafka_tool(bootstrap_, kafka_args);
  const Ran our_csv = offsetctl(bootstrap_, "reset", shift_a);
  ASSERT_EQ(kafka_csv.exit_code, 0) << kafka_csv.err;
  EXPECT_EQ(our_csv.exit_code, 0) << our_csv.err;
  EXPECT_EQ(std::count(kafka_csv.out.begin(), kafka_csv.out.end(), '\n'), 7) << kafka_csv.out;
  EXPECT_EQ(our_csv.out, kafka_csv.out);
}

TEST_F(OffsetctlReset, ExecutedResetsReadBackTheSameThroughEitherTool) {
  const std::string group = seeded_group("reset-exec");
  const Ran ours = offsetctl(bootstrap_, "reset",
                             {"--group", group, "--topic", topic_a_, "--to-offset", "6", "--execute"});
  ASSERT_EQ(ours.exit_code, 0) << ours.out << ours.err;
  EXPECT_NE(ours.out.find("NEW-OFFSET"), std::string::npos);
  const auto described = testing::describe_group(bootstrap_, group, topic_a_);
  ASSERT_TRUE(described.has_table) << described.output;
  for (int p = 0; p < 6; ++p) {
    EXPECT_EQ(described.partitions.at(p).current_offset, std::min(6, 4 + 3 * p)) << "partition " << p;
  }

  const Ran theirs = kafka_tool(
      bootstrap_, {"--reset-offsets", "--group", group, "--topic", topic_a_, "--shift-by", "2", "--execute"});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.out << theirs.err;
  const Ran described_by_us = offsetctl(bootstrap_, "describe", {"--group", group});
  ASSERT_EQ(described_by_us.exit_code, 0) << described_by_us.out << described_by_us.err;
  const auto after = described_offsets(described_by_us.out, topic_a_);
  ASSERT_EQ(after.size(), 6u) << described_by_us.out;
  for (int p = 0; p < 6; ++p) {
    EXPECT_EQ(after.at(p), std::min(std::min(6, 4 + 3 * p) + 2, 4 + 3 * p)) << "partition " << p;
  }
  EXPECT_EQ(described_offsets(described_by_us.out, topic_b_).at(0), 2)
      << "a reset of topic A leaves topic B alone";
}

TEST_F(OffsetctlReset, AGroupWithALiveMemberIsRefusedWithKafkasMessageAndKeepsItsOffsets) {
  const std::string group = seeded_group("reset-live");
  const auto before = committed(group);
  testing::LiveGroupMember member(bootstrap_, group, {topic_a_}, "reset-test-member");

  const Ran ours =
      offsetctl(bootstrap_, "reset", {"--group", group, "--topic", topic_a_, "--to-earliest", "--execute"});
  const Ran theirs = kafka_tool(
      bootstrap_, {"--reset-offsets", "--group", group, "--topic", topic_a_, "--to-earliest", "--dry-run"});
  EXPECT_NE(ours.exit_code, 0);
  EXPECT_NE(ours.out.find("Error: Assignments can only be reset if the group '" + group +
                          "' is inactive, but the current state is Stable."),
            std::string::npos)
      << ours.out;
  EXPECT_EQ(ours.out, theirs.out);
  EXPECT_EQ(committed(group), before);
}

TEST_F(OffsetctlReset, BadArgumentsFailWithKafkasMessageAndChangeNothing) {
  const std::string group = seeded_group("reset-bad");
  const auto before = committed(group);

  const Ran datetime = offsetctl(
      bootstrap_, "reset",
      {"--group", group, "--topic", topic_a_, "--to-datetime", "2024-13-01T00:00:00.000", "--execute"});
  EXPECT_NE(datetime.exit_code, 0);
  EXPECT_EQ(
      datetime.out,
      "\nError: Executing consumer group command failed due to java.text.ParseException: Unparseable date: "
      "\"2024-13-01T00:00:00.000Z\"\n");

  const Ran junk = offsetctl(bootstrap_, "reset",
                             {"--group", group, "--topic", topic_a_ + ":0,x", "--to-earliest", "--execute"});
  EXPECT_NE(junk.exit_code, 0);
  EXPECT_EQ(junk.err, "Invalid partition 'x' specified in topic arg '" + topic_a_ + ":0,x''\n");

  const std::string csv = ::testing::TempDir() + unique_name("negative") + ".csv";
  std::ofstream(csv) << topic_a_ << ",0,3\n" << topic_a_ << ",1,-5\n";
  const Ran negative = offsetctl(bootstrap_, "reset", {"--group", group, "--from-file", csv, "--execute"});
  std::remove(csv.c_str());
  EXPECT_NE(negative.exit_code, 0);
  EXPECT_EQ(negative.err.rfind("Invalid negative offset", 0), 0u) << negative.err;
  EXPECT_NE(negative.err.find("line 2"), std::string::npos) << negative.err;

  EXPECT_EQ(committed(group), before);

  const std::string missing = unique_name("no-such-group");
  const Ran ours = offsetctl(bootstrap_, "delete-offsets", {"--group", missing, "--topic", topic_a_});
  const Ran theirs = kafka_tool(bootstrap_, {"--delete-offsets", "--group", missing, "--topic", topic_a_});
  EXPECT_NE(ours.exit_code, 0);
  EXPECT_EQ(ours.out.rfind("\nError: The group id does not exist.\n", 0), 0u) << ours.out;
  EXPECT_EQ(ours.out, theirs.out);
  EXPECT_TRUE(committed(missing).empty());
}

TEST_F(OffsetctlReset, DeleteOffsetsPrintsKafkasTableAndDeletesTheNamedPartitions) {
  const std::string ours_group = seeded_group("delete-ours");
  const std::string theirs_group = seeded_group("delete-kafka");
  const std::vector<std::string> scope{"--topic", topic_a_ + ":0,1", "--topic", topic_b_};
  std::vector<std::string> ours_args{"--group", ours_group};
  ours_args.insert(ours_args.end(), scope.begin(), scope.end());
  std::vector<std::string> theirs_args{"--delete-offsets", "--group", theirs_group};
  theirs_args.insert(theirs_args.end(), scope.begin(), scope.end());

  const Ran ours = offsetctl(bootstrap_, "delete-offsets", ours_args);
  const Ran theirs = kafka_tool(bootstrap_, theirs_args);
  EXPECT_EQ(ours.exit_code, 0) << ours.out << ours.err;
  EXPECT_EQ(ours.out, with_group(theirs.out, theirs_group, ours_group));
  const auto left = committed(ours_group);
  EXPECT_EQ(left.count(topic_a_ + ":0") + left.count(topic_a_ + ":1") + left.count(topic_b_ + ":0"), 0u);
  EXPECT_EQ(left.at(topic_a_ + ":2"), 5);
  EXPECT_EQ(committed(theirs_group), left);
}

TEST_F(OffsetctlReset, ManyPartitionsComeInKafkasOrderAndAnExecuteShowsProgress) {
  // 1,100 partitions: a HashMap of 2,048 buckets, many holding two partitions, and more than the
  // 1,000 partitions above which an --execute reports its progress.
  const std::string topic = unique_name("reset-wide");
  testing::create_topic(bootstrap_, topic, 1100);
  const std::string group = unique_name("reset-wide");
  expect_same_dry_run(group, {"--to-earliest", "--topic", topic});

  const Ran ours =
      offsetctl(bootstrap_, "reset", {"--group", group, "--topic", topic, "--to-latest", "--execute"});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  EXPECT_NE(ours.err.find("reset " + group + ": 1100/1100 partitions (100%)"), std::string::npos) << ours.err;
  EXPECT_NE(ours.err.find("ETA"), std::string::npos) << ours.err;
  EXPECT_EQ(committed(group).size(), 1100u);
}

}  // namespace
}  // namespace processor::offsetctl
