// `offsetctl groups describe|list` against Kafka's own kafka-consumer-groups (scripts/kafka/broker.sh
// tool consumer-groups) on the real broker: for the same groups, stdout, stderr and the exit code
// must be the same bytes. Each Kafka run starts a JVM (~2 s), so the groups are set up once for
// the suite and each variant runs once.
//
// The LEADER-EPOCH column of --verbose: offsets committed with the leader epoch of their record
// (KIP-320) show it in both tools; offsets committed without one (an outsider's commit) show "-".

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kafka_test_support.hpp"
#include "live_group_member.hpp"
#include "owned_broker.hpp"
#include "processor/kafka/group_admin.hpp"
#include "tool_run.hpp"

namespace processor::offsetctl {
namespace {

using testing::unique_name;

using testing::run_tool;
using testing::ToolRun;

std::string kafka_broker_script() {
  const std::string script = testing::broker_script();
  return script.empty() ? PROCESSOR_SOURCE_DIR "/scripts/kafka/broker.sh" : script;
}

class OffsetctlDescribe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty()) return;
    topic_ = unique_name("describe");
    empty_topic_ = unique_name("describe-empty");
    stable_group_ = unique_name("describe-stable");
    empty_group_ = unique_name("describe-empty-group");
    testing::create_topic(bootstrap_, topic_, 3);
    testing::create_topic(bootstrap_, empty_topic_, 2);
    testing::Producer producer(bootstrap_);
    producer.produce(topic_, 0, 5);
    producer.produce(topic_, 1, 2);
    producer.produce(topic_, 2, 4);

    // Two live members of a classic group over both topics (range: 3 and 2 partitions); offsets
    // committed for two partitions only, none for the empty topic.
    first_ = std::make_unique<testing::LiveGroupMember>(
        bootstrap_, stable_group_, std::vector<std::string>{topic_, empty_topic_}, "describe-a");
    second_ = std::make_unique<testing::LiveGroupMember>(
        bootstrap_, stable_group_, std::vector<std::string>{topic_, empty_topic_}, "describe-b");
    wait_until_stable_with_two_members();
    first_->commit({{{topic_, 0}, 3}, {{topic_, 2}, 1}});

    // A group whose members are gone: committed offsets, no members.
    testing::commit_as_outsider(bootstrap_, empty_group_,
                                {{{topic_, 0}, 2}, {{topic_, 1}, 2}, {{empty_topic_, 0}, 0}});
  }

  static void TearDownTestSuite() {
    second_.reset();
    first_.reset();
  }

  static void wait_until_stable_with_two_members() {
    auto admin = kafka::GroupAdmin::create({{"bootstrap.servers", bootstrap_}, {"log_level", "3"}});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto group = admin->describe_groups({stable_group_}).at(0);
      if (group.state == "Stable" && group.members.size() == 2 && !group.members[0].assignment.empty() &&
          !group.members[1].assignment.empty()) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    FAIL() << "group " << stable_group_ << " did not become Stable with two members";
  }

  void SetUp() override {
    if (bootstrap_.empty())
      GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
  }

  static ToolRun kafka_tool(const std::string& action, const std::string& args,
                            const std::string& bootstrap = bootstrap_) {
    return run_tool("bash '" + kafka_broker_script() + "' tool consumer-groups --bootstrap-server " +
                    bootstrap + " " + action + " " + args);
  }
  static ToolRun offsetctl(const std::string& command, const std::string& args,
                           const std::string& bootstrap = bootstrap_) {
    return run_tool(std::string("'") + OFFSETCTL_PATH + "' groups " + command + " --bootstrap-server " +
                    bootstrap + " " + args);
  }

  // Kafka's `--describe <args>` and our `describe <args>` print the same bytes and exit alike.
  static void expect_same_describe(const std::string& args) {
    const ToolRun kafka = kafka_tool("--describe", args);
    const ToolRun ours = offsetctl("describe", args);
    EXPECT_EQ(ours.out, kafka.out) << "stdout of describe " << args;
    EXPECT_EQ(ours.err, kafka.err) << "stderr of describe " << args;
    EXPECT_EQ(ours.exit_code, kafka.exit_code) << "exit code of describe " << args;
  }

  static std::string bootstrap_, topic_, empty_topic_, stable_group_, empty_group_;
  static std::unique_ptr<testing::LiveGroupMember> first_, second_;
};

