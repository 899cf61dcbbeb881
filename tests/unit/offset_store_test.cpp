#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <thread>

#include "encoding/crc32c.hpp"
#include "kafka/store/stored_offset_format.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  static std::atomic<int> counter{0};
  auto dir = fs::temp_directory_path() /
             ("processor-store-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(dir);
  return dir;
}

// Every OffsetStore implementation must satisfy the same contract.
enum class StoreKind { InMemory, MemoryBackend, RocksDbBackend };

class OffsetStoreContract : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    switch (GetParam()) {
      case StoreKind::InMemory:
        store_ = std::make_shared<InMemoryOffsetStore>();
        break;
      case StoreKind::MemoryBackend:
        store_ = std::make_shared<StateBackendOffsetStore>(std::make_shared<state::MemoryStateBackend>());
        break;
      case StoreKind::RocksDbBackend:
        dir_ = fresh_dir("contract");
        store_ =
            std::make_shared<StateBackendOffsetStore>(std::make_shared<state::RocksDbStateBackend>(dir_));
        break;
    }
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::shared_ptr<OffsetStore> store_;
  fs::path dir_;
};

TEST_P(OffsetStoreContract, StoresAndReadsBackEveryField) {
  OffsetInfo info = OffsetInfo::with_high_watermark(100, 250);
  info.metadata = "worker-3";
  info.leader_epoch = 4;
  store_->store_offset("g", {"t", 0}, info);
  const auto read = store_->get_offset("g", {"t", 0});
  ASSERT_TRUE(read);
  EXPECT_EQ(read->offset, 100);
  EXPECT_EQ(read->high_watermark, 250);
  EXPECT_EQ(read->metadata, "worker-3");
  EXPECT_EQ(read->leader_epoch, 4);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::microseconds>(read->last_updated.time_since_epoch()),
            std::chrono::duration_cast<std::chrono::microseconds>(info.last_updated.time_since_epoch()));
  EXPECT_FALSE(store_->get_offset("g", {"t", 1}));
  EXPECT_FALSE(store_->get_offset("other", {"t", 0}));
}

TEST_P(OffsetStoreContract, GroupsWithColonsStayApart) {
  store_->store_offset("g", {"t", 0}, OffsetInfo(1));
  store_->store_offset("g:x", {"t", 0}, OffsetInfo(2));
  store_->store_offset("g:x", {"u", 1}, OffsetInfo(3));
  const auto group_g = store_->get_all_offsets("g");
  ASSERT_EQ(group_g.size(), 1u);
  EXPECT_EQ(group_g.at(TopicPartition("t", 0)).offset, 1);
  EXPECT_EQ(store_->get_all_offsets("g:x").size(), 2u);

  store_->clear_offsets("g");
  EXPECT_TRUE(store_->get_all_offsets("g").empty());
  EXPECT_EQ(store_->get_all_offsets("g:x").size(), 2u);
}

TEST_P(OffsetStoreContract, BatchStoresEveryPartitionAndDeleteRemovesOne) {
  std::vector<PartitionOffset> batch;
  for (int p = 0; p < 50; ++p) batch.emplace_back(TopicPartition("orders", p), OffsetInfo(p * 10));
  store_->store_offsets("g", batch);
  auto all = store_->get_all_offsets("g");
  ASSERT_EQ(all.size(), 50u);
  EXPECT_EQ(all.at(TopicPartition("orders", 49)).offset, 490);

  store_->delete_offset("g", {"orders", 7});
  EXPECT_FALSE(store_->get_offset("g", {"orders", 7}));
  EXPECT_EQ(store_->get_all_offsets("g").size(), 49u);
}

TEST_P(OffsetStoreContract, RejectsBadInputAndKeepsWhatWasStored) {
  store_->store_offset("g", {"t", 0}, OffsetInfo(5));
  EXPECT_STATE_ERROR(store_->store_offset("g", {"t", 0}, OffsetInfo(-1)), ErrorKind::InvalidArgument, "-1");
  EXPECT_STATE_ERROR(store_->store_offset("g", {"bad topic", 0}, OffsetInfo(1)), ErrorKind::InvalidArgument,
                     "bad topic");
  EXPECT_STATE_ERROR(store_->store_offset("", {"t", 0}, OffsetInfo(1)), ErrorKind::InvalidArgument, "group");
  // A batch with one bad entry stores nothing.
  std::vector<PartitionOffset> batch{{TopicPartition("t", 0), OffsetInfo(9)},
                                     {TopicPartition("t", -2), OffsetInfo(1)}};
  EXPECT_STATE_ERROR(store_->store_offsets("g", batch), ErrorKind::InvalidArgument, "-2");
  EXPECT_EQ(store_->get_offset("g", {"t", 0})->offset, 5);
}

