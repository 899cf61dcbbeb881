// offsetctl on a secured broker (scripts/kafka/broker.sh start --secure, KAFKA_SECURE_DIR): the
// same --command-config file handed to Kafka's own kafka-consumer-groups and to offsetctl, for
// each SASL mechanism; the refusals (a wrong password, an unknown user, an untrusted certificate,
// a host-name mismatch, a group or a topic without an ACL) named with Kafka's exception, within
// --timeout, with no offset changed; and no secret in anything either tool printed (each test
// checks all it printed and fetched, in TearDown).
//
// The tests share the broker's groups listing (alice sees every group she may describe), so they
// never run at the same time (RESOURCE_LOCK secure_broker).

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "http_client.hpp"
#include "kafka_test_support.hpp"
#include "owned_broker.hpp"
#include "processor/kafka/group_admin.hpp"
#include "secure_broker.hpp"
#include "tool_run.hpp"

namespace processor::offsetctl {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kWellWithinTheTimeout = std::chrono::seconds(20);  // of --timeout 30000
using testing::run_tool;
using testing::SecureBroker;
using testing::ToolRun;
using testing::unique_name;

std::string kafka_broker_script() {
  const std::string script = testing::broker_script();
  return script.empty() ? PROCESSOR_SOURCE_DIR "/scripts/kafka/broker.sh" : script;
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

// Everything both tools printed in this process, for the secrets check.
std::vector<std::string>& printed() {
  static std::vector<std::string> all;
  return all;
}

ToolRun kept(ToolRun run) {
  printed().push_back(run.out);
  printed().push_back(run.err);
  return run;
}

// kafka-consumer-groups <args> --bootstrap-server B --command-config F.
ToolRun kafka_tool(const std::string& bootstrap, const std::string& config, const std::string& args) {
  return kept(run_tool("bash " + quoted(kafka_broker_script()) + " tool consumer-groups --bootstrap-server " +
                       bootstrap + " --command-config " + quoted(config) + " " + args));
}

// offsetctl <verb> <args> --bootstrap-server B --command-config F.
ToolRun offsetctl(const std::string& verb, const std::string& bootstrap, const std::string& config,
                  const std::string& args) {
  return kept(run_tool(quoted(OFFSETCTL_PATH) + " " + verb + " --bootstrap-server " + bootstrap +
                       " --command-config " + quoted(config) + " " + args));
}

class SecureOffsetctl : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_ = SecureBroker::from_env();
    if (!broker_)
      GTEST_SKIP() << "no secured broker (KAFKA_SECURE_DIR): scripts/kafka/broker.sh start --secure";
    admin_ = broker_->properties("admin", "scram-sha-256");
    broker_->grant_alice_everything();
  }

  // Nothing either tool printed, and nothing the exporter served, in this test holds a password
  // of the run.
  void TearDown() override {
    // The edited copies hold the run's passwords: none stays in the temporary directory.
    for (const auto& path : edited_files_) std::filesystem::remove(path);
    if (!broker_) return;
    std::vector<std::string> secrets = broker_->secrets();
    secrets.push_back(kWrongPassword);
    for (const auto& text : printed()) {
      for (const auto& secret : secrets) {
        ASSERT_EQ(text.find(secret), std::string::npos) << "a password was printed in:\n"
                                                        << text.substr(0, 4000);
      }
    }
  }

  static constexpr const char* kWrongPassword = "Wr0ng-Passw0rd-42";

