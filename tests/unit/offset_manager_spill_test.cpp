// Acknowledgement metadata longer than the broker takes: spilled to the state backend at commit,
// a reference committed in its place, and followed by acked_after_restart().
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "recording_log_sink.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

namespace fs = std::filesystem;
using testing::FlakyOffsetStore;

// Spilling is opt-in (OffsetManagerOptions::spill_ack_metadata).
OffsetManagerOptions spilling() {
  OffsetManagerOptions options;
  options.spill_ack_metadata = true;
  return options;
}
using testing::RecordingSink;

constexpr std::size_t kBudget = 4096;  // the broker's offset.metadata.max.bytes default
const TopicPartition kOrders{"orders", 0};

// One slow record (offset 0) and, above it, the odd offsets, each acknowledged (the even ones
// are gaps: compacted away, say). One acknowledged run per two offsets, so that 60'000 offsets
// need more than 4 KiB of metadata in either encoding (a bitset of 60'000 bits is 7.5 KB before
// base64), with one record outstanding.
struct SlowRecordWorkload {
  std::int64_t records = 60'000;

  // Tracks and acknowledges the workload; returns the offset that tracking first refused
  // (records when none).
  std::int64_t run(OffsetManager& manager) const {
    for (std::int64_t offset = 0; offset < records; ++offset) {
      if (offset != 0 && offset % 2 == 0) continue;
      if (!manager.track(kOrders.topic, kOrders.partition, offset)) return offset;
      if (offset % 2 == 1) {
        EXPECT_TRUE(manager.ack(kOrders.topic, kOrders.partition, offset));
      }
    }
    return records;
  }
  // The set a restarted consumer must get back: every odd offset, record 0 still pending.
  AckedSet expected() const {
    AckedSet set;
    for (std::int64_t offset = 1; offset < records; offset += 2) set.acked.push_back({offset, offset});
    return set;
  }
};

// A state backend, and an offset store kept in it, that a test can reopen as a restarted
// process would: in memory (the same objects) or RocksDB in a temporary directory (closed and
// opened again).
class SpillBackends : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("processor-ack-spill-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::remove_all(dir_);
    reopen();
  }
  void TearDown() override {
    set_log_sink({});
    backend_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  void reopen() {
    store_.reset();
    if (GetParam() == "rocksdb") {
      backend_.reset();
      backend_ = std::make_shared<state::RocksDbStateBackend>(dir_);
    } else if (!backend_) {
      backend_ = std::make_shared<state::MemoryStateBackend>();
    }
    store_ = std::make_shared<StateBackendOffsetStore>(backend_);
  }
  std::unique_ptr<OffsetManager> manager(std::shared_ptr<state::StateBackend> backend) const {
    return std::make_unique<OffsetManager>("group", std::move(backend), store_,
                                           OffsetCommitStrategy::manual(), spilling());
  }
  std::string committed_metadata() const {
    return store_->get_offset("group", kOrders)->metadata.value_or("");
  }
  std::string spill_key() const { return "acks:group:orders:0"; }

  fs::path dir_;
  std::shared_ptr<state::StateBackend> backend_;
  std::shared_ptr<OffsetStore> store_;
};

INSTANTIATE_TEST_SUITE_P(Backends, SpillBackends, ::testing::Values("memory", "rocksdb"),
                         [](const auto& test) { return test.param; });

TEST_P(SpillBackends, ASlowRecordBelowMoreThan4KiBOfAcknowledgementsKeepsBeingTrackedWithABackend) {
  const SlowRecordWorkload workload;
  auto with_backend = manager(backend_);
  EXPECT_EQ(workload.run(*with_backend), workload.records);

  auto without_backend = std::make_unique<OffsetManager>(
      "other", nullptr, std::make_shared<InMemoryOffsetStore>(), OffsetCommitStrategy::manual());
  const std::int64_t accepted = workload.run(*without_backend);
  EXPECT_LT(accepted, workload.records);  // back-pressure at the metadata budget, as before
  EXPECT_GT(accepted, 1000);

  // A backend alone does not spill: the set would not follow the partition to another host.
  auto not_spilling = std::make_unique<OffsetManager>(
      "other", backend_, std::make_shared<InMemoryOffsetStore>(), OffsetCommitStrategy::manual());
  EXPECT_EQ(workload.run(*not_spilling), accepted);
}

