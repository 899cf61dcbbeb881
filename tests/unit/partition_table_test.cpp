// PartitionTable: the OffsetManager's registry of partitions, found without a lock.
#include "kafka/manager/partition_table.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "processor/error.hpp"

namespace processor::kafka::internal {
namespace {

TEST(PartitionTable, FindsNothingForAPartitionNeverAdded) {
  PartitionTable table;
  EXPECT_EQ(table.find("orders", 0), nullptr);
  table.find_or_add("orders", 0);
  EXPECT_EQ(table.find("orders", 1), nullptr);
  EXPECT_EQ(table.find("order", 0), nullptr);
}

TEST(PartitionTable, FindOrAddReturnsOneSlotPerPartition) {
  PartitionTable table;
  detail::PartitionSlot& slot = table.find_or_add("orders", 3);
  EXPECT_EQ(&table.find_or_add("orders", 3), &slot);
  EXPECT_EQ(table.find("orders", 3), &slot);
  EXPECT_EQ(*slot.topic, "orders");
  EXPECT_EQ(slot.partition, 3);
  EXPECT_NE(&table.find_or_add("payments", 3), &slot);
  processor::detail::MutexLock lock(table.mutex());
  EXPECT_EQ(table.size_locked(), 2u);
}

TEST(PartitionTable, SlotsKeepTheirAddressWhileTheTableGrows) {
  PartitionTable table;
  std::vector<detail::PartitionSlot*> slots;
  for (int topic = 0; topic < 20; ++topic) {
    for (int partition = 0; partition < 1'000; ++partition) {
      slots.push_back(&table.find_or_add("topic-" + std::to_string(topic), partition));
    }
  }
  std::size_t index = 0;
  for (int topic = 0; topic < 20; ++topic) {
    for (int partition = 0; partition < 1'000; ++partition) {
      ASSERT_EQ(table.find("topic-" + std::to_string(topic), partition), slots[index++]);
    }
  }
  processor::detail::MutexLock lock(table.mutex());
  EXPECT_EQ(table.size_locked(), slots.size());
  index = 0;
  for (detail::PartitionSlot& slot : table.slots_locked()) EXPECT_EQ(&slot, slots[index++]);
  EXPECT_EQ(index, slots.size());  // every slot, in registration order
}

TEST(PartitionTable, InternsEachTopicNameOnce) {
  PartitionTable table;
  const detail::PartitionSlot& first = table.find_or_add("orders", 0);
  table.find_or_add("payments", 0);
  const detail::PartitionSlot& second = table.find_or_add("orders", 1);
  EXPECT_EQ(first.topic, second.topic);
}

TEST(PartitionTable, RefusesAnInvalidTopicOrPartitionAndAddsNothing) {
  PartitionTable table;
  EXPECT_THROW(table.find_or_add("", 0), StateError);
  EXPECT_THROW(table.find_or_add("orders", -1), StateError);
  EXPECT_THROW(table.find_or_add("bad/name", 0), StateError);
  processor::detail::MutexLock lock(table.mutex());
  EXPECT_EQ(table.size_locked(), 0u);
}

TEST(PartitionTable, ReservingAheadKeepsEverySlotFindable) {
  PartitionTable table;
  detail::PartitionSlot& before = table.find_or_add("orders", 0);
  table.reserve_additional(50'000);
  for (int partition = 1; partition <= 50'000; ++partition) table.find_or_add("orders", partition);
  EXPECT_EQ(table.find("orders", 0), &before);
  EXPECT_NE(table.find("orders", 50'000), nullptr);
}

// Readers find every partition added before they started, while a writer grows the index and
// the directory under them (run under TSan in CI).
TEST(PartitionTable, LockFreeReadersFindEverySlotWhileAWriterAdds) {
  PartitionTable table;
  constexpr int kKnown = 512;
  std::vector<detail::PartitionSlot*> known;
  for (int partition = 0; partition < kKnown; ++partition)
    known.push_back(&table.find_or_add("known", partition));
  std::atomic<bool> writing{true};
  std::atomic<int> misses{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      do {
        for (int partition = 0; partition < kKnown; ++partition) {
          if (table.find("known", partition) != known[static_cast<std::size_t>(partition)])
            misses.fetch_add(1);
        }
      } while (writing.load());
    });
  }
  for (int partition = 0; partition < 20'000; ++partition) table.find_or_add("growing", partition);
  writing.store(false);
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(misses.load(), 0);
  EXPECT_NE(table.find("growing", 19'999), nullptr);
}

}  // namespace
}  // namespace processor::kafka::internal
