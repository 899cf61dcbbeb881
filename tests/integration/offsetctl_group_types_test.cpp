// Every group type a Kafka 4 cluster holds, live at once on a broker of the test's own: a classic
// group, a group of Kafka 4's consumer group protocol (KIP-848) with a live member, one whose
// members have left (Empty), and a share group (KIP-932) served by Kafka's console share consumer.
// `offsetctl groups list|describe` must print what kafka-consumer-groups prints (stdout, stderr,
// exit code), the lag monitor and /metrics must report each group's type, state and members, and
// the chart of a consumer-protocol group must render as a classic one's does.
//
// Known differences, from librdkafka (README "Group types"), asserted as such:
//  - the member and group epochs of a consumer group print as "-" (librdkafka drops them);
//  - a share group is neither listed nor described (librdkafka has no Admin API for share
//    groups): `groups describe` reports it as not found, `share-groups` says why.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "chart_screenshot.hpp"
#include "kafka_test_support.hpp"
#include "live_group_member.hpp"
#include "owned_broker.hpp"
#include "processor/kafka/group_admin.hpp"
#include "processor/monitor/group_admin_lag_source.hpp"
#include "processor/monitor/lag_chart.hpp"
#include "processor/monitor/lag_metrics.hpp"
#include "processor/monitor/lag_monitor.hpp"
#include "processor/monitor/metrics.hpp"
#include "tool_run.hpp"

namespace processor::offsetctl {
namespace {

using testing::unique_name;

using testing::run_tool;
using testing::ToolRun;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Kafka's text with the cells of `columns` (header names) replaced by "-" in every table row: the
// epochs, which librdkafka does not pass on. A cell spans from its header's start to the next
// header's start; rows are the lines after a header line, up to a blank line.
std::string without_columns(const std::string& text, const std::vector<std::string>& columns) {
  std::string out;
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // [start, end) of each masked cell
  for (std::string line : lines_of(text)) {
    if (line.rfind("GROUP ", 0) == 0) {
      spans.clear();
      for (const auto& column : columns) {
        const std::size_t start = line.find(" " + column + " ");
        if (start == std::string::npos) continue;
        const std::size_t end = line.find_first_not_of(' ', start + column.size() + 1);
        spans.emplace_back(start + 1, end == std::string::npos ? line.size() : end);
      }
    } else if (line.empty()) {
      spans.clear();
    } else {
      for (const auto& [start, end] : spans) {
        if (end <= line.size()) line.replace(start, end - start, "-" + std::string(end - start - 1, ' '));
      }
    }
    out += line + "\n";
  }
  return out;
}

class GroupTypes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    script_ = testing::broker_script();
    if (script_.empty()) {
      std::cout << "every test of this suite is skipped: KAFKA_BROKER_SCRIPT is not set\n";
      return;
    }
    broker_ = std::make_unique<testing::OwnedBroker>(
        script_, std::filesystem::temp_directory_path() / unique_name("processor-group-types"));
    const std::string& bootstrap = broker_->bootstrap();
    topic_ = unique_name("types-topic");
    testing::create_topic(bootstrap, topic_, 3);
    testing::Producer producer(bootstrap);
    producer.produce(topic_, 0, 6);
    producer.produce(topic_, 1, 4);
    producer.produce(topic_, 2, 5);

    classic_ = unique_name("types-classic");
    consumer_ = unique_name("types-consumer");
    empty_consumer_ = unique_name("types-consumer-empty");
    share_ = unique_name("types-share");
    // A consumer-protocol group whose only member commits and leaves: Empty, still of type Consumer.
    {
      testing::LiveGroupMember leaving(bootstrap, empty_consumer_, {topic_}, "types-leaving", true, "",
                                       "consumer");
      leaving.commit({{{topic_, 0}, 2}, {{topic_, 1}, 4}});
    }
    classic_member_ = std::make_unique<testing::LiveGroupMember>(
        bootstrap, classic_, std::vector<std::string>{topic_}, "types-classic-client");
    consumer_member_ =
        std::make_unique<testing::LiveGroupMember>(bootstrap, consumer_, std::vector<std::string>{topic_},
                                                   "types-consumer-client", true, "", "consumer");
    classic_member_->commit({{{topic_, 0}, 1}, {{topic_, 1}, 1}, {{topic_, 2}, 1}});  // lag 5 + 3 + 4
    consumer_member_->commit({{{topic_, 0}, 5}, {{topic_, 2}, 3}});                   // lag 1 + 2
    start_share_consumer(bootstrap);
    wait_until_settled(bootstrap);
  }

