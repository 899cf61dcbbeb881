// `offsetctl lag`: its table and JSON as a user reads them, and the command line it accepts.

#include "lag/lag_output.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "command.hpp"

namespace processor::offsetctl {
namespace {

using monitor::GroupLag;
using monitor::LagSnapshot;
using monitor::PartitionLag;
using monitor::Status;
using monitor::TimeLagSource;

LagSnapshot sample_snapshot() {
  LagSnapshot snapshot;
  snapshot.taken_at = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'700'000'000'123));
  GroupLag group;
  group.group = "orders-app";
  group.state = "Stable";
  group.type = "Consumer";
  group.members = 1;
  group.status = Status::Stop;
  PartitionLag known;
  known.topic = "orders";
  known.partition = 0;
  known.committed_offset = 40;
  known.log_start_offset = 0;
  known.log_end_offset = 100;
  known.lag = 60;
  known.lag_seconds = 12.34;
  known.lag_seconds_source = TimeLagSource::Interpolated;
  known.status = Status::Stop;
  known.member_id = "m-1";
  PartitionLag unknown;
  unknown.topic = "orders";
  unknown.partition = 1;
  unknown.committed_offset = 7;
  unknown.status = Status::Error;
  group.partitions = {known, unknown};
  snapshot.groups.push_back(group);
  return snapshot;
}

TEST(LagOutput, TableHasTheHeaderARowPerPartitionDashesForNoSampleAndAGroupLine) {
  const std::string table = format_lag_table(sample_snapshot());
  const std::string expected =
      "GROUP       TOPIC   PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  LAG-SECONDS  SOURCE        "
      "STATUS\n"
      "orders-app  orders  0          40              100             60   12.3         interpolated  STOP\n"
      "orders-app  orders  1          7               -               -    -            -             ERR\n"
      "\n"
      "GROUP orders-app: type Consumer, state Stable, 1 member, status STOP, total lag 60, max lag 12.3 s\n";
  EXPECT_EQ(table, expected);
}

TEST(LagOutput, NoGroupsSaysSo) { EXPECT_EQ(format_lag_table(LagSnapshot{}), "No consumer groups.\n"); }

TEST(LagOutput, JsonHasEveryFieldAndNullForNoSample) {
  const nlohmann::json json = lag_json(sample_snapshot());
  EXPECT_EQ(json["taken_at_ms"], 1'700'000'000'123);
  const auto& group = json["groups"][0];
  EXPECT_EQ(group["group"], "orders-app");
  EXPECT_EQ(group["status"], "STOP");
  EXPECT_EQ(group["type"], "Consumer");
  EXPECT_EQ(group["state"], "Stable");
  EXPECT_EQ(group["members"], 1);
  EXPECT_EQ(group["total_lag"], 60);
  const auto& known = group["partitions"][0];
  EXPECT_EQ(known["lag"], 60);
  EXPECT_DOUBLE_EQ(known["lag_seconds"].get<double>(), 12.34);
  EXPECT_EQ(known["lag_seconds_source"], "interpolated");
  EXPECT_EQ(known["member_id"], "m-1");
  const auto& unknown = group["partitions"][1];
  EXPECT_TRUE(unknown["lag"].is_null());
  EXPECT_TRUE(unknown["log_end_offset"].is_null());
  EXPECT_TRUE(unknown["lag_seconds"].is_null());
  EXPECT_EQ(unknown["status"], "ERR");
}

// Parses `args` as offsetctl's command line; returns "" or the parse error's message.
std::string parse(std::vector<std::string> args, Invocation& invocation) {
  CLI::App app{"offsetctl", "offsetctl"};
  build_app(app, invocation);
  std::vector<const char*> argv = {"offsetctl"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(LagCommand, AcceptsGroupsOrAllGroupsWithItsOptions) {
  Invocation invocation;
  EXPECT_EQ(parse({"lag", "--bootstrap-server", "b:9092", "--group", "a", "--group", "b", "--watch",
                   "--interval", "0.5", "--output", "json"},
                  invocation),
            "");
  EXPECT_TRUE(invocation.run);
  Invocation plot;
  EXPECT_EQ(
      parse({"lag", "--bootstrap-server", "b:9092", "--all-groups", "--plot", "lag.svg", "--samples", "10"},
            plot),
      "");
  EXPECT_TRUE(plot.run);
}

TEST(LagCommand, RejectsBadCommandLinesWithoutRunningAnything) {
  const std::vector<std::vector<std::string>> bad = {
      {"lag", "--bootstrap-server", "b:9092"},                                     // no group
      {"lag", "--group", "a"},                                                     // no cluster
      {"lag", "--bootstrap-server", "b:9092", "--group", "a", "--all-groups"},     // both
      {"lag", "--bootstrap-server", "b:9092", "--group", "a", "--plot", "x.svg"},  // no --samples
      {"lag", "--bootstrap-server", "b:9092", "--group", "a", "--samples", "3"},   // no --plot
      {"lag", "--bootstrap-server", "b:9092", "--group", "a", "--output", "xml"},  // bad output
      {"lag", "--bootstrap-server", "b:9092", "--group", "a", "--interval", "0"},  // bad interval
      {"lag", "--bootstrap-server", "b:9092", "--group", "a", "--plot", "x.svg", "--samples", "3", "--watch"},
  };
  for (const auto& args : bad) {
    Invocation invocation;
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_NE(parse(args, invocation), "") << joined;
    EXPECT_FALSE(invocation.run) << joined;
  }
}

}  // namespace
}  // namespace processor::offsetctl