TEST_P(OffsetStoreContract, ConcurrentWritersAndReadersSeeWholeValues) {
  if (testing::kThreadSanitizer && GetParam() == StoreKind::RocksDbBackend) {
    GTEST_SKIP() << "RocksDB's write groups are invisible to TSan without an instrumented RocksDB";
  }
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([this, w] {
      for (int i = 0; i < 200; ++i) store_->store_offset("g", {"t", w}, OffsetInfo(i));
    });
  }
  threads.emplace_back([this] {
    for (int i = 0; i < 200; ++i) {
      for (const auto& [tp, info] : store_->get_all_offsets("g")) ASSERT_LT(info.offset, 200);
    }
  });
  for (auto& thread : threads) thread.join();
  for (int w = 0; w < 4; ++w) EXPECT_EQ(store_->get_offset("g", {"t", w})->offset, 199);
}

INSTANTIATE_TEST_SUITE_P(AllStores, OffsetStoreContract,
                         ::testing::Values(StoreKind::InMemory, StoreKind::MemoryBackend,
                                           StoreKind::RocksDbBackend),
                         [](const ::testing::TestParamInfo<StoreKind>& param_info) {
                           switch (param_info.param) {
                             case StoreKind::InMemory:
                               return std::string("InMemory");
                             case StoreKind::MemoryBackend:
                               return std::string("MemoryBackend");
                             case StoreKind::RocksDbBackend:
                               return std::string("RocksDbBackend");
                           }
                           return std::string("Unknown");
                         });

TEST(StateBackendOffsetStore, UsesTheSeedKeyLayout) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  StateBackendOffsetStore store(backend);
  store.store_offset("my-group", {"my-topic", 3}, OffsetInfo(10));
  EXPECT_EQ(backend->list_keys(""), std::vector<std::string>{"kafka_offset:my-group:my-topic:3"});
  StateBackendOffsetStore custom(backend, "offsets/");
  EXPECT_EQ(custom.key_for("g", {"t", 1}), "offsets/g:t:1");
}

TEST(StateBackendOffsetStore, CorruptValueIsAnErrorNeverAnOffset) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  StateBackendOffsetStore store(backend);
  store.store_offset("g", {"t", 0}, OffsetInfo::with_high_watermark(123456, 200000));
  const std::string key = "kafka_offset:g:t:0";
  const std::string good = *backend->get(key);

  // Every single-bit flip is caught by the checksum.
  for (std::size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      backend->put(key, bad);
      EXPECT_STATE_ERROR(store.get_offset("g", {"t", 0}), ErrorKind::Corruption, key);
    }
  }
  backend->put(key, good.substr(0, good.size() - 1));
  EXPECT_STATE_ERROR(store.get_offset("g", {"t", 0}), ErrorKind::Corruption, key);
  backend->put(key, "100");  // what a naive store would have written
  EXPECT_STATE_ERROR(store.get_all_offsets("g"), ErrorKind::Corruption, key);
  backend->put(key, "");
  EXPECT_STATE_ERROR(store.get_offset("g", {"t", 0}), ErrorKind::Corruption, "too short");
}

TEST(StateBackendOffsetStore, MalformedKeyInsideTheGroupIsCorruption) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  StateBackendOffsetStore store(backend);
  backend->put("kafka_offset:g:t:notanumber", internal::encode_offset(OffsetInfo(1)));
  EXPECT_STATE_ERROR(store.get_all_offsets("g"), ErrorKind::Corruption, "kafka_offset:g:t:notanumber");
}

TEST(StateBackendOffsetStore, UnknownFormatVersionIsCorruption) {
  std::string bytes = internal::encode_offset(OffsetInfo(7));
  bytes[0] = 9;
  const std::string body = bytes.substr(0, bytes.size() - 4);
  const std::uint32_t crc = encoding::crc32c(body);
  std::string resealed = body;
  for (int i = 0; i < 4; ++i) resealed.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  EXPECT_STATE_ERROR(internal::decode_offset(resealed, "k"), ErrorKind::Corruption, "version 9");
}

TEST(StateBackendOffsetStore, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(encoding::crc32c("123456789"), 0xE3069283u);
}

