// The pure planning of `offsetctl groups reset` (tools/offsetctl/reset/): Kafka's row order (a
// java.util.HashMap's), clamping and its warnings, each scenario's choice of offset, the topic
// arguments, the time arguments, and the printed table and CSV.

#include "reset/reset_plan.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "processor/error.hpp"
#include "reset/java_map_order.hpp"
#include "reset/progress_line.hpp"
#include "reset/reset_time_args.hpp"

namespace processor::offsetctl {
namespace {

using kafka::TopicPartition;

std::vector<TopicPartition> partitions_of(const std::string& topic, int count) {
  std::vector<TopicPartition> out;
  for (int p = 0; p < count; ++p) out.emplace_back(topic, p);
  return out;
}

// The plan's offsets by partition, whatever Kafka's order (tested on its own).
std::map<int, std::int64_t> by_partition(const std::vector<PlannedOffset>& offsets) {
  std::map<int, std::int64_t> out;
  for (const auto& o : offsets) out[o.tp.partition] = o.offset;
  return out;
}

std::vector<int> partition_numbers(const std::vector<PlannedOffset>& offsets) {
  std::vector<int> out;
  for (const auto& o : offsets) out.push_back(o.tp.partition);
  return out;
}

TEST(JavaMapOrder, HashesAsJavaDoes) {
  EXPECT_EQ(java_string_hash(""), 0);
  EXPECT_EQ(java_string_hash("rt1"), 113199);              // "rt1".hashCode()
  EXPECT_EQ(java_string_hash("hello world"), 1794106052);  // wraps past 2^31
  EXPECT_EQ(java_topic_partition_hash(TopicPartition("rt1", 0)), 31 * 31 + 113199);
}

TEST(JavaMapOrder, RowsComeInTheOrderKafkaPrintedForTwelvePartitions) {
  // What kafka-consumer-groups 4.4 printed for a 12-partition topic "rt1".
  ResetSpec spec{ResetScenario::ToEarliest, 0, {}};
  PartitionFacts facts;
  for (const auto& tp : partitions_of("rt1", 12)) facts.earliest[tp] = 0;
  const ResetPlan plan = plan_reset(spec, partitions_of("rt1", 12), facts);
  EXPECT_EQ(partition_numbers(plan.offsets), (std::vector<int>{0, 11, 9, 10, 7, 8, 5, 6, 3, 4, 1, 2}));
}

TEST(JavaMapOrder, ATableOfThirteenEntriesHasThirtyTwoBuckets) {
  EXPECT_EQ(java_hash_map_bucket(16, 12), 0u);
  EXPECT_EQ(java_hash_map_bucket(16, 13), 16u);
}

TEST(ResetPlan, ToOffsetClampsToTheLogWithKafkasWarnings) {
  const std::vector<TopicPartition> tps{{"t", 0}, {"t", 1}, {"t", 2}};
  PartitionFacts facts;
  facts.earliest = {{tps[0], 0}, {tps[1], 10}, {tps[2], 0}};
  facts.latest = {{tps[0], 5}, {tps[1], 20}, {tps[2], 50}};
  const ResetPlan plan = plan_reset({ResetScenario::ToOffset, 7, {}}, tps, facts);
  EXPECT_EQ(by_partition(plan.offsets), (std::map<int, std::int64_t>{{0, 5}, {1, 10}, {2, 7}}));
  ASSERT_EQ(plan.warnings.size(), 2u);
  EXPECT_NE(
      std::find(
          plan.warnings.begin(), plan.warnings.end(),
          "New offset (7) is higher than latest offset for topic partition t-0. Value will be set to 5."),
      plan.warnings.end());
  EXPECT_NE(
      std::find(
          plan.warnings.begin(), plan.warnings.end(),
          "New offset (7) is lower than earliest offset for topic partition t-1. Value will be set to 10."),
      plan.warnings.end());
}

TEST(ResetPlan, ShiftByNeedsACommittedOffsetForEveryPartition) {
  const std::vector<TopicPartition> tps{{"t", 0}, {"t", 1}};
  PartitionFacts facts;
  facts.committed = {{tps[0], 4}};
  facts.earliest = {{tps[0], 0}, {tps[1], 0}};
  facts.latest = {{tps[0], 9}, {tps[1], 9}};
  try {
    plan_reset({ResetScenario::ShiftBy, 2, {}}, tps, facts);
    FAIL() << "no error";
  } catch (const StateError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_STREQ(e.what(),
                 "Cannot shift offset for partition t-1 since there is no current committed offset");
  }
  facts.committed[tps[1]] = 8;
  const ResetPlan plan = plan_reset({ResetScenario::ShiftBy, 2, {}}, tps, facts);
  EXPECT_EQ(by_partition(plan.offsets), (std::map<int, std::int64_t>{{0, 6}, {1, 9}}));
}

TEST(ResetPlan, ToCurrentTakesTheLogEndWhereNothingIsCommitted) {
  const std::vector<TopicPartition> tps{{"t", 0}, {"t", 1}};
  PartitionFacts facts;
  facts.committed = {{tps[1], 3}};
  facts.latest = {{tps[0], 9}, {tps[1], 9}};
  const ResetPlan plan = plan_reset({ResetScenario::ToCurrent, 0, {}}, tps, facts);
  EXPECT_EQ(by_partition(plan.offsets), (std::map<int, std::int64_t>{{0, 9}, {1, 3}}));
}

TEST(ResetPlan, ATimestampAfterEveryRecordFallsBackToTheLogEndWithKafkasNotice) {
  const std::vector<TopicPartition> tps{{"t", 0}, {"t", 1}};
  PartitionFacts facts;
  facts.by_timestamp = {{tps[0], 4}, {tps[1], -1}};
  facts.latest = {{tps[0], 9}, {tps[1], 7}};
  const ResetPlan plan = plan_reset({ResetScenario::ToDatetime, 0, {}}, tps, facts);
  EXPECT_EQ(by_partition(plan.offsets), (std::map<int, std::int64_t>{{0, 4}, {1, 7}}));
  EXPECT_EQ(plan.notices,
            "\nWarn: Partition 1 from topic t is empty. Falling back to latest known offset.\n");
}

TEST(ResetPlan, FromFileCoversTheFilesPartitionsAndClampsThem) {
  ResetSpec spec{ResetScenario::FromFile, 0, {{TopicPartition("t", 1), 100}, {TopicPartition("u", 0), 2}}};
  PartitionFacts facts;
  facts.earliest = {{TopicPartition("t", 1), 0}, {TopicPartition("u", 0), 0}};
  facts.latest = {{TopicPartition("t", 1), 10}, {TopicPartition("u", 0), 10}};
  const ResetPlan plan = plan_reset(spec, {}, facts);
  ASSERT_EQ(plan.offsets.size(), 2u);
  EXPECT_EQ(plan.warnings.size(), 1u);
}

TEST(ResetPlan, AMissingFactIsAnErrorNamingThePartition) {
  try {
    plan_reset({ResetScenario::ToLatest, 0, {}}, {TopicPartition("t", 3)}, PartitionFacts{});
    FAIL() << "no error";
  } catch (const StateError& e) {
    EXPECT_STREQ(e.what(), "Error getting ending offset of topic partition: t-3");
  }
}

TEST(TopicArgument, ParsesAsKafkaDoes) {
  EXPECT_FALSE(parse_topic_argument("orders").partitions.has_value());
  const TopicArgument some = parse_topic_argument("orders:0,2,+3,");
  EXPECT_EQ(some.topic, "orders");
  EXPECT_EQ(*some.partitions, (std::vector<std::int32_t>{0, 2, 3}));
  EXPECT_TRUE(parse_topic_argument("orders:,").partitions->empty());
}

TEST(TopicArgument, JunkGivesKafkasMessages) {
  const auto message_of = [](const char* argument) {
    try {
      parse_topic_argument(argument);
    } catch (const StateError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of("t:0,x"), "Invalid partition 'x' specified in topic arg 't:0,x''");
  EXPECT_EQ(message_of("t:,0"), "Invalid partition '' specified in topic arg 't:,0''");
  EXPECT_EQ(message_of("t:99999999999"),
            "Invalid partition '99999999999' specified in topic arg 't:99999999999''");
  EXPECT_EQ(message_of("t:0:1"), "Invalid topic arg 't:0:1', expected topic name and partitions");
  EXPECT_EQ(message_of("t:"), "Invalid topic arg 't:', expected topic name and partitions");
}

TEST(ResetDatetime, ParsesKafkasFormatsInUtcByDefault) {
  EXPECT_EQ(parse_reset_datetime("2024-01-01T00:00:00.000"), 1704067200000);
  EXPECT_EQ(parse_reset_datetime("2024-01-01T00:00:00.000Z"), 1704067200000);
  EXPECT_EQ(parse_reset_datetime("2024-01-01T01:00:05.250+01:00"), 1704067205250);
  EXPECT_EQ(parse_reset_datetime("2024-01-01T00:00:00.000-05"), 1704067200000 + 5 * 3600 * 1000);
  EXPECT_EQ(parse_reset_datetime("2024-02-29T12:30:00.5"), 1709209800005)
      << "'.5' is 5 ms, as SimpleDateFormat reads it";
  EXPECT_EQ(parse_reset_datetime("2024-01-01T00:00:00.000Ztrailing"), 1704067200000);
  // The values below are what Kafka 4.4's Utils.getDateTime returned for the same text.
  EXPECT_EQ(parse_reset_datetime("2024-01-01T00:00:00.000+0530"), 1704049200000)
      << "'+05', then '30' ignored";
  EXPECT_EQ(parse_reset_datetime("2024-1-1T0:0:0.0"), 1704067200000);
  EXPECT_EQ(parse_reset_datetime("2024-01-01T 10:00:00.000"), 1704103200000);
  EXPECT_EQ(parse_reset_datetime("1500-03-01T00:00:00.000"), -14825808000000) << "Julian before 1582-10-15";
  EXPECT_EQ(parse_reset_datetime("24-01-01T00:00:00.000"), -61410009600000) << "the year 24, literally";
}

TEST(ResetDatetime, RejectsWithKafkasMessages) {
  const auto message_of = [](const char* text) {
    try {
      parse_reset_datetime(text);
    } catch (const StateError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of("junk"),
            "Error parsing timestamp. It does not contain a 'T' according to ISO8601 format");
  EXPECT_EQ(message_of("2024-01-01T"),
            "Error parsing timestamp. It does not contain a 'T' according to ISO8601 format");
  EXPECT_EQ(message_of("2024-01-01T00:00:00"), "Unparseable date: \"2024-01-01T00:00:00Z\"");
  EXPECT_EQ(message_of("2024-13-01T00:00:00.000"), "Unparseable date: \"2024-13-01T00:00:00.000Z\"");
  EXPECT_EQ(message_of("2023-02-29T00:00:00.000"), "Unparseable date: \"2023-02-29T00:00:00.000Z\"");
  EXPECT_EQ(message_of("2024-01-01T24:00:00.000"), "Unparseable date: \"2024-01-01T24:00:00.000Z\"");
  EXPECT_EQ(message_of("2024-01-01T00:00:00.000+25:00"),
            "Unparseable date: \"2024-01-01T00:00:00.000+25:00\"");
  EXPECT_EQ(message_of("2024-01-01T00:00:00.1234"), "Unparseable date: \"2024-01-01T00:00:00.1234Z\"");
  EXPECT_EQ(message_of("2024-01-01T00:00:00.000T"), "Unparseable date: \"2024-01-01T00:00:00.000TZ\"");
  EXPECT_EQ(message_of("1582-10-10T00:00:00.000"), "Unparseable date: \"1582-10-10T00:00:00.000Z\"");
}

TEST(ResetDuration, ParsesJavaDurations) {
  EXPECT_EQ(parse_reset_duration_ms("PT15M"), 15 * 60 * 1000);
  EXPECT_EQ(parse_reset_duration_ms("P1DT2H"), (24 + 2) * 3600 * 1000);
  EXPECT_EQ(parse_reset_duration_ms("pt1.5s"), 1500);
  EXPECT_EQ(parse_reset_duration_ms("-PT1H"), -3600 * 1000);
  EXPECT_EQ(parse_reset_duration_ms("PT-0.5S"), -500);
  EXPECT_EQ(parse_reset_duration_ms("P2D"), 2 * 86400 * 1000);
  EXPECT_EQ(parse_reset_duration_ms("PT1,5S"), 1500);
  EXPECT_EQ(parse_reset_duration_ms("P-1DT1H"), -82800000);
  EXPECT_EQ(parse_reset_duration_ms("-P-1D"), 86400000);
  EXPECT_EQ(parse_reset_duration_ms("PT1.S"), 1000);
  for (const char* bad :
       {"", "P", "PT", "P1DT", "1D", "PT1D", "PT1.1234567891S", "P1H", "PT1H1H", "junk", "PT.5S", "P1D2H"}) {
    try {
      parse_reset_duration_ms(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const StateError& e) {
      EXPECT_STREQ(e.what(), "Text cannot be parsed to a Duration") << bad;
    }
  }
}

TEST(ResetTable, PrintsKafkasColumns) {
  const std::vector<GroupPlan> groups{{"g", {{TopicPartition("t", 0), 5}, {TopicPartition("t", 10), 1234}}}};
  EXPECT_EQ(format_reset_table(groups),
            "\nGROUP           TOPIC           PARTITION  NEW-OFFSET"
            "\ng               t               0          5"
            "\ng               t               10         1234\n");
  const std::string long_topic(20, 'x');
  EXPECT_EQ(format_reset_table({{"g", {{TopicPartition(long_topic, 0), 1}}}}),
            "\nGROUP           TOPIC                PARTITION  NEW-OFFSET\ng               " + long_topic +
                " 0          1\n");
  EXPECT_EQ(format_reset_table({}), "\n");
  EXPECT_EQ(format_reset_table({{"g", {}}}), "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\n");
}

TEST(ResetExport, PrintsKafkasCsvWithItsTrailingEmptyLine) {
  const std::vector<GroupPlan> groups{{"g", {{TopicPartition("t", 0), 5}, {TopicPartition("t", 1), 7}}}};
  EXPECT_EQ(format_reset_export(groups, false), "t,0,5\nt,1,7\n\n");
  EXPECT_EQ(format_reset_export(groups, true), "g,t,0,5\ng,t,1,7\n\n");
}

TEST(Progress, SaysHowFarAndHowLongToGo) {
  EXPECT_EQ(format_progress("reset g", 0, 4000, std::chrono::milliseconds(0)),
            "reset g: 0/4000 partitions (0%), 0.0 s elapsed, ETA ?");
  EXPECT_EQ(format_progress("reset g", 1000, 4000, std::chrono::milliseconds(2000)),
            "reset g: 1000/4000 partitions (25%), 2.0 s elapsed, ETA 6.0 s");
}

}  // namespace
}  // namespace processor::offsetctl
