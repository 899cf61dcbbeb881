// Bad input through the public API, as a table: every case is one class of bad input, run as
// its own test. Each case must throw the StateError kind its header documents (or return what
// the header documents, for the calls that refuse without throwing), with a message that names
// the bad value, and must change nothing a user can observe: the manager's views, stats, lag,
// watermark and checkpoints, the offset store and the state backend.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeBroker;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int32_t kInt32Min = std::numeric_limits<std::int32_t>::min();

// The partitions the broker knows: t:0 .. t:5. A failed call that registered any other partition
// would show in refresh_high_watermarks(), which then asks the broker about it.
constexpr std::int32_t kKnownPartitions = 6;

// A manager with committed, pending, checkpointed and tracked offsets, and what it stands on.
struct World {
  World() {
    for (std::int32_t p = 0; p < kKnownPartitions; ++p) broker->set_range({"t", p}, 0, 1000);
    manager = std::make_unique<OffsetManager>("group", backend, store, OffsetCommitStrategy::manual(),
                                              OffsetManagerOptions{broker});
    manager->update_offset("t", 0, 100);
    manager->update_offset_with_watermark("t", 1, 50, 500);
    manager->commit();
    manager->update_offset("t", 0, 120);
    manager->checkpoint(1);
    manager->notify_checkpoint_complete(1);
    manager->update_offset("t", 0, 130);  // pending; its floor is 130
    manager->checkpoint(2);               // taken, not completed
    acked_ticket = manager->track_record("t", 2, 10);
    manager->track("t", 2, 11);
    manager->track("t", 2, 12);
    manager->ack(*acked_ticket);
    // A ticket of t:5's previous assignment: the partition was revoked and tracked again since.
    stale_ticket = manager->track_record("t", 5, 3);
    manager->forget_partitions({TopicPartition("t", 5)});
    manager->track("t", 5, 3);
    manager->notify_watermark(Watermark(1000));
  }
  ~World() {
    held.reset();  // releases its directory before the directory goes
    std::error_code ignored;
    for (const auto& path : cleanup) fs::remove_all(path, ignored);
  }