TEST(StateBackendOffsetStore, BatchIsOneAtomicBackendWrite) {
  struct CountingBackend : state::MemoryStateBackend {
    int writes = 0;
    int puts = 0;
    void write(const state::WriteBatch& batch) override {
      ++writes;
      MemoryStateBackend::write(batch);
    }
    void put(std::string_view key, std::string_view value) override {
      ++puts;
      MemoryStateBackend::put(key, value);
    }
  };
  auto backend = std::make_shared<CountingBackend>();
  StateBackendOffsetStore store(backend);
  std::vector<PartitionOffset> batch;
  for (int p = 0; p < 10; ++p) batch.emplace_back(TopicPartition("t", p), OffsetInfo(p));
  store.store_offsets("g", batch);
  EXPECT_EQ(backend->writes, 1);
  EXPECT_EQ(backend->puts, 0);
  EXPECT_EQ(backend->count(), 10u);
}

// Records the keys of every put, in the order the store hands them over.
struct KeyRecordingBackend : state::MemoryStateBackend {
  std::vector<std::string> keys;
  void write_puts(std::span<const PutView> puts) override {
    for (const auto& [key, value] : puts) keys.emplace_back(key);
    MemoryStateBackend::write_puts(puts);
  }
};

TEST(StateBackendOffsetStore, CommitReachesTheBackendSortedByKeyAndALaterEntryWins) {
  auto backend = std::make_shared<KeyRecordingBackend>();
  StateBackendOffsetStore store(backend);
  // Topics whose order differs with and without the ':' that follows them ("a0:" < "a:" <
  // "a_:"), partitions whose byte order is not numeric (1, 10, 2), and "t:5" twice.
  std::vector<PartitionOffset> batch;
  for (const char* topic : {"a", "a0", "a-b", "a_", "A", "t"}) {
    for (int p : {2, 10, 1, 0, 100, 2147483647, 21})
      batch.emplace_back(TopicPartition(topic, p), OffsetInfo(p));
  }
  batch.emplace_back(TopicPartition("t", 5), OffsetInfo(1));
  batch.emplace_back(TopicPartition("a", 3), OffsetInfo(3));
  batch.emplace_back(TopicPartition("t", 5), OffsetInfo(2));
  store.store_offsets("g", batch);

  std::vector<std::string> sorted = backend->keys;
  std::stable_sort(sorted.begin(), sorted.end());
  EXPECT_EQ(backend->keys, sorted);
  ASSERT_EQ(backend->keys.size(), batch.size());
  EXPECT_EQ(backend->keys.front(), "kafka_offset:g:A:0");
  EXPECT_EQ(store.get_offset("g", {"t", 5})->offset, 2);
  EXPECT_EQ(store.get_offset("g", {"a", 2147483647})->offset, 2147483647);
  EXPECT_EQ(store.get_all_offsets("g").size(), batch.size() - 1);
}

// Large commits are sorted by radix rather than by comparison: the same order, the same winner.
TEST(StateBackendOffsetStore, LargeCommitReachesTheBackendSortedByKeyAndALaterEntryWins) {
  auto backend = std::make_shared<KeyRecordingBackend>();
  StateBackendOffsetStore store(backend);
  std::vector<PartitionOffset> batch;
  std::mt19937 random(5);
  for (const char* topic : {"orders", "orders0", "orders-eu", "Orders", "o"}) {
    for (int p = 0; p < 1200; ++p) batch.emplace_back(TopicPartition(topic, p), OffsetInfo(p));
  }
  batch.emplace_back(TopicPartition("o", 2147483647), OffsetInfo(9));
  std::shuffle(batch.begin(), batch.end(), random);
  batch.emplace_back(TopicPartition("orders", 7), OffsetInfo(70));  // after the first "orders:7"
  store.store_offsets("g", batch);

  ASSERT_EQ(backend->keys.size(), batch.size());
  EXPECT_TRUE(std::is_sorted(backend->keys.begin(), backend->keys.end()));
  EXPECT_EQ(store.get_offset("g", {"orders", 7})->offset, 70);
  EXPECT_EQ(store.get_offset("g", {"o", 2147483647})->offset, 9);
  EXPECT_EQ(store.get_offset("g", {"orders-eu", 1199})->offset, 1199);
}

TEST(StateBackendOffsetStore, ForEachOffsetVisitsTheGroupsOffsetsOnly) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  StateBackendOffsetStore store(backend);
  store.store_offset("g", {"t", 0}, OffsetInfo(1));
  store.store_offset("g", {"u", 7}, OffsetInfo::with_high_watermark(2, 9));
  store.store_offset("g:x", {"t", 0}, OffsetInfo(3));
  std::vector<std::string> seen;
  store.for_each_offset("g", [&](std::string_view topic, std::int32_t partition, const OffsetInfo& info) {
    seen.push_back(std::string(topic) + ":" + std::to_string(partition) + "=" + std::to_string(info.offset));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"t:0=1", "u:7=2"}));

  backend->put("kafka_offset:g:t:1", "garbage");
  EXPECT_STATE_ERROR(store.for_each_offset("g", [](std::string_view, std::int32_t, const OffsetInfo&) {}),
                     ErrorKind::Corruption, "kafka_offset:g:t:1");
}

