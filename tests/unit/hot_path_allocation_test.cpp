// The hot path allocates nothing: counted by replacing the global allocator in this binary.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "processor/kafka.hpp"

namespace {
std::atomic<long> g_allocations{0};
}

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace processor::kafka {
namespace {

TEST(HotPath, UpdatingAKnownPartitionAllocatesNothing) {
  for (auto strategy :
       {OffsetCommitStrategy::manual(), OffsetCommitStrategy::every_n_events(1'000'000'000),
        OffsetCommitStrategy::periodic(std::chrono::hours(1)), OffsetCommitStrategy::on_watermark()}) {
    OffsetManager manager("group", nullptr, std::make_shared<InMemoryOffsetStore>(), strategy);
    auto handle = manager.partition("orders", 3);
    manager.update_offset("orders-with-a-long-topic-name", 1, 0);

    const long before = g_allocations.load();
    for (std::int64_t offset = 1; offset <= 10000; ++offset) {
      handle.update(offset);
      manager.update_offset("orders-with-a-long-topic-name", 1, offset);
      manager.update_offset_with_watermark("orders", 3, offset, offset + 10);
    }
    EXPECT_EQ(g_allocations.load() - before, 0) << to_string(strategy);
    EXPECT_EQ(manager.get_all_pending().at(TopicPartition("orders", 3)).offset, 10000);
  }
}

TEST(HotPath, AllocationCounterSeesAllocations) {
  const long before = g_allocations.load();
  OffsetManager manager("group", nullptr, std::make_shared<InMemoryOffsetStore>(),
                        OffsetCommitStrategy::manual());
  manager.update_offset("new-topic", 0, 1);  // registration allocates
  EXPECT_GT(g_allocations.load() - before, 0);
}

}  // namespace
}  // namespace processor::kafka