  static void TearDownTestSuite() {
    if (share_consumer_pid_ > 0) {
      ::kill(-share_consumer_pid_, SIGKILL);
      share_consumer_pid_ = 0;
    }
    consumer_member_.reset();
    classic_member_.reset();
    broker_.reset();
  }

  // Kafka's console share consumer, in a process group of its own (its JVM is a child of bash).
  static void start_share_consumer(const std::string& bootstrap) {
    const std::string pid_file = ::testing::TempDir() + unique_name("share-consumer") + ".pid";
    const std::string command = "setsid bash '" + script_ +
                                "' tool console-share-consumer --bootstrap-server " + bootstrap +
                                " --topic " + topic_ + " --group " + share_ +
                                " >/dev/null 2>&1 < /dev/null & echo $! > '" + pid_file + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
    share_consumer_pid_ = std::stoi(testing::file_content(pid_file));
    std::remove(pid_file.c_str());
  }

  // Until both live groups are Stable with their member assigned, the empty one is Empty, and
  // Kafka's kafka-share-groups lists the share group.
  static void wait_until_settled(const std::string& bootstrap) {
    auto admin = kafka::GroupAdmin::create({{"bootstrap.servers", bootstrap}, {"log_level", "3"}});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    bool groups_settled = false, share_listed = false;
    while (std::chrono::steady_clock::now() < deadline && !(groups_settled && share_listed)) {
      const auto described = admin->describe_groups({classic_, consumer_, empty_consumer_});
      auto stable = [](const kafka::GroupDescription& d) {
        return d.state == "Stable" && d.members.size() == 1 && d.members[0].assignment.size() == 3;
      };
      groups_settled = stable(described[0]) && stable(described[1]) && described[2].state == "Empty";
      if (!share_listed)
        share_listed = lines_of(share_tool("--list").out) == std::vector<std::string>{share_};
      if (!(groups_settled && share_listed)) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    ASSERT_TRUE(groups_settled) << "the classic and consumer groups did not settle";
    ASSERT_TRUE(share_listed) << "kafka-share-groups does not list " << share_;
  }

  void SetUp() override {
    if (script_.empty())
      GTEST_SKIP() << "KAFKA_BROKER_SCRIPT is not set: this test starts a broker of its own";
  }

  static ToolRun kafka_tool(const std::string& args) {
    return run_tool("bash '" + script_ + "' tool consumer-groups --bootstrap-server " + broker_->bootstrap() +
                    " " + args);
  }
  static ToolRun share_tool(const std::string& args) {
    return run_tool("bash '" + script_ + "' tool share-groups --bootstrap-server " + broker_->bootstrap() +
                    " " + args);
  }
  static ToolRun offsetctl(const std::string& command, const std::string& args) {
    return run_tool(std::string("'") + OFFSETCTL_PATH + "' " + command + " --bootstrap-server " +
                    broker_->bootstrap() + " " + args);
  }

  static std::unique_ptr<monitor::LagMonitor> monitor_of(const std::vector<std::string>& groups) {
    std::shared_ptr<kafka::GroupAdmin> admin =
        kafka::GroupAdmin::create({{"bootstrap.servers", broker_->bootstrap()}, {"log_level", "3"}});
    monitor::LagMonitorOptions options;
    options.groups = groups;
    return std::make_unique<monitor::LagMonitor>(std::make_shared<monitor::GroupAdminLagSource>(admin),
                                                 options);
  }

  static std::string script_, topic_, classic_, consumer_, empty_consumer_, share_;
  static std::unique_ptr<testing::OwnedBroker> broker_;
  static std::unique_ptr<testing::LiveGroupMember> classic_member_, consumer_member_;
  static pid_t share_consumer_pid_;
};

std::string GroupTypes::script_, GroupTypes::topic_, GroupTypes::classic_, GroupTypes::consumer_,
    GroupTypes::empty_consumer_, GroupTypes::share_;
std::unique_ptr<testing::OwnedBroker> GroupTypes::broker_;
std::unique_ptr<testing::LiveGroupMember> GroupTypes::classic_member_, GroupTypes::consumer_member_;
pid_t GroupTypes::share_consumer_pid_ = 0;

TEST_F(GroupTypes, ListWithTypeAndStateFiltersPrintsAsKafka) {
  for (const std::string args :
       {"", "--state", "--type", "--type --state", "--type consumer", "--type Classic",
        "--type consumer --state empty", "--type classic,consumer --state stable,empty"}) {
    const ToolRun kafka = kafka_tool("--list " + args);
    const ToolRun ours = offsetctl("groups list", args);
    ASSERT_EQ(kafka.exit_code, 0) << args << ": " << kafka.err;
    // Byte for byte: a Java HashMap's order, groups sharing a bucket in the brokers' order.
    EXPECT_EQ(ours.out, kafka.out) << "--list " << args;
    EXPECT_EQ(ours.err, kafka.err) << args;
    EXPECT_EQ(ours.exit_code, kafka.exit_code) << args;
  }
  // Neither tool lists the share group among consumer groups; each type is where Kafka puts it.
  const std::string typed = kafka_tool("--list --type --state").out;
  EXPECT_EQ(typed.find(share_), std::string::npos) << typed;
  EXPECT_NE(typed.find(consumer_ + std::string(10, ' ')), std::string::npos) << typed;
  for (const auto& line : lines_of(typed)) {
    const std::string name = line.substr(0, line.find(' '));
    if (name == consumer_ || name == empty_consumer_ || name == classic_) {
      EXPECT_NE(line.find(name == classic_ ? " Classic " : " Consumer "), std::string::npos) << line;
    }
  }
}

TEST_F(GroupTypes, ListWithAnUnknownTypePrintsKafkasMessageAndExitsOne) {
  for (const std::string value : {"share", "Consumer,bogus"}) {
    const ToolRun kafka = kafka_tool("--list --type " + value);
    const ToolRun ours = offsetctl("groups list", "--type " + value);
    EXPECT_EQ(kafka.exit_code, 1);
    EXPECT_EQ(ours.exit_code, 1);
    EXPECT_EQ(ours.out, kafka.out);
    // Kafka follows its message with its usage text, and names the valid types in a Java Set's order.
    const std::string said = lines_of(kafka.err).at(0);
    const std::string prefix = "Invalid types list '" + value + "'. Valid types are: ";
    EXPECT_TRUE(said == prefix + "Consumer, Classic" || said == prefix + "Classic, Consumer") << said;
    EXPECT_EQ(ours.err, prefix + "Consumer, Classic\n");
  }
}

TEST_F(GroupTypes, DescribeEveryViewOfEveryTypePrintsAsKafka) {
  const std::string all_three =
      "--group " + consumer_ + " --group " + classic_ + " --group " + empty_consumer_;
  for (const std::string& target : {std::string("--all-groups"), all_three}) {
    for (const std::string view : {"", "--offsets --verbose", "--members", "--state"}) {
      const std::string args = target + " " + view;
      const ToolRun kafka = kafka_tool("--describe " + args);
      const ToolRun ours = offsetctl("groups describe", args);
      EXPECT_NE(kafka.out.find(consumer_), std::string::npos) << kafka.out;
      EXPECT_EQ(ours.out, kafka.out) << args;
      EXPECT_EQ(ours.err, kafka.err) << args;
      EXPECT_EQ(ours.exit_code, kafka.exit_code) << args;
    }
  }
}

TEST_F(GroupTypes, VerboseMembersAndStateMatchKafkaButForTheEpochs) {
  // --verbose adds the consumer protocol's columns; Kafka prints the epochs librdkafka drops.
  const ToolRun kafka_members = kafka_tool("--describe --all-groups --members --verbose");
  const ToolRun ours_members = offsetctl("groups describe", "--all-groups --members --verbose");
  // The consumer group's target assignment is the whole topic, in both.
  const std::string target = topic_ + ":0,1,2";
  for (const auto& line : lines_of(kafka_members.out)) {
    if (line.rfind(consumer_ + " ", 0) == 0) {
      EXPECT_NE(line.find(target), line.rfind(target)) << line;
    }
  }
  EXPECT_EQ(ours_members.out, without_columns(kafka_members.out, {"CURRENT-EPOCH", "TARGET-EPOCH"}));
  EXPECT_NE(ours_members.out, kafka_members.out)
      << "Kafka printed no epoch: the masking above proved nothing";
  EXPECT_EQ(ours_members.err, kafka_members.err);
  EXPECT_EQ(ours_members.exit_code, kafka_members.exit_code);

  const ToolRun kafka_state = kafka_tool("--describe --all-groups --state --verbose");
  const ToolRun ours_state = offsetctl("groups describe", "--all-groups --state --verbose");
  EXPECT_EQ(ours_state.out, without_columns(kafka_state.out, {"GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"}));
  EXPECT_NE(kafka_state.out.find("uniform"), std::string::npos)
      << kafka_state.out;  // the consumer protocol's assignor
  EXPECT_EQ(ours_state.err, kafka_state.err);
  EXPECT_EQ(ours_state.exit_code, kafka_state.exit_code);
}

TEST_F(GroupTypes, JsonOutputCarriesTheTypeAndTheTargetAssignment) {
  const ToolRun ours = offsetctl(
      "groups describe", "--group " + consumer_ + " --group " + classic_ + " --members --output json");
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  const auto document = nlohmann::json::parse(ours.out);
  std::map<std::string, nlohmann::json> groups;
  for (const auto& group : document.at("groups")) groups[group.at("group").get<std::string>()] = group;
  ASSERT_EQ(groups.size(), 2u) << ours.out;
  EXPECT_EQ(groups[consumer_].at("type"), "Consumer");
  EXPECT_EQ(groups[classic_].at("type"), "Classic");
  const auto& member = groups[consumer_].at("members").at(0);
  EXPECT_EQ(member.at("assignment").size(), 3u);
  EXPECT_EQ(member.at("target_assignment").size(), 3u);
  EXPECT_TRUE(groups[classic_].at("members").at(0).at("target_assignment").is_null());
}

TEST_F(GroupTypes, ResetAndDeleteOffsetsFollowKafkasRulesForEachType) {
  // A group with live members, of either type, refuses both; Kafka exits 0 after saying so, we exit 1.
  auto expect_refused = [](const std::string& kafka_action, const std::string& our_verb,
                           const std::string& args, const std::string& kafka_says) {
    const ToolRun kafka = kafka_tool(kafka_action + " " + args);
    const ToolRun ours = offsetctl("groups " + our_verb, args);
    EXPECT_NE(kafka.out.find(kafka_says), std::string::npos) << kafka.out;
    EXPECT_EQ(ours.out, kafka.out) << our_verb << " " << args;
    EXPECT_EQ(ours.exit_code, 1) << our_verb << " " << args;
  };
  for (const std::string& group : {classic_, consumer_}) {
    expect_refused("--reset-offsets", "reset",
                   "--group " + group + " --topic " + topic_ + " --to-earliest --dry-run",
                   "is inactive, but the current state is Stable.");
    expect_refused("--delete-offsets", "delete-offsets", "--group " + group + " --topic " + topic_,
                   "GroupSubscribedToTopicException");
  }
  // A consumer-protocol group whose members have left takes a reset, as a classic one does.
  const std::string group = unique_name("types-consumer-reset");
  {
    testing::LiveGroupMember leaving(broker_->bootstrap(), group, {topic_}, "types-reset", true, "",
                                     "consumer");
    leaving.commit({{{topic_, 0}, 1}, {{topic_, 1}, 1}, {{topic_, 2}, 1}});
  }
  const std::string reset = "--group " + group + " --topic " + topic_ + " --to-latest";
  const ToolRun kafka_plan = kafka_tool("--reset-offsets " + reset + " --dry-run");
  const ToolRun ours_plan = offsetctl("groups reset", reset + " --dry-run");
  EXPECT_EQ(ours_plan.out, kafka_plan.out);
  EXPECT_EQ(ours_plan.exit_code, kafka_plan.exit_code) << ours_plan.err;
  const ToolRun executed = offsetctl("groups reset", reset + " --execute");
  ASSERT_EQ(executed.exit_code, 0) << executed.out << executed.err;
  auto admin = kafka::GroupAdmin::create({{"bootstrap.servers", broker_->bootstrap()}, {"log_level", "3"}});
  std::map<std::int32_t, std::int64_t> committed;
  for (const auto& offset : admin->committed_offsets(group)) committed[offset.tp.partition] = offset.offset;
  EXPECT_EQ(committed, (std::map<std::int32_t, std::int64_t>{{0, 6}, {1, 4}, {2, 5}}));
}

TEST_F(GroupTypes, ShareGroupIsLiveButNotVisibleThroughLibrdkafka) {
  // Kafka's own tool sees the share group and its member.
  const ToolRun kafka_share = share_tool("--describe --group " + share_ + " --members");
  EXPECT_NE(kafka_share.out.find(share_), std::string::npos) << kafka_share.out << kafka_share.err;
  // kafka-consumer-groups refuses it as "not a consumer group"; librdkafka describes it as a group
  // that does not exist, so we report it as not found, in Kafka's form, and exit 1.
  const ToolRun kafka = kafka_tool("--describe --group " + share_);
  EXPECT_EQ(kafka.out,
            "\nError: Executing consumer group command failed due to "
            "org.apache.kafka.common.errors.GroupIdNotFoundException: Group " +
                share_ + " is not a consumer group.\n");
  const ToolRun ours = offsetctl("groups describe", "--group " + share_);
  EXPECT_EQ(ours.out,
            "\nError: Executing consumer group command failed due to "
            "org.apache.kafka.common.errors.GroupIdNotFoundException: Group " +
                share_ + " not found.\n");
  EXPECT_EQ(ours.exit_code, 1);
  // share-groups says why it cannot do what kafka-share-groups does.
  const std::vector<std::pair<std::string, std::string>> verbs{
      {"list", ""}, {"describe", "--group " + share_}, {"describe", "--all-groups --members"}};
  for (const auto& [verb, args] : verbs) {
    const ToolRun said = offsetctl("share-groups " + verb, args);
    EXPECT_EQ(said.exit_code, 1) << verb << " " << args;
    EXPECT_EQ(said.out.rfind("\nError: Executing share group command failed due to "
                             "org.apache.kafka.common.errors.UnsupportedVersionException: librdkafka ",
                             0),
              0u)
        << said.out;
    EXPECT_NE(said.out.find("has no Admin API for share groups"), std::string::npos) << said.out;
  }
}

TEST_F(GroupTypes, LagMonitorAndMetricsReportEachGroupsTypeStateAndMembers) {
  auto monitor = monitor_of({classic_, consumer_, empty_consumer_});
  const monitor::LagSnapshot snapshot = monitor->poll_once();
  std::map<std::string, monitor::GroupLag> by_name;
  for (const auto& group : snapshot.groups) by_name[group.group] = group;
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name[classic_].type, "Classic");
  EXPECT_EQ(by_name[classic_].state, "Stable");
  EXPECT_EQ(by_name[classic_].members, 1);
  EXPECT_EQ(by_name[classic_].sum_lag(), 12);
  EXPECT_EQ(by_name[consumer_].type, "Consumer");
  EXPECT_EQ(by_name[consumer_].state, "Stable");
  EXPECT_EQ(by_name[consumer_].members, 1);
  EXPECT_EQ(by_name[consumer_].sum_lag(), 3);
  // Each member with its assignment; the consumer-protocol member with its target assignment too.
  ASSERT_EQ(by_name[consumer_].member_list->size(), 1u);
  const kafka::GroupMember& member = by_name[consumer_].member_list->at(0);
  EXPECT_EQ(member.assignment.size(), 3u);
  ASSERT_TRUE(member.target_assignment.has_value());
  EXPECT_EQ(member.target_assignment->size(), 3u);
  ASSERT_EQ(by_name[classic_].member_list->size(), 1u);
  EXPECT_FALSE(by_name[classic_].member_list->at(0).target_assignment.has_value());
  for (const auto& partition : by_name[consumer_].partitions) {
    EXPECT_EQ(partition.client_id, "types-consumer-client") << partition.topic << ":" << partition.partition;
  }
  // The consumer-protocol group without members keeps reporting its offsets and lag.
  EXPECT_EQ(by_name[empty_consumer_].type, "Consumer");
  EXPECT_EQ(by_name[empty_consumer_].state, "Empty");
  EXPECT_EQ(by_name[empty_consumer_].members, 0);
  EXPECT_EQ(by_name[empty_consumer_].sum_lag(), 4);