std::string OffsetctlDescribe::bootstrap_, OffsetctlDescribe::topic_, OffsetctlDescribe::empty_topic_,
    OffsetctlDescribe::stable_group_, OffsetctlDescribe::empty_group_;
std::unique_ptr<testing::LiveGroupMember> OffsetctlDescribe::first_, OffsetctlDescribe::second_;

TEST_F(OffsetctlDescribe, StableGroupWithLiveMembersUncommittedPartitionsAndAnEmptyTopicPrintsAsKafka) {
  const ToolRun kafka = kafka_tool("--describe", "--group " + stable_group_);
  // What is compared: both members' rows, "-" where nothing is committed, the empty topic's zeros.
  EXPECT_NE(kafka.out.find("describe-a"), std::string::npos) << kafka.out;
  EXPECT_NE(kafka.out.find("describe-b"), std::string::npos) << kafka.out;
  EXPECT_NE(kafka.out.find(empty_topic_), std::string::npos) << kafka.out;
  const ToolRun ours = offsetctl("describe", "--group " + stable_group_);
  EXPECT_EQ(ours.out, kafka.out);
  EXPECT_EQ(ours.err, kafka.err);
  EXPECT_EQ(ours.exit_code, kafka.exit_code);
  for (const char* variant : {"--offsets --verbose", "--members", "--members --verbose", "--state"}) {
    expect_same_describe(std::string("--group ") + stable_group_ + " " + variant);
  }
}

TEST_F(OffsetctlDescribe, EmptyGroupWithCommittedOffsetsPrintsAsKafka) {
  for (const char* variant : {"", "--verbose", "--members", "--members --verbose", "--state"}) {
    expect_same_describe(std::string("--group ") + empty_group_ + " " + variant);
  }
}