  // A fresh path under the temporary directory, removed with the world.
  fs::path temp_path(const std::string& name) {
    auto path =
        fs::temp_directory_path() / ("processor-bad-input-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(path);
    cleanup.push_back(path);
    return path;
  }

  std::shared_ptr<FakeBroker> broker = std::make_shared<FakeBroker>();
  std::shared_ptr<state::MemoryStateBackend> backend = std::make_shared<state::MemoryStateBackend>();
  std::shared_ptr<InMemoryOffsetStore> store = std::make_shared<InMemoryOffsetStore>();
  std::unique_ptr<OffsetManager> manager;
  std::optional<AckTicket> acked_ticket;
  std::optional<AckTicket> stale_ticket;
  // A second manager a case builds; its views must be empty after the refused call.
  std::unique_ptr<OffsetManager> second;
  // Extra state a case checks is unchanged (a file's content, whether a path exists).
  std::function<std::string()> extra_state;
  // What a case's preparation keeps open (a RocksDB backend holding a directory's lock).
  std::shared_ptr<state::StateBackend> held;
  std::vector<fs::path> cleanup;
};

std::string describe(const OffsetInfo& info, bool with_time = true) {
  std::ostringstream out;
  out << info.offset << " hwm=" << (info.high_watermark ? std::to_string(*info.high_watermark) : "-")
      << " metadata=" << info.metadata.value_or("-")
      << " epoch=" << (info.leader_epoch ? std::to_string(*info.leader_epoch) : "-");
  if (with_time) out << " at=" << info.last_updated.time_since_epoch().count();
  return out.str();
}

template <class Call>
std::string outcome(Call&& call) {
  try {
    std::ostringstream out;
    out << call();
    return out.str();
  } catch (const StateError& error) {
    return std::string("error ") + std::string(to_string(error.kind())) + ": " + error.what();
  }
}

// Everything a user can see of the world.
struct Observed {
  std::map<std::string, std::string> committed, pending, stored, backend;
  std::string stats, total_lag, watermark, checkpoints, checkpointed, refreshed, extra;
};

Observed observe(World& w) {
  Observed seen;
  OffsetManager& m = *w.manager;
  // First: it records the broker's high watermarks, which the views below then show.
  seen.refreshed = outcome([&] { return m.refresh_high_watermarks(); });
  for (const auto& [tp, info] : m.get_all_committed()) seen.committed[tp.to_key()] = describe(info);
  for (const auto& [tp, info] : m.get_all_pending()) seen.pending[tp.to_key()] = describe(info, false);
  for (const auto& [tp, info] : w.store->get_all_offsets("group")) seen.stored[tp.to_key()] = describe(info);
  for (const auto& [key, value] : w.backend->scan("")) seen.backend[key] = value;
  const OffsetStats s = m.stats();
  seen.stats = std::to_string(s.total_commits) + "/" + std::to_string(s.successful_commits) + "/" +
               std::to_string(s.failed_commits) + "/" + std::to_string(s.total_offsets_committed) + "/" +
               std::to_string(s.last_commit_time ? s.last_commit_time->time_since_epoch().count() : -1);
  seen.total_lag = outcome([&] { return m.total_lag(); });
  seen.watermark = m.current_watermark() ? std::to_string(m.current_watermark()->millis()) : "-";
  for (const auto id : m.list_checkpoints()) seen.checkpoints += std::to_string(id) + " ";
  for (std::int32_t p = 0; p < kKnownPartitions; ++p) {
    const auto offset = m.checkpointed_offset("t", p);
    seen.checkpointed += (offset ? std::to_string(*offset) : "-") + " ";
  }
  seen.checkpointed += m.last_restore_report() ? "restored" : "not restored";
  if (w.extra_state) seen.extra = w.extra_state();
  return seen;
}

void expect_same(const Observed& before, const Observed& after) {
  EXPECT_EQ(before.refreshed, after.refreshed) << "refresh_high_watermarks() (a partition was registered?)";
  EXPECT_EQ(before.committed, after.committed) << "committed view";
  EXPECT_EQ(before.pending, after.pending) << "pending view";
  EXPECT_EQ(before.stored, after.stored) << "offset store";
  EXPECT_EQ(before.backend, after.backend) << "state backend";
  EXPECT_EQ(before.stats, after.stats) << "stats()";
  EXPECT_EQ(before.total_lag, after.total_lag) << "total_lag()";
  EXPECT_EQ(before.watermark, after.watermark) << "current_watermark()";
  EXPECT_EQ(before.checkpoints, after.checkpoints) << "list_checkpoints()";
  EXPECT_EQ(before.checkpointed, after.checkpointed) << "checkpointed_offset() / last_restore_report()";
  EXPECT_EQ(before.extra, after.extra) << "case state";
}

// A client that never reaches a network: librdkafka's in-process mock cluster.
std::shared_ptr<KafkaClient> mock_client(const std::string& group) {
  return KafkaClient::create(
      {{"bootstrap.servers", "127.0.0.1:9"}, {"group.id", group}, {"test.mock.num.brokers", "1"}});
}

KafkaConsumerOptions consumer_options(std::vector<std::string> topics) {
  KafkaConsumerOptions options;
  options.topics = std::move(topics);
  return options;
}

std::string file_content(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One class of bad input. `prepare` sets up what the case needs, before the world is observed;
// `act` makes the one bad call. `kind` is what it must throw; nullopt for calls documented to
// refuse by returning false (then `act` returns what the call returned).
struct Case {
  std::string name;
  std::function<void(World&)> prepare;
  std::function<bool(World&)> act;
  std::optional<ErrorKind> kind;
  std::vector<std::string> needles;  // each must appear in what()
  bool mock_cluster = false;         // the case starts librdkafka's mock cluster
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

// A call that must throw: its return value, if any, is dropped.
template <class Call>
std::function<bool(World&)> call(Call c) {
  return [c](World& w) {
    c(w);
    return true;
  };
}

Case refused(std::string name, std::function<bool(World&)> act, ErrorKind kind,
             std::vector<std::string> needles) {
  return Case{std::move(name), {}, std::move(act), kind, std::move(needles)};
}

Case refused_after(std::string name, std::function<void(World&)> prepare, std::function<bool(World&)> act,
                   ErrorKind kind, std::vector<std::string> needles) {
  return Case{std::move(name), std::move(prepare), std::move(act), kind, std::move(needles)};
}

// A case whose call runs on a client of librdkafka's mock cluster.
Case on_mock_cluster(Case c) {
  c.mock_cluster = true;
  return c;
}

Case returns_false(std::string name, std::function<bool(World&)> act) {
  return Case{std::move(name), {}, std::move(act), std::nullopt, {}};
}

constexpr auto kInvalid = ErrorKind::InvalidArgument;

std::vector<Case> offset_cases() {
  return {
      refused("NegativeOffset", call([](World& w) { w.manager->update_offset("t", 0, -5); }), kInvalid,
              {"-5"}),
      refused("Int64MinOffset", call([](World& w) { w.manager->update_offset("t", 0, kInt64Min); }), kInvalid,
              {"-9223372036854775808"}),
      refused("NegativeOffsetOfANewPartition", call([](World& w) { w.manager->update_offset("t", 7, -5); }),
              kInvalid, {"-5", "t:7"}),
      refused("OffsetBelowTheFloor", call([](World& w) { w.manager->update_offset("t", 0, 50); }), kInvalid,
              {"50", "130"}),
      refused("NegativeOffsetWithHighWatermark",
              call([](World& w) { w.manager->update_offset_with_watermark("t", 0, -5, 900); }), kInvalid,
              {"-5"}),
      refused("NegativeOffsetWithEventTime",
              call([](World& w) { w.manager->update_offset_with_event_time("t", 0, -5, Watermark(10)); }),
              kInvalid, {"-5"}),
      refused("NegativeOffsetWithEventTimeOfANewPartition",
              call([](World& w) { w.manager->update_offset_with_event_time("t", 8, -5, Watermark(10)); }),
              kInvalid, {"-5"}),
      refused("EventTimeOffsetBelowTheFloor",
              call([](World& w) { w.manager->update_offset_with_event_time("t", 0, 50, Watermark(10)); }),
              kInvalid, {"50"}),
      refused("NegativeOffsetThroughAHandle", call([](World& w) { w.manager->partition("t", 0).update(-5); }),
              kInvalid, {"-5"}),
      refused("NegativeAdoptedOffset", call([](World& w) { w.manager->adopt_committed_offset("t", 0, -5); }),
              kInvalid, {"-5"}),
      refused("NegativeAdoptedOffsetOfANewPartition",
              call([](World& w) { w.manager->adopt_committed_offset("t", 9, -5); }), kInvalid, {"-5"}),
      refused("NegativeStoredOffsetOfAStartPosition",
              call([](World& w) { w.manager->adopt_start_position("t", 0, 140, OffsetInfo(-7)); }), kInvalid,
              {"-7"}),
      refused("NegativeOffsetMarkedCommitted", call([](World& w) {
                w.manager->mark_committed({{TopicPartition("t", 0), OffsetInfo(-5)}});
              }),
              kInvalid, {"-5"}),
      refused("NegativeRecordOffset", call([](World& w) { w.manager->track("t", 3, -5); }), kInvalid, {"-5"}),
      refused("NegativeRecordOffsetOfANewPartition", call([](World& w) { w.manager->track("t", 7, -5); }),
              kInvalid, {"-5"}),
      refused("RecordOffsetAboveInt64MaxMinusOne",
              call([](World& w) { w.manager->track("t", 3, kInt64Max); }), kInvalid, {"9223372036854775807"}),
      refused("RecordOffsetBelowTheCommittedOffset", call([](World& w) { w.manager->track("t", 0, 50); }),
              kInvalid, {"50"}),
      refused("RecordOffsetNotAboveTheLastTracked", call([](World& w) { w.manager->track("t", 2, 11); }),
              kInvalid, {"11"}),
  };
}

std::vector<Case> partition_and_topic_cases() {
  auto topic_case = [](std::string name, std::string topic, std::string needle) {
    return refused(std::move(name), call([topic](World& w) { w.manager->update_offset(topic, 0, 5); }),
                   kInvalid, {std::move(needle)});
  };
  return {
      refused("NegativePartition", call([](World& w) { w.manager->update_offset("t", -1, 5); }), kInvalid,
              {"partition -1"}),
      refused("Int32MinPartition", call([](World& w) { w.manager->update_offset("t", kInt32Min, 5); }),
              kInvalid, {"-2147483648"}),
      refused("NegativePartitionHandle", call([](World& w) { w.manager->partition("t", -1); }), kInvalid,
              {"-1"}),
      refused("NegativePartitionReset",
              call([](World& w) { w.manager->reset_offset("t", -3, OffsetResetStrategy::specific(5)); }),
              kInvalid, {"-3"}),
      refused("NegativePartitionLag", call([](World& w) { w.manager->lag("t", -2, 100); }), kInvalid, {"-2"}),
      refused("NegativePartitionRead", call([](World& w) { w.manager->get_offset("t", -4); }), kInvalid,
              {"-4"}),
      topic_case("EmptyTopic", "", "topic ''"),
      topic_case("DotTopic", ".", "'.'"),
      topic_case("DotDotTopic", "..", "'..'"),
      topic_case("TopicOf250Characters", std::string(250, 'x'), "250 characters"),
      topic_case("TopicWithASpace", "my topic", "'my topic'"),
      topic_case("TopicWithASlash", "a/b", "'a/b'"),
      topic_case("TopicWithAColon", "a:b", "'a:b'"),
      topic_case("NonAsciiTopic", "caf\xc3\xa9", "caf\\xc3\\xa9"),
      topic_case("TopicWithANulByte", std::string("a\0b", 3), "a\\x00b"),
      refused("InvalidTopicInTheStore", call([](World& w) {
                w.store->store_offset("group", {"bad topic", 0}, OffsetInfo(1));
              }),
              kInvalid, {"bad topic"}),
      refused("InvalidTopicMarkedCommitted", call([](World& w) {
                w.manager->mark_committed({{TopicPartition("a/b", 0), OffsetInfo(1)}});
              }),
              kInvalid, {"a/b"}),
      refused("EmptyGroup",
              call([](World& w) { OffsetManager("", w.backend, w.store, OffsetCommitStrategy::manual()); }),
              kInvalid, {"consumer group ''"}),
      refused("EmptyGroupInTheStore", call([](World& w) { w.store->get_all_offsets(""); }), kInvalid,
              {"consumer group ''"}),
  };
}

std::vector<Case> duration_and_reset_cases() {
  return {
      refused("ZeroPeriodicInterval", call([](World&) { OffsetCommitStrategy::periodic(milliseconds(0)); }),
              kInvalid, {"interval 0"}),
      // The value may be given in the interval's own unit or in nanoseconds ("-5000000000ns").
      refused("NegativePeriodicInterval", call([](World&) { OffsetCommitStrategy::periodic(seconds(-5)); }),
              kInvalid, {"-5"}),
      // Once reported as a misleading "interval -1000000ns" (duration_cast wrapped).
      refused("PeriodicIntervalOfMaxMilliseconds",
              call([](World&) { OffsetCommitStrategy::periodic(milliseconds::max()); }), kInvalid,
              {"9223372036854775807", "longer than the longest supported"}),
      refused("ZeroEveryNEvents", call([](World&) { OffsetCommitStrategy::every_n_events(0); }), kInvalid,
              {"count 0"}),
      refused("NegativeEveryNEvents", call([](World&) { OffsetCommitStrategy::every_n_events(-3); }),
              kInvalid, {"-3"}),
      // Once overflowed into a negative duration.
      refused("ByDurationOfMaxHours", call([](World&) { OffsetResetStrategy::by_duration(hours::max()); }),
              kInvalid, {"9223372036854775807", "longer than the longest supported"}),
      // The value may be given in the duration's own unit or in milliseconds ("-1000").
      refused("NegativeByDuration", call([](World&) { OffsetResetStrategy::by_duration(seconds(-1)); }),
              kInvalid, {"-1"}),
      refused("ZeroStateTtl", call([](World&) { state::MemoryStateBackend backend(milliseconds(0)); }),
              kInvalid, {"0ms"}),
      refused("NegativeStateTtl", call([](World&) { state::MemoryStateBackend backend(milliseconds(-5)); }),
              kInvalid, {"-5ms"}),
      refused("NegativeAutoCommitRetryBackoff", call([](World& w) {
                OffsetManagerOptions options;
                options.auto_commit_retry_backoff = milliseconds(-5);
                OffsetManager("group", w.backend, w.store, OffsetCommitStrategy::manual(), options);
              }),
              kInvalid, {"-5ms"}),
      refused("NegativeSpecificReset", call([](World&) { OffsetResetStrategy::specific(-5); }), kInvalid,
              {"-5"}),
      refused("Int64MinSpecificReset", call([](World&) { OffsetResetStrategy::specific(kInt64Min); }),
              kInvalid, {"-9223372036854775808"}),
      refused("NegativeTimestampReset", call([](World&) { OffsetResetStrategy::timestamp(-1); }), kInvalid,
              {"-1"}),
      refused("NegativeHighWatermarkOfAReset",
              call([](World& w) { w.manager->reset_offset("t", 0, OffsetResetStrategy::specific(5), -9); }),
              kInvalid, {"-9"}),
      refused("ShiftWithoutACommittedOffset",
              call([](World& w) { w.manager->reset_offset("t", 4, OffsetResetStrategy::shift_by(-3)); }),
              ErrorKind::NotFound, {"t:4", "-3"}),
  };
}

std::vector<Case> watermark_cases() {
  return {
      refused("NegativeHighWatermark",
              call([](World& w) { w.manager->update_offset_with_watermark("t", 0, 140, -1); }), kInvalid,
              {"high watermark -1"}),
      refused("NegativeHighWatermarkOfANewPartition",
              call([](World& w) { w.manager->update_offset_with_watermark("t", 6, 5, -1); }), kInvalid,
              {"high watermark -1"}),
      refused("NegativeHighWatermarkAlone",
              call([](World& w) { w.manager->update_high_watermark("t", 0, -7); }), kInvalid, {"-7"}),
      refused("NegativeHighWatermarkAloneOfANewPartition",
              call([](World& w) { w.manager->update_high_watermark("t", 8, -7); }), kInvalid, {"-7"}),
      refused("Int64MinHighWatermark",
              call([](World& w) { w.manager->update_high_watermark("t", 1, kInt64Min); }), kInvalid,
              {"-9223372036854775808"}),
      refused("NegativeHighWatermarkThroughAHandle",
              call([](World& w) { w.manager->partition("t", 0).update(140, -1); }), kInvalid, {"-1"}),
      refused("NegativeHighWatermarkOfALag", call([](World& w) { w.manager->lag("t", 0, -1); }), kInvalid,
              {"-1"}),
      refused(
          "NegativeHighWatermarkMarkedCommitted", call([](World& w) {
            w.manager->mark_committed({{TopicPartition("t", 0), OffsetInfo::with_high_watermark(200, -1)}});
          }),
          kInvalid, {"-1"}),
      returns_false("WatermarkBelowTheCurrentOne",
                    [](World& w) { return w.manager->notify_watermark(Watermark(kInt64Min)); }),
  };
}

std::vector<Case> ack_and_metadata_cases() {
  return {
      refused("AckOfATicketTwice", call([](World& w) { w.manager->ack(*w.acked_ticket); }), kInvalid, {"10"}),
      refused("AckOfAPartitionNeverTracked", call([](World& w) { w.manager->ack("t", 1, 5); }), kInvalid,
              {"record 5 of t:1"}),
      refused("AckOfARecordNeverTracked", call([](World& w) { w.manager->ack("t", 2, 13); }), kInvalid,
              {"13"}),
      refused("AckOfAnotherPartitionsRecord", call([](World& w) { w.manager->ack("t", 5, 11); }), kInvalid,
              {"11"}),
      refused("AckOfANegativeOffset", call([](World& w) { w.manager->ack("t", 2, -1); }), kInvalid, {"-1"}),
      refused("AckOfInt64Max", call([](World& w) { w.manager->ack("t", 2, kInt64Max); }), kInvalid,
              {"9223372036854775807"}),
      returns_false("AckOfATicketFromAnEarlierAssignment",
                    [](World& w) { return w.manager->ack(*w.stale_ticket); }),
      refused_after("ZeroOutstandingRecordsAllowed",
                    [](World& w) {
                      OffsetManagerOptions options;
                      options.acks.max_outstanding = 0;
                      w.second = std::make_unique<OffsetManager>("group", w.backend, w.store,
                                                                 OffsetCommitStrategy::manual(), options);
                    },
                    call([](World& w) { w.second->track("t", 3, 1); }), kInvalid, {"max_outstanding 0"}),
      refused("ZeroWindowOffsets", call([](World&) {
                PartitionAcksOptions options;
                options.max_window_offsets = 0;
                PartitionAcks acks(0, options);
              }),
              kInvalid, {"max_window_offsets 0"}),
      refused("MetadataBudgetBelowTheMinimum", call([](World&) {
                PartitionAcksOptions options;
                options.metadata_budget_bytes = 15;
                PartitionAcks acks(0, options);
              }),
              kInvalid, {"metadata_budget_bytes 15"}),
      refused("RestoredAcknowledgementsOverTheMetadataBudget", call([](World&) {
                AckedSet restored;
                for (std::int64_t offset = 2; offset < 200; offset += 2)
                  restored.acked.push_back({offset, offset});
                PartitionAcksOptions options;
                options.metadata_budget_bytes = 16;
                PartitionAcks acks(restored, options);
              }),
              kInvalid, {"metadata_budget_bytes 16"}),
      refused("MalformedRestoredAcknowledgements", call([](World&) {
                PartitionAcks acks(AckedSet{10, {{5, 6}}});
              }),
              kInvalid, {"[5, 6]"}),
      refused("NegativeAckBase", call([](World&) { PartitionAcks acks(-1); }), kInvalid, {"-1"}),
      refused("UndecodableAckMetadata", call([](World&) { PartitionAcks::decode_metadata("not*base64"); }),
              ErrorKind::Corruption, {"acknowledgement metadata"}),
  };
}

std::vector<Case> checkpoint_cases() {
  return {
      refused("CompletionOfAnUnknownCheckpoint",
              call([](World& w) { w.manager->notify_checkpoint_complete(42); }), ErrorKind::NotFound, {"42"}),
      refused("CompletionOfACompletedCheckpoint",
              call([](World& w) { w.manager->notify_checkpoint_complete(1); }), ErrorKind::NotFound,
              {"checkpoint 1"}),
      refused("RestoreOfAnUnknownCheckpoint", call([](World& w) { w.manager->restore_from_checkpoint(42); }),
              ErrorKind::NotFound, {"42"}),
      refused("CheckpointIdNotAboveTheLast", call([](World& w) { w.manager->checkpoint(2); }), kInvalid,
              {"checkpoint id 2"}),
      refused("CheckpointIdZero", call([](World& w) { w.manager->checkpoint(0); }), kInvalid,
              {"checkpoint id 0"}),
      refused_after("CheckpointWithoutAStateBackend",
                    [](World& w) {
                      w.second = std::make_unique<OffsetManager>("group", nullptr, w.store,
                                                                 OffsetCommitStrategy::manual());
                    },
                    call([](World& w) { w.second->checkpoint(5); }), kInvalid, {"state backend"}),
      refused_after(
          "CorruptStoredOffsetOnRestore",
          [](World& w) {
            auto offsets = std::make_shared<StateBackendOffsetStore>(w.backend, "bad_input:");
            w.backend->put(offsets->key_for("group", {"t", 0}), "garbage");
            w.second =
                std::make_unique<OffsetManager>("group", w.backend, offsets, OffsetCommitStrategy::manual());
          },
          call([](World& w) { w.second->restore(); }), ErrorKind::Corruption, {"bad_input:group:t:0"}),
  };
}

std::vector<Case> storage_and_config_cases() {
  return {
      refused("EmptyRocksDbPath", call([](World&) { state::RocksDbStateBackend db(""); }), ErrorKind::Storage,
              {"''"}),
      refused_after("RocksDbPathThatIsAFile",
                    [](World& w) {
                      const auto file = w.temp_path("file");
                      std::ofstream(file) << "not a database";
                      w.extra_state = [file] { return file_content(file); };
                    },
                    call([](World& w) { state::RocksDbStateBackend db(w.cleanup.back()); }),
                    ErrorKind::Storage, {"processor-bad-input-", "-file'"}),
      refused_after("RocksDbPathWithoutItsParentAndNoCreate",
                    [](World& w) {
                      const auto parent = w.temp_path("missing");
                      w.extra_state = [parent] {
                        return std::string(fs::exists(parent) ? "exists" : "absent");
                      };
                    },
                    call([](World& w) {
                      state::RocksDbOptions options;
                      options.create_if_missing = false;
                      state::RocksDbStateBackend db(w.cleanup.back() / "db", options);
                    }),
                    ErrorKind::Storage, {"missing/db"}),
      refused("UnwritableRocksDbPath",
              call([](World&) { state::RocksDbStateBackend db("/proc/processor-bad-input/db"); }),
              ErrorKind::Storage, {"/proc/processor-bad-input/db"}),
      refused_after("RocksDbPathLockedByAnotherBackend",
                    [](World& w) {
                      auto first = std::make_shared<state::RocksDbStateBackend>(w.temp_path("locked"));
                      first->put("key", "value");
                      w.extra_state = [first] {
                        return first->get("key").value_or("-") + std::to_string(first->count());
                      };
                      w.held = first;
                    },
                    call([](World& w) { state::RocksDbStateBackend second(w.cleanup.back()); }),
                    ErrorKind::Storage, {"-locked'", "is locked"}),
      refused("NullOffsetStore", call([](World& w) {
                OffsetManager("group", w.backend, nullptr, OffsetCommitStrategy::manual());
              }),
              kInvalid, {"null"}),
      refused("NullStateBackendOfAnOffsetStore", call([](World&) { StateBackendOffsetStore store(nullptr); }),
              kInvalid, {"null"}),
      refused("NullClientOfAKafkaOffsetStore", call([](World&) { KafkaOffsetStore store(nullptr); }),
              kInvalid, {"null"}),
      refused("NullClientOfBrokerMetadata", call([](World&) { KafkaBrokerMetadata metadata(nullptr); }),
              kInvalid, {"null"}),
      refused("NullClientOfAConsumer",
              call([](World& w) { KafkaConsumer consumer(nullptr, *w.manager, consumer_options({"t"})); }),
              kInvalid, {"null"}),
      refused("ClientWithoutBootstrapServers", call([](World&) {
                KafkaClient::create({{"group.id", "group"}});
              }),
              kInvalid, {"bootstrap.servers"}),
      refused("ClientWithoutGroupId", call([](World&) {
                KafkaClient::create({{"bootstrap.servers", "127.0.0.1:9"}});
              }),
              kInvalid, {"group.id"}),
      refused("ClientWithAnUnknownProperty", call([](World&) {
                KafkaClient::create(
                    {{"bootstrap.servers", "127.0.0.1:9"}, {"group.id", "group"}, {"no.such.property", "1"}});
              }),
              kInvalid, {"no.such.property"}),
      refused("ClientWithABadPropertyValue", call([](World&) {
                KafkaClient::create({{"bootstrap.servers", "127.0.0.1:9"},
                                     {"group.id", "group"},
                                     {"session.timeout.ms", "soon"}});
              }),
              kInvalid, {"soon"}),
      refused("ProducerWithoutATransactionalId", call([](World&) {
                TransactionalProducer producer(KafkaProperties{{"bootstrap.servers", "127.0.0.1:9"}});
              }),
              kInvalid, {"transactional.id"}),
      on_mock_cluster(refused("ConsumerWithoutTopics", call([](World& w) {
                                KafkaConsumer consumer(mock_client("group"), *w.manager,
                                                       consumer_options({}));
                              }),
                              kInvalid, {"topic"})),
      on_mock_cluster(refused("ConsumerOfAnInvalidTopic", call([](World& w) {
                                KafkaConsumer consumer(mock_client("group"), *w.manager,
                                                       consumer_options({"a b"}));
                              }),
                              kInvalid, {"'a b'"})),
      on_mock_cluster(refused("ConsumerOfAnotherGroup", call([](World& w) {
                                KafkaConsumer consumer(mock_client("other"), *w.manager,
                                                       consumer_options({"t"}));
                              }),
                              kInvalid, {"'other'"})),
      on_mock_cluster(refused("KafkaOffsetStoreOfAnotherGroup", call([](World&) {
                                KafkaOffsetStore(mock_client("other")).get_offset("group", {"t", 0});
                              }),
                              kInvalid, {"'group'"})),
  };
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (auto part :
       {offset_cases(), partition_and_topic_cases(), duration_and_reset_cases(), watermark_cases(),
        ack_and_metadata_cases(), checkpoint_cases(), storage_and_config_cases()}) {
    for (auto& c : part) cases.push_back(std::move(c));
  }
  return cases;
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, IsRefusedAsDocumentedAndChangesNothing) {
  const Case& c = GetParam();
  if (c.mock_cluster && testing::kThreadSanitizer) {
    GTEST_SKIP() << "librdkafka's mock cluster runs threads TSan cannot see into (librdkafka is not "
                    "instrumented) and crashes under it; the other CI stages run this case";
  }
  World world;
  if (c.prepare) c.prepare(world);
  const Observed before = observe(world);
  if (c.kind) {
    try {
      c.act(world);
      ADD_FAILURE() << "expected StateError(" << to_string(*c.kind) << ")";
    } catch (const StateError& error) {
      EXPECT_EQ(error.kind(), *c.kind) << error.what();
      for (const auto& needle : c.needles) {
        EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)
            << "message '" << error.what() << "' does not name '" << needle << "'";
      }
    }
  } else {
    EXPECT_FALSE(c.act(world));
  }
  if (world.second) {
    EXPECT_TRUE(world.second->get_all_pending().empty());
    EXPECT_TRUE(world.second->get_all_committed().empty());
  }
  expect_same(before, observe(world));
}

INSTANTIATE_TEST_SUITE_P(PublicApi, BadInput, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

TEST(BadInputTable, HasOneCasePerClassWithUniqueNames) {
  const auto cases = all_cases();
  std::set<std::string> names;
  for (const auto& c : cases) EXPECT_TRUE(names.insert(c.name).second) << c.name;
  EXPECT_GE(cases.size(), 40u);
}

}  // namespace
}  // namespace processor::kafka