  monitor::MetricsRegistry registry;
  const auto shared = std::make_shared<const monitor::LagSnapshot>(snapshot);
  registry.add_collector(monitor::lag_metrics_collector([shared] { return shared; }, {}));
  const std::string text = registry.scrape();
  auto members_line = [&](const std::string& group, const std::string& type, const std::string& state,
                          int n) {
    return "kafka_consumergroup_members{cluster_name=\"default\",group=\"" + group + "\",group_type=\"" +
           type + "\",state=\"" + state + "\"} " + std::to_string(n) + "\n";
  };
  EXPECT_NE(text.find(members_line(classic_, "classic", "Stable", 1)), std::string::npos) << text;
  EXPECT_NE(text.find(members_line(consumer_, "consumer", "Stable", 1)), std::string::npos) << text;
  EXPECT_NE(text.find(members_line(empty_consumer_, "consumer", "Empty", 0)), std::string::npos) << text;
  EXPECT_NE(text.find("kafka_consumergroup_group_sum_lag{cluster_name=\"default\",group=\"" +
                      empty_consumer_ + "\",group_type=\"consumer\"} 4\n"),
            std::string::npos)
      << text;

  // A group that does not exist (or one librdkafka cannot see, as the share group) has no type.
  const monitor::LagSnapshot unseen = monitor_of({share_})->poll_once();
  ASSERT_EQ(unseen.groups.size(), 1u);
  EXPECT_EQ(unseen.groups[0].state, "Dead");
  EXPECT_EQ(unseen.groups[0].type, "");