TEST_F(OffsetctlDescribe, RebalancingGroupPrintsKafkasWarning) {
  // A member that stops polling never rejoins, so a second member's arrival holds the group in
  // PreparingRebalance while both tools describe it.
  const std::string group = unique_name("describe-rebalancing");
  testing::LiveGroupMember stalled(bootstrap_, group, {topic_}, "describe-stalled");
  stalled.commit({{{topic_, 1}, 1}});
  stalled.stop_polling();
  testing::LiveGroupMember joining(bootstrap_, group, {topic_}, "describe-joining",
                                   /*wait_for_assignment=*/false);
  auto admin = kafka::GroupAdmin::create({{"bootstrap.servers", bootstrap_}, {"log_level", "3"}});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (admin->describe_groups({group}).at(0).state != "PreparingRebalance" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(admin->describe_groups({group}).at(0).state, "PreparingRebalance");
  const ToolRun kafka = kafka_tool("--describe", "--group " + group);
  EXPECT_EQ(kafka.err, "\nWarning: Consumer group '" + group + "' is rebalancing.\n");
  const ToolRun ours = offsetctl("describe", "--group " + group);
  EXPECT_EQ(ours.out, kafka.out);
  EXPECT_EQ(ours.err, kafka.err);
  EXPECT_EQ(ours.exit_code, kafka.exit_code);
  for (const char* variant : {"--members", "--state"})
    expect_same_describe("--group " + group + " " + variant);
}

// Kafka 4's consumer group protocol (KIP-848) has states of its own while partitions move:
// Assigning, then Reconciling until every member has taken its target assignment. A member that
// stops polling never acknowledges its revocation, so a second member's arrival holds the group
// in Reconciling while both tools describe it (librdkafka 2.14 knows neither state's name: it
// answers "Unknown", which Kafka's tool refuses as a state).
TEST_F(OffsetctlDescribe, ConsumerProtocolGroupReconcilingPrintsKafkasWarning) {
  const std::string group = unique_name("describe-reconciling");
  testing::LiveGroupMember stalled(bootstrap_, group, {topic_}, "describe-owner",
                                   /*wait_for_assignment=*/true,
                                   /*instance_id=*/"", "consumer");
  stalled.stop_polling();
  testing::LiveGroupMember joining(bootstrap_, group, {topic_}, "describe-newcomer",
                                   /*wait_for_assignment=*/false, /*instance_id=*/"", "consumer");
  auto admin = kafka::GroupAdmin::create({{"bootstrap.servers", bootstrap_}, {"log_level", "3"}});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  kafka::GroupDescription described;
  while (std::chrono::steady_clock::now() < deadline) {
    described = admin->describe_groups({group}).at(0);
    if (described.members.size() == 2 && described.state == "Reconciling") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(described.members.size(), 2u);
  EXPECT_EQ(described.state, "Reconciling");
  EXPECT_EQ(described.type, "Consumer");
  const ToolRun kafka = kafka_tool("--describe", "--group " + group + " --members");
  EXPECT_EQ(kafka.err, "\nWarning: Consumer group '" + group + "' is rebalancing.\n");
  EXPECT_NE(kafka.out.find("describe-newcomer"), std::string::npos) << kafka.out;
  const ToolRun ours = offsetctl("describe", "--group " + group + " --members");
  EXPECT_EQ(ours.out, kafka.out);
  EXPECT_EQ(ours.err, kafka.err);
  EXPECT_EQ(ours.exit_code, kafka.exit_code);
  // The listing names the state too (librdkafka lists it as Unknown).
  bool listed = false;
  for (const auto& listing : admin->list_groups()) {
    if (listing.group == group) {
      listed = true;
      EXPECT_EQ(listing.state, "Reconciling");
    }
  }
  EXPECT_TRUE(listed) << group << " is not listed";
  const ToolRun kafka_list = kafka_tool("--list", "--state reconciling");
  const ToolRun ours_list = offsetctl("list", "--state reconciling");
  EXPECT_NE(kafka_list.out.find(group), std::string::npos) << kafka_list.out;
  EXPECT_NE(ours_list.out.find(group), std::string::npos) << ours_list.out << ours_list.err;
  // (--verbose adds the member and group epochs, which librdkafka does not pass on: README.)
  for (const char* variant : {"", "--offsets", "--state"})
    expect_same_describe("--group " + group + " " + variant);
}

TEST_F(OffsetctlDescribe, StaticMemberAddsTheGroupInstanceIdColumn) {
  const std::string group = unique_name("describe-static");
  testing::LiveGroupMember member(bootstrap_, group, {topic_, empty_topic_}, "describe-static-client",
                                  /*wait_for_assignment=*/true, "describe-instance-with-a-long-id");
  for (const char* variant : {"--members", "--members --verbose"})
    expect_same_describe("--group " + group + " " + variant);
}

TEST_F(OffsetctlDescribe, GroupThatDoesNotExistPrintsKafkasErrorAndExitsOne) {
  const std::string missing = unique_name("describe-missing");
  for (const char* variant : {"", "--state"}) {
    const ToolRun kafka = kafka_tool("--describe", "--group " + missing + " " + variant);
    const ToolRun ours = offsetctl("describe", "--group " + missing + " " + variant);
    EXPECT_EQ(ours.out, kafka.out);
    // Kafka exits 0 after printing the error, which a script cannot tell from success; we exit 1.
    EXPECT_EQ(kafka.exit_code, 0);
    EXPECT_EQ(ours.exit_code, 1);
    // Kafka adds the JVM's stack trace of the GroupIdNotFoundException on stderr; we do not.
    EXPECT_EQ(kafka.err.rfind("java.util.concurrent.ExecutionException", 0), 0u) << kafka.err;
    EXPECT_EQ(ours.err, "");
  }
}

TEST_F(OffsetctlDescribe, AllGroupsAndListPrintAsKafka) {
  // --all-groups and --list print every group of the cluster. On the shared broker other tests
  // create and change groups while this one compares two runs, so this test owns a broker whose
  // only groups are its own: a stable group with a live member, an empty group, and enough groups
  // for --list's Java HashMap order to resize (more than 12).
  const std::string script = testing::broker_script();
  if (script.empty()) GTEST_SKIP() << "KAFKA_BROKER_SCRIPT is not set: this test starts a broker of its own";
  testing::OwnedBroker broker(script,
                              std::filesystem::temp_directory_path() / unique_name("processor-describe-all"));
  const std::string& bootstrap = broker.bootstrap();
  const std::string topic = unique_name("all");
  testing::create_topic(bootstrap, topic, 2);
  testing::Producer producer(bootstrap);
  producer.produce(topic, 0, 3);
  const std::string stable = unique_name("all-stable");
  const testing::LiveGroupMember member(bootstrap, stable, {topic}, "all-member",
                                        /*wait_for_assignment=*/true);
  testing::commit_as_outsider(bootstrap, unique_name("all-empty"), {{{topic, 0}, 1}, {{topic, 1}, 0}});
  for (int i = 0; i < 12; ++i)
    testing::commit_as_outsider(bootstrap, unique_name("all-list"), {{{topic, 0}, 1}});

  for (const std::string& args : {std::string("--all-groups"), std::string("--all-groups --state")}) {
    const ToolRun kafka = kafka_tool("--describe", args, bootstrap);
    const ToolRun ours = offsetctl("describe", args, bootstrap);
    EXPECT_NE(kafka.out.find(stable), std::string::npos) << kafka.out;
    EXPECT_EQ(ours.out, kafka.out) << args;
    EXPECT_EQ(ours.err, kafka.err) << args;
    EXPECT_EQ(ours.exit_code, kafka.exit_code) << args;
  }
  for (const std::string& args : {std::string(""), std::string("--state")}) {
    const ToolRun kafka = kafka_tool("--list", args, bootstrap);
    const ToolRun ours = offsetctl("list", args, bootstrap);
    // Byte for byte: Kafka's HashMap order, groups sharing a bucket in the brokers' order.
    EXPECT_EQ(ours.out, kafka.out) << "--list " << args;
    EXPECT_EQ(ours.err, kafka.err) << "--list " << args;
    EXPECT_EQ(ours.exit_code, kafka.exit_code) << "--list " << args;
  }
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

TEST_F(OffsetctlDescribe, BadArgumentsPrintKafkasMessageAndExitOne) {
  // Kafka follows its message with the whole usage text; we print the message alone.
  const ToolRun kafka_no_group = kafka_tool("--describe", "");
  const ToolRun ours_no_group = offsetctl("describe", "");
  EXPECT_EQ(kafka_no_group.exit_code, 1);
  EXPECT_EQ(ours_no_group.exit_code, 1);
  EXPECT_EQ(ours_no_group.out, kafka_no_group.out);
  // Kafka names the two options in hash-set order, which varies between runs.
  const std::string said = first_line(kafka_no_group.err);
  EXPECT_TRUE(said == "Option [describe] takes one of these options: [group], [all-groups]" ||
              said == "Option [describe] takes one of these options: [all-groups], [group]")
      << said;
  EXPECT_EQ(ours_no_group.err, "Option [describe] takes one of these options: [group], [all-groups]\n");

  const ToolRun kafka_unknown = kafka_tool("--describe", "--group g --bogus");
  const ToolRun ours_unknown = offsetctl("describe", "--group g --bogus");
  EXPECT_EQ(kafka_unknown.exit_code, 1);
  EXPECT_EQ(ours_unknown.exit_code, 1);
  // Kafka: an uncaught joptsimple exception, its message after the exception's class name.
  EXPECT_NE(first_line(kafka_unknown.err).find("bogus is not a recognized option"), std::string::npos);
  EXPECT_EQ(ours_unknown.err, "bogus is not a recognized option\n");
  EXPECT_EQ(ours_unknown.out, "");

  const ToolRun ours_two_views = offsetctl("describe", "--group g --members --state");
  EXPECT_EQ(ours_two_views.exit_code, 1);
  EXPECT_EQ(ours_two_views.err,
            "Option [describe] takes at most one of these options: [members], [offsets], [state]\n");
}

TEST_F(OffsetctlDescribe, JsonOutputHoldsTheSameRows) {
  const ToolRun ours = offsetctl("describe", "--group " + stable_group_ + " --output json");
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  const auto document = nlohmann::json::parse(ours.out);
  ASSERT_EQ(document.at("groups").size(), 1u);
  const auto& group = document["groups"][0];
  EXPECT_EQ(group.at("group"), stable_group_);
  EXPECT_EQ(group.at("state"), "Stable");
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : group.at("offsets")) {
    rows[row.at("topic").get<std::string>() + ":" + std::to_string(row.at("partition").get<int>())] = row;
  }
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[topic_ + ":0"].at("current_offset"), 3);
  EXPECT_EQ(rows[topic_ + ":0"].at("log_end_offset"), 5);
  EXPECT_EQ(rows[topic_ + ":0"].at("lag"), 2);
  EXPECT_TRUE(rows[topic_ + ":1"].at("current_offset").is_null());
  EXPECT_TRUE(rows[topic_ + ":1"].at("lag").is_null());
  EXPECT_EQ(rows[empty_topic_ + ":0"].at("log_end_offset"), 0);
  EXPECT_TRUE(rows[topic_ + ":0"].at("leader_epoch").is_null());
  for (const auto& [key, row] : rows)
    EXPECT_TRUE(row.at("client_id") == "describe-a" || row.at("client_id") == "describe-b") << key;

  const ToolRun missing =
      offsetctl("describe", "--group " + unique_name("describe-missing") + " --output json");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_NE(missing.err.find("not found"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace processor::offsetctl