  // A topic of 3 partitions with 5, 2 and 4 records, and `groups` with committed offsets
  // {0: 3, 2: 1} and no members.
  std::string topic_with_groups(const std::vector<std::string>& groups) {
    const std::string topic = unique_name("secure");
    testing::create_topic(admin_.at("bootstrap.servers"), topic, 3, {}, admin_);
    testing::Producer producer(admin_.at("bootstrap.servers"), admin_);
    producer.produce(topic, 0, 5);
    producer.produce(topic, 1, 2);
    producer.produce(topic, 2, 4);
    auto admin = kafka::GroupAdmin::create(admin_);
    for (const auto& group : groups) {
      // A fresh broker's first commits can be refused per partition while its coordinator loads
      // (alter_offsets reports, does not throw): again until every partition took its offset.
      const auto deadline = Clock::now() + std::chrono::seconds(30);
      for (bool committed_all = false; !committed_all;) {
        committed_all = true;
        for (const auto& result : admin->alter_offsets(
                 group, {{kafka::TopicPartition(topic, 0), 3}, {kafka::TopicPartition(topic, 2), 1}})) {
          if (!result.error.empty()) committed_all = false;
        }
        if (!committed_all) {
          if (Clock::now() > deadline) throw std::runtime_error("cannot commit the offsets of " + group);
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
      }
    }
    return topic;
  }

  // The group's committed offsets by "topic:partition".
  std::map<std::string, std::int64_t> committed(const std::string& group) {
    std::map<std::string, std::int64_t> out;
    for (const auto& offset : kafka::GroupAdmin::create(admin_)->committed_offsets(group)) {
      out[offset.tp.to_key()] = offset.offset;
    }
    return out;
  }

  // A copy of `user`'s SCRAM-SHA-256 file with one line changed by `edit`.
  std::string edited_file(const std::string& user, const std::function<std::string(std::string)>& edit) {
    std::ifstream in(broker_->client_file(user, "scram-sha-256"));
    std::stringstream text;
    text << in.rdbuf();
    const std::string path = ::testing::TempDir() + unique_name("client") + ".properties";
    std::ofstream(path) << edit(text.str());
    edited_files_.push_back(path);
    return path;
  }

  std::optional<SecureBroker> broker_;
  std::vector<std::string> edited_files_;
  kafka::KafkaProperties admin_;
};

class SecureOffsetctlByMechanism : public SecureOffsetctl,
                                   public ::testing::WithParamInterface<std::string> {};

// Both tools, the same arguments and the same --command-config: the same stdout and exit code.
void expect_same(const ToolRun& ours, const ToolRun& kafka, const std::string& what) {
  EXPECT_EQ(ours.out, kafka.out) << what << "\nour stderr:\n"
                                 << ours.err << "\nKafka's stderr:\n"
                                 << kafka.err;
  EXPECT_EQ(ours.exit_code, kafka.exit_code) << what << "\nours:\n"
                                             << ours.out << ours.err << "\nKafka's:\n"
                                             << kafka.out << kafka.err;
}

TEST_P(SecureOffsetctlByMechanism, GroupsVerbsPrintWhatKafkasToolPrints) {
  const std::string mechanism = GetParam();
  const std::string bootstrap = broker_->bootstrap(mechanism);
  const std::string config = broker_->client_file("alice", mechanism);
  const std::string group = unique_name("secure-group");
  const std::string ours_deleted = unique_name("secure-delete-ours");
  const std::string kafkas_deleted = unique_name("secure-delete-kafka");
  const std::string topic = topic_with_groups({group, ours_deleted, kafkas_deleted});

  for (const std::string view : {"", "--state", "--type --state"}) {
    expect_same(offsetctl("groups list", bootstrap, config, view),
                kafka_tool(bootstrap, config, "--list " + view), "list " + view);
  }
  for (const std::string view : {"", "--members", "--state", "--members --verbose", "--offsets --verbose"}) {
    const std::string args = "--describe --group " + group + " " + view;
    expect_same(offsetctl("groups describe", bootstrap, config, "--group " + group + " " + view),
                kafka_tool(bootstrap, config, args), args);
  }
  const std::string plan = "--group " + group + " --topic " + topic + " --to-earliest";
  expect_same(offsetctl("groups reset", bootstrap, config, plan + " --dry-run"),
              kafka_tool(bootstrap, config, "--reset-offsets " + plan + " --dry-run"), "reset --dry-run");
  const ToolRun executed = offsetctl("groups reset", bootstrap, config, plan + " --execute");
  EXPECT_EQ(executed.exit_code, 0) << executed.out << executed.err;
  EXPECT_EQ(committed(group),
            (std::map<std::string, std::int64_t>{{topic + ":0", 0}, {topic + ":1", 0}, {topic + ":2", 0}}));
  expect_same(offsetctl("groups describe", bootstrap, config, "--group " + group),
              kafka_tool(bootstrap, config, "--describe --group " + group), "describe after the reset");

  // delete-offsets on two twin groups: the same report, but for the group's name.
  ToolRun ours = offsetctl("groups delete-offsets", bootstrap, config,
                           "--group " + ours_deleted + " --topic " + topic + ":0");
  const ToolRun kafkas = kafka_tool(
      bootstrap, config, "--delete-offsets --group " + kafkas_deleted + " --topic " + topic + ":0");
  ours.out = std::regex_replace(ours.out, std::regex(ours_deleted), kafkas_deleted);
  expect_same(ours, kafkas, "delete-offsets");
  EXPECT_EQ(committed(ours_deleted), committed(kafkas_deleted));
  EXPECT_EQ(committed(ours_deleted).count(topic + ":0"), 0u);

  const ToolRun lag = offsetctl("lag", bootstrap, config, "--group " + group);
  EXPECT_EQ(lag.exit_code, 0) << lag.out << lag.err;
  EXPECT_NE(lag.out.find(group), std::string::npos) << lag.out;

  // The exporter watches the group through the same file: after the reset to the log start, its
  // lag is every record (5 + 2 + 4).
  testing::ChildProcess exporter({OFFSETCTL_PATH, "exporter", "--bootstrap-server", bootstrap,
                                  "--command-config", config, "--group", group, "--listen", "127.0.0.1:0",
                                  "--interval", "0.5"});
  const std::string prefix = "offsetctl exporter: serving http://127.0.0.1:";
  std::string line;
  std::string output;
  for (int i = 0; i < 20 && line.rfind(prefix, 0) != 0; ++i) {
    line = exporter.read_line(std::chrono::seconds(30));
    output += line + "\n";
    if (line.empty()) break;
  }
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << output;
  const std::string url =
      "http://127.0.0.1:" + std::to_string(std::stoi(line.substr(prefix.size()))) + "/metrics";
  const std::string sum_lag = "kafka_consumergroup_group_sum_lag{cluster_name=\"default\",group=\"" + group +
                              "\",group_type=\"classic\"} 11\n";
  std::string body;
  for (const auto deadline = Clock::now() + std::chrono::seconds(30);
       Clock::now() < deadline && body.find(sum_lag) == std::string::npos;) {
    body = testing::http_get(url).body;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  printed().push_back(body);
  EXPECT_NE(body.find(sum_lag), std::string::npos) << body;
  // The chart page and the chart, for the secrets check.
  const std::string page_url = url.substr(0, url.size() - std::string("metrics").size());
  const auto page = testing::http_get(page_url);
  EXPECT_EQ(page.status, 200) << page.body;
  printed().push_back(page.body);
  printed().push_back(testing::http_get(page_url + "lag.svg").body);
  EXPECT_EQ(exporter.stop(SIGTERM, std::chrono::seconds(15)), 0);
  printed().push_back(output + exporter.read_rest(std::chrono::seconds(5)));
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, SecureOffsetctlByMechanism,
                         ::testing::ValuesIn(SecureBroker::mechanisms()), [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// A refusal: Kafka's exception in Kafka's form on stdout, exit 1, well within --timeout (30 s
// here: a refusal does not wait for it; the margin is for sanitizer builds under CI's load), and
// the same exception from Kafka's tool.
void expect_refusal(const ToolRun& ours, Clock::duration took, const ToolRun& kafkas,
                    const std::string& exception) {
  const std::string form = "Error: Executing consumer group command failed due to ";
  EXPECT_NE(ours.out.find(form), std::string::npos) << ours.out << ours.err;
  EXPECT_NE(ours.out.find(exception), std::string::npos) << "ours:\n" << ours.out << ours.err;
  EXPECT_NE(kafkas.out.find(exception), std::string::npos) << "Kafka's:\n" << kafkas.out << kafkas.err;
  EXPECT_EQ(ours.exit_code, 1);
  EXPECT_LT(took, kWellWithinTheTimeout)
      << "the refusal took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
}

struct Timed {
  ToolRun run;
  Clock::duration took;
};

Timed timed(const std::function<ToolRun()>& call) {
  const auto started = Clock::now();
  ToolRun run = call();
  return {std::move(run), Clock::now() - started};
}

TEST_F(SecureOffsetctl, RefusedConnectionsNameKafkasExceptionOnTimeAndChangeNoOffset) {
  const std::string group = unique_name("secure-refused");
  const std::string topic = topic_with_groups({group});
  const auto before = committed(group);
  const std::string bootstrap = broker_->bootstrap("scram-sha-256");

  const std::string wrong_password = edited_file("alice", [](std::string text) {
    return std::regex_replace(text, std::regex("password=\"[^\"]*\""),
                              std::string("password=\"") + kWrongPassword + "\"");
  });
  const std::string unknown_user = edited_file("alice", [](std::string text) {
    return std::regex_replace(text, std::regex("username=\"alice\""), "username=\"mallory\"");
  });
  // A CA that did not sign the broker's certificate.
  const std::string other_ca = ::testing::TempDir() + unique_name("other-ca") + ".pem";
  ASSERT_EQ(std::system(("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other-ca -keyout " +
                         other_ca + ".key -out " + other_ca + " >/dev/null 2>&1")
                            .c_str()),
            0);
  const std::string untrusted = edited_file("alice", [&](std::string text) {
    return std::regex_replace(text, std::regex("ssl.truststore.location=.*"),
                              "ssl.truststore.location=" + other_ca);
  });
  const std::string alice = broker_->client_file("alice", "scram-sha-256");

  struct Case {
    std::string what, bootstrap, config, exception;
  };
  const std::vector<Case> cases{
      {"a wrong password", bootstrap, wrong_password,
       "org.apache.kafka.common.errors.SaslAuthenticationException"},
      {"an unknown user", bootstrap, unknown_user,
       "org.apache.kafka.common.errors.SaslAuthenticationException"},
      {"an untrusted certificate", bootstrap, untrusted,
       "org.apache.kafka.common.errors.SslAuthenticationException"},
      {"a host-name mismatch", broker_->mismatch_bootstrap(), alice,
       "org.apache.kafka.common.errors.SslAuthenticationException"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string describe = "--group " + group + " --timeout 30000";
    const Timed ours = timed([&] { return offsetctl("groups describe", c.bootstrap, c.config, describe); });
    expect_refusal(ours.run, ours.took, kafka_tool(c.bootstrap, c.config, "--describe " + describe),
                   c.exception);
    const std::string reset =
        "--group " + group + " --topic " + topic + " --to-latest --execute --timeout 30000";
    const Timed refused_reset =
        timed([&] { return offsetctl("groups reset", c.bootstrap, c.config, reset); });
    expect_refusal(refused_reset.run, refused_reset.took,
                   kafka_tool(c.bootstrap, c.config, "--reset-offsets " + reset), c.exception);
    const Timed listed =
        timed([&] { return offsetctl("groups list", c.bootstrap, c.config, "--timeout 30000"); });
    EXPECT_NE(listed.run.out.find(c.exception), std::string::npos) << listed.run.out << listed.run.err;
    EXPECT_EQ(listed.run.exit_code, 1);
    EXPECT_LT(listed.took, kWellWithinTheTimeout);
  }
  EXPECT_EQ(committed(group), before);
}

TEST_F(SecureOffsetctl, AGroupOrTopicWithoutAnAclIsRefusedAsKafkaRefusesItAndChangesNoOffset) {
  const std::string group = unique_name("secure-acl");
  const std::string bobs_group = unique_name("secure-bob");
  const std::string topic = topic_with_groups({group, bobs_group});
  // bob may use his own group, and no topic.
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_GROUP, bobs_group, RD_KAFKA_ACL_OPERATION_ALL);
  const auto before = committed(group);
  const auto bobs_before = committed(bobs_group);
  const std::string bootstrap = broker_->bootstrap("scram-sha-256");
  const std::string bob = broker_->client_file("bob", "scram-sha-256");

  const std::string describe = "--group " + group + " --timeout 30000";
  const Timed described = timed([&] { return offsetctl("groups describe", bootstrap, bob, describe); });
  expect_refusal(described.run, described.took, kafka_tool(bootstrap, bob, "--describe " + describe),
                 "org.apache.kafka.common.errors.GroupAuthorizationException");

  const std::string reset =
      "--group " + group + " --topic " + topic + " --to-latest --execute --timeout 30000";
  const Timed reset_run = timed([&] { return offsetctl("groups reset", bootstrap, bob, reset); });
  expect_refusal(reset_run.run, reset_run.took, kafka_tool(bootstrap, bob, "--reset-offsets " + reset),
                 "org.apache.kafka.common.errors.GroupAuthorizationException");

  // delete-offsets names the topic's refusal in its row, as Kafka's tool does. (Kafka's also heads
  // the report with the group's refusal, from a request offsetctl does not make once no partition
  // is left to delete: README, "Where we differ".)
  const std::string delete_args = "--group " + group + " --topic " + topic + " --timeout 30000";
  const Timed deleted =
      timed([&] { return offsetctl("groups delete-offsets", bootstrap, bob, delete_args); });
  const ToolRun kafkas_delete = kafka_tool(bootstrap, bob, "--delete-offsets " + delete_args);
  const std::string row =
      "Error: org.apache.kafka.common.errors.TopicAuthorizationException: Topic authorization failed.";
  EXPECT_NE(deleted.run.out.find(row), std::string::npos) << deleted.run.out << deleted.run.err;
  EXPECT_NE(kafkas_delete.out.find(row), std::string::npos) << kafkas_delete.out;
  EXPECT_EQ(deleted.run.exit_code, 1);
  EXPECT_LT(deleted.took, kWellWithinTheTimeout);

  // His own group, a topic he may not describe.
  const std::string bobs_reset =
      "--group " + bobs_group + " --topic " + topic + " --to-latest --execute --timeout 30000";
  const Timed topic_refused = timed([&] { return offsetctl("groups reset", bootstrap, bob, bobs_reset); });
  const ToolRun kafkas = kafka_tool(bootstrap, bob, "--reset-offsets " + bobs_reset);
  EXPECT_EQ(topic_refused.run.exit_code, 1) << topic_refused.run.out << topic_refused.run.err;
  EXPECT_LT(topic_refused.took, kWellWithinTheTimeout);
  for (const auto* run : {&topic_refused.run, &kafkas}) {
    EXPECT_NE((run->out + run->err).find("TopicAuthorizationException"), std::string::npos)
        << run->out << run->err;
  }
  EXPECT_EQ(committed(group), before);
  EXPECT_EQ(committed(bobs_group), bobs_before);
}

// Runs that could leak a password: debug=all, a wrong password, a JAAS typo, JSON output and every
// verb's --help (with the file given). TearDown checks what they printed.
TEST_F(SecureOffsetctl, NoSecretInAnythingEitherToolPrinted) {
  const std::string group = unique_name("secure-secrets");
  topic_with_groups({group});
  const std::string bootstrap = broker_->bootstrap("scram-sha-256");
  const std::string alice = broker_->client_file("alice", "scram-sha-256");
  for (const auto& mechanism : SecureBroker::mechanisms()) {
    offsetctl("groups describe", broker_->bootstrap(mechanism), broker_->client_file("alice", mechanism),
              "--group " + group);
  }
  const std::string debugging = edited_file("alice", [](std::string text) { return text + "\ndebug=all\n"; });
  const ToolRun debugged = offsetctl("groups describe", bootstrap, debugging, "--group " + group);
  EXPECT_EQ(debugged.exit_code, 0) << debugged.err.substr(0, 2000);
  EXPECT_GT(debugged.err.size(), 10'000u)
      << "librdkafka's debugging printed little: the check would prove nothing";
  const std::string wrong = edited_file("alice", [](std::string text) {
    return std::regex_replace(text, std::regex("password=\"[^\"]*\""),
                              std::string("password=\"") + kWrongPassword + "\"");
  });
  const ToolRun refused =
      offsetctl("groups describe", bootstrap, wrong, "--group " + group + " --timeout 3000");
  EXPECT_NE(refused.out.find("SaslAuthenticationException"), std::string::npos) << refused.out << refused.err;
  const std::string typo = edited_file(
      "alice", [](std::string text) { return std::regex_replace(text, std::regex("required"), "requird"); });
  const ToolRun mistyped = offsetctl("groups describe", bootstrap, typo, "--group " + group);
  EXPECT_NE(mistyped.exit_code, 0) << mistyped.out << mistyped.err;

  const ToolRun json = offsetctl("groups describe", bootstrap, alice, "--group " + group + " --output json");
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find(group), std::string::npos) << json.out;
  const ToolRun lag_json = offsetctl("lag", bootstrap, alice, "--group " + group + " --output json");
  EXPECT_EQ(lag_json.exit_code, 0) << lag_json.err;
  EXPECT_NE(lag_json.out.find(group), std::string::npos) << lag_json.out;
  for (const std::string verb : {"groups list", "groups describe", "groups reset", "groups delete-offsets",
                                 "share-groups list", "lag", "exporter", "state describe", "changelog"}) {
    const ToolRun help = offsetctl(verb, bootstrap, alice, "--help");
    EXPECT_NE(help.out.find("--command-config"), std::string::npos) << verb << " --help:\n" << help.out;
  }
}

}  // namespace
}  // namespace processor::offsetctl