  // offsetctl lag says the same.
  const ToolRun lag = offsetctl("lag", "--group " + consumer_ + " --group " + empty_consumer_);
  EXPECT_EQ(lag.exit_code, 0) << lag.err;
  EXPECT_NE(lag.out.find("GROUP " + consumer_ + ": type Consumer, state Stable, 1 member,"),
            std::string::npos)
      << lag.out;
  EXPECT_NE(lag.out.find("GROUP " + empty_consumer_ + ": type Consumer, state Empty, 0 members,"),
            std::string::npos)
      << lag.out;
}

TEST_F(GroupTypes, ChartOfAConsumerProtocolGroupRendersAsAClassicOne) {
  if (const std::string missing = testing::ChartScreenshots::missing_programs(); !missing.empty()) {
    GTEST_SKIP() << missing;
  }
  // The classic group (lag 12) draws first, in blue; the consumer group (lag 3) in red.
  auto monitor = monitor_of({classic_, consumer_});
  const auto start = std::chrono::system_clock::now();
  for (int i = 0; i < 12; ++i) monitor->poll_once(start + std::chrono::seconds(10 * i));
  const std::string svg = monitor::render_lag_svg(monitor->history());
  EXPECT_NE(svg.find(consumer_), std::string::npos);
  testing::ChartScreenshots shots;
  const std::string file = shots.dir() + "/lag.svg";
  std::ofstream(file) << svg;
  testing::expect_a_chart(shots.take("file://" + file));
}

}  // namespace
}  // namespace processor::offsetctl