TEST_P(SpillBackends, TheCommitCarriesAReferenceAndARestartGetsTheWholeSetBack) {
  const SlowRecordWorkload workload;
  {
    auto first = manager(backend_);
    ASSERT_EQ(workload.run(*first), workload.records);
    EXPECT_EQ(first->commit(), 1u);
  }
  const std::string reference = committed_metadata();
  EXPECT_TRUE(reference.starts_with("@acks/v1:")) << reference;
  EXPECT_LE(reference.size(), kBudget);
  EXPECT_TRUE(backend_->contains(spill_key()));

  reopen();  // the process dies; a new one opens the same state directory
  auto restarted = manager(backend_);
  restarted->restore();
  const auto acked = restarted->acked_after_restart("orders", 0);
  ASSERT_TRUE(acked);
  EXPECT_EQ(*acked, workload.expected());
  EXPECT_EQ(restarted->stats().ack_metadata_ignored, 0u);

  // The consumer resumes there: acknowledged records are refused, the slow one is not.
  restarted->adopt_start_position("orders", 0, 0, store_->get_offset("group", kOrders));
  restarted->resume_tracking("orders", 0, *acked);
  EXPECT_TRUE(restarted->track("orders", 0, 0));
  EXPECT_THROW(restarted->track("orders", 0, 1), StateError);
  EXPECT_TRUE(restarted->ack("orders", 0, 0));
  EXPECT_TRUE(restarted->track("orders", 0, 2));  // a gap before, a record now: not skipped
}

TEST_P(SpillBackends, TheSpilledRecordIsWrittenBeforeTheStoreIsCalled) {
  // A store that looks into the backend when it is asked to commit a reference.
  class CheckingStore : public InMemoryOffsetStore {
   public:
    std::function<void(const OffsetInfo&)> on_commit;
    void store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) override {
      for (const auto& [tp, info] : offsets) on_commit(info);
      InMemoryOffsetStore::store_offsets(group, offsets);
    }
  };
  auto store = std::make_shared<CheckingStore>();
  int references = 0;
  store->on_commit = [&](const OffsetInfo& info) {
    if (!info.metadata || !info.metadata->starts_with("@")) return;
    ++references;
    OffsetManager reader("group", backend_, std::make_shared<InMemoryOffsetStore>(),
                         OffsetCommitStrategy::manual(), spilling());
    reader.adopt_start_position("orders", 0, info.offset, info);
    EXPECT_TRUE(reader.acked_after_restart("orders", 0)) << "the reference names nothing yet";
  };
  OffsetManager writer("group", backend_, store, OffsetCommitStrategy::manual(), spilling());
  ASSERT_EQ(SlowRecordWorkload{}.run(writer), SlowRecordWorkload{}.records);
  writer.commit();
  EXPECT_EQ(references, 1);
}

TEST_P(SpillBackends, ALaterCommitThatFitsInlineDeletesTheSpilledRecord) {
  const SlowRecordWorkload workload;
  auto writer = manager(backend_);
  ASSERT_EQ(workload.run(*writer), workload.records);
  writer->commit();
  ASSERT_TRUE(backend_->contains(spill_key()));
  EXPECT_TRUE(writer->ack("orders", 0, 0));  // the slow record finishes: nothing is left above
  writer->commit();
  EXPECT_EQ(store_->get_offset("group", kOrders)->offset, workload.records);
  EXPECT_FALSE(committed_metadata().starts_with("@"));
  EXPECT_FALSE(backend_->contains(spill_key()));
}

TEST_P(SpillBackends, AReferenceWhoseRecordIsMissingIsIgnoredWithAWarning) {
  const SlowRecordWorkload workload;
  {
    auto writer = manager(backend_);
    ASSERT_EQ(workload.run(*writer), workload.records);
    writer->commit();
  }
  // Another machine: the same committed offsets (the broker), another state directory.
  RecordingSink sink;
  set_log_sink(sink.sink());
  auto elsewhere = manager(std::make_shared<state::MemoryStateBackend>());
  elsewhere->restore();
  EXPECT_FALSE(elsewhere->acked_after_restart("orders", 0));
  EXPECT_EQ(elsewhere->stats().ack_metadata_ignored, 1u);
  // Without a state backend at all.
  auto stateless = manager(nullptr);
  stateless->restore();
  EXPECT_FALSE(stateless->acked_after_restart("orders", 0));
  const auto records = sink.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].component, "acks");
  EXPECT_EQ(records[0].level, LogLevel::Warning);
  EXPECT_NE(records[0].message.find("orders:0"), std::string::npos) << records[0].message;
  EXPECT_NE(records[0].message.find("not in the state backend"), std::string::npos) << records[0].message;
  EXPECT_NE(records[1].message.find("no state backend"), std::string::npos) << records[1].message;
}