TEST(StateBackendOffsetStore, RocksDbOffsetsSurviveClosingAndReopening) {
  const auto dir = fresh_dir("reopen");
  {
    StateBackendOffsetStore store(std::make_shared<state::RocksDbStateBackend>(dir));
    store.store_offset("g", {"t", 0}, OffsetInfo::with_high_watermark(100, 200));
    store.store_offset("g", {"t", 1}, OffsetInfo(7));
  }
  {
    StateBackendOffsetStore store(std::make_shared<state::RocksDbStateBackend>(dir));
    const auto all = store.get_all_offsets("g");
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all.at(TopicPartition("t", 0)).offset, 100);
    EXPECT_EQ(all.at(TopicPartition("t", 0)).high_watermark, 200);
    EXPECT_EQ(all.at(TopicPartition("t", 1)).offset, 7);
  }
  fs::remove_all(dir);
}

TEST(OffsetStore, DefaultBatchCallsStoreOffsetPerEntry) {
  struct SeedOnlyStore : OffsetStore {
    std::vector<TopicPartition> stored;
    void store_offset(std::string_view, const TopicPartition& tp, const OffsetInfo&) override {
      stored.push_back(tp);
    }
    std::optional<OffsetInfo> get_offset(std::string_view, const TopicPartition&) override {
      return std::nullopt;
    }
    std::unordered_map<TopicPartition, OffsetInfo> get_all_offsets(std::string_view) override { return {}; }
    void delete_offset(std::string_view, const TopicPartition&) override {}
    void clear_offsets(std::string_view) override {}
  };
  SeedOnlyStore store;
  std::vector<PartitionOffset> batch{{TopicPartition("t", 0), OffsetInfo(1)},
                                     {TopicPartition("t", 1), OffsetInfo(2)}};
  store.store_offsets("g", batch);
  EXPECT_EQ(store.stored, (std::vector<TopicPartition>{{"t", 0}, {"t", 1}}));
}

TEST(StateBackendOffsetStore, AKeyNamingAnIllegalTopicIsCorruption) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  StateBackendOffsetStore store(backend);
  backend->put("kafka_offset:g:bad topic:0", internal::encode_offset(OffsetInfo(1)));
  EXPECT_STATE_ERROR(store.get_all_offsets("g"), ErrorKind::Corruption, "kafka_offset:g:bad topic:0");

  // Through the manager: restore() reports the stored data as corrupt and takes nothing.
  OffsetManager manager("g", nullptr, std::make_shared<StateBackendOffsetStore>(backend),
                        OffsetCommitStrategy::manual());
  EXPECT_STATE_ERROR(manager.restore(), ErrorKind::Corruption, "bad topic");
}

// A user's store that returns what no store accepts: restore() must call it corrupt data, not
// blame its caller with InvalidArgument.
struct StoreReturningInvalidOffsets : InMemoryOffsetStore {
  std::unordered_map<TopicPartition, OffsetInfo> stored;
  std::unordered_map<TopicPartition, OffsetInfo> get_all_offsets(std::string_view) override { return stored; }
};

TEST(OffsetManager, RestoreOfValuesNoStoreAcceptsIsCorruption) {
  auto store = std::make_shared<StoreReturningInvalidOffsets>();
  OffsetInfo negative_high_watermark(5);
  negative_high_watermark.high_watermark = -1;
  store->stored = {{TopicPartition("t", 0), OffsetInfo(3)},
                   {TopicPartition("t", 1), negative_high_watermark}};
  OffsetManager manager("g", nullptr, store, OffsetCommitStrategy::manual());
  EXPECT_STATE_ERROR(manager.restore(), ErrorKind::Corruption, "invalid high watermark -1 for t:1");
  EXPECT_FALSE(manager.get_offset("t", 0)) << "a failed restore takes none of the offsets";

  store->stored = {{TopicPartition("", 0), OffsetInfo(3)}};
  EXPECT_STATE_ERROR(manager.restore(), ErrorKind::Corruption, "invalid topic ''");
  store->stored = {{TopicPartition("t", 0), OffsetInfo(-4)}};
  EXPECT_STATE_ERROR(manager.restore(), ErrorKind::Corruption, "invalid offset -4");
}

}  // namespace
}  // namespace processor::kafka