TEST_P(SpillBackends, ACrashBetweenSpillingAndCommittingLeavesAReferenceThatNoLongerMatches) {
  auto store = std::make_shared<FlakyOffsetStore>();
  SlowRecordWorkload workload;
  {
    OffsetManager writer("group", backend_, store, OffsetCommitStrategy::manual(), spilling());
    ASSERT_EQ(workload.run(writer), workload.records);
    writer.commit();
    // A second slow record and more acknowledgements above it; the first slow record finishes.
    // The next commit (at the second slow record) spills again, and never reaches the store.
    ASSERT_TRUE(writer.track("orders", 0, workload.records + 1));
    for (std::int64_t offset = workload.records + 3; offset < 2 * workload.records; offset += 2) {
      ASSERT_TRUE(writer.track("orders", 0, offset));
      ASSERT_TRUE(writer.ack("orders", 0, offset));
    }
    ASSERT_TRUE(writer.ack("orders", 0, 0));
    store->fail_writes(1);
    EXPECT_THROW(writer.commit(), StateError);
  }
  RecordingSink sink;
  set_log_sink(sink.sink());
  OffsetManager restarted("group", backend_, store, OffsetCommitStrategy::manual(), spilling());
  restarted.restore();
  EXPECT_FALSE(restarted.acked_after_restart("orders", 0));
  ASSERT_EQ(sink.records().size(), 1u);
  EXPECT_NE(sink.records()[0].message.find("is not the one it refers to"), std::string::npos)
      << sink.records()[0].message;
}

TEST_P(SpillBackends, TamperedReferencesAndGarbageAreIgnoredWithAWarningNeverAThrow) {
  const SlowRecordWorkload workload;
  {
    auto writer = manager(backend_);
    ASSERT_EQ(workload.run(*writer), workload.records);
    writer->commit();
  }
  const std::string reference = committed_metadata();
  std::string wrong_checksum = reference;
  wrong_checksum.back() = wrong_checksum.back() == '0' ? '1' : '0';
  std::string wrong_length = reference;
  wrong_length.insert(std::string("@acks/v1:").size(), "1");
  const std::vector<std::string> untrusted = {wrong_checksum,
                                              wrong_length,
                                              "@acks/v1:",
                                              "@acks/v2:10:00000000",
                                              "@acks/v1:012:00000000",
                                              "@acks/v1:12:0000000G",
                                              "@",
                                              "consumer-1 was here",
                                              "AAAA====",
                                              reference + " "};
  RecordingSink sink;
  set_log_sink(sink.sink());
  for (const auto& metadata : untrusted) {
    OffsetInfo info(0);
    info.metadata = metadata;
    store_->store_offset("group", kOrders, info);
    auto reader = manager(backend_);
    reader->restore();
    std::optional<AckedSet> acked;
    EXPECT_NO_THROW(acked = reader->acked_after_restart("orders", 0)) << metadata;
    EXPECT_FALSE(acked) << metadata;
    EXPECT_EQ(reader->stats().ack_metadata_ignored, 1u) << metadata;
  }
  EXPECT_EQ(sink.records().size(), untrusted.size());
  for (const auto& record : sink.records()) {
    EXPECT_EQ(record.component, "acks");
    EXPECT_NE(record.message.find("ignoring the acknowledgement metadata of orders:0"), std::string::npos)
        << record.message;
  }
  // The reference itself, put back, is still honoured.
  OffsetInfo info(0);
  info.metadata = reference;
  store_->store_offset("group", kOrders, info);
  auto reader = manager(backend_);
  reader->restore();
  EXPECT_TRUE(reader->acked_after_restart("orders", 0));
}

TEST(AckSpill, WithoutABackendNothingChanges) {
  // Back-pressure keeps the metadata inline, under the budget; nothing is spilled.
  auto store = std::make_shared<InMemoryOffsetStore>();
  OffsetManager manager("group", nullptr, store, OffsetCommitStrategy::manual());
  const std::int64_t accepted = SlowRecordWorkload{}.run(manager);
  ASSERT_LT(accepted, SlowRecordWorkload{}.records);
  manager.commit();
  const auto metadata = store->get_offset("group", kOrders)->metadata;
  ASSERT_TRUE(metadata);
  EXPECT_LE(metadata->size(), kBudget);
  EXPECT_FALSE(metadata->starts_with("@"));
  const auto acked = manager.acked_after_restart("orders", 0);
  ASSERT_TRUE(acked);
  EXPECT_TRUE(acked->contains(1));
  EXPECT_FALSE(acked->contains(0));
}

}  // namespace
}  // namespace processor::kafka
