// A store written against the seed implements only the seven original members; these tests
// pin down that the write(), scan() and snapshot() it inherits work on top of them.

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "processor/error.hpp"
#include "processor/state/memory_state_backend.hpp"
#include "processor/state/state_backend.hpp"

namespace processor::state {
namespace {

using Rows = std::vector<std::pair<std::string, std::string>>;

class SeedMapBackend : public StateBackend {
 public:
  std::optional<std::string> get(std::string_view key) override {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  void put(std::string_view key, std::string_view value) override {
    std::lock_guard lock(mutex_);
    entries_.insert_or_assign(std::string(key), std::string(value));
  }
  void remove(std::string_view key) override {
    std::lock_guard lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) entries_.erase(it);
  }
  std::vector<std::string> list_keys(std::string_view prefix) override {
    std::lock_guard lock(mutex_);
    std::vector<std::string> keys;
    for (const auto& [key, value] : entries_) {
      if (key.starts_with(prefix)) keys.push_back(key);
    }
    return keys;
  }
  void clear() override {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }
  std::size_t count() override {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }
  bool contains(std::string_view key) override {
    std::lock_guard lock(mutex_);
    return entries_.find(key) != entries_.end();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::string, std::less<>> entries_;  // GUARDED_BY(mutex_)
};

// Lists keys that get() no longer finds, as a concurrent remove between the two calls would.
class VanishingKeysBackend : public SeedMapBackend {
 public:
  explicit VanishingKeysBackend(std::set<std::string> vanished) : vanished_(std::move(vanished)) {}
  std::optional<std::string> get(std::string_view key) override {
    if (vanished_.contains(std::string(key))) return std::nullopt;
    return SeedMapBackend::get(key);
  }

 private:
  const std::set<std::string> vanished_;
};

TEST(StateBackendDefaults, WriteAppliesEveryOperationInBatchOrder) {
  SeedMapBackend backend;
  backend.put("stale", "x");
  WriteBatch batch;
  batch.put("k", "first");
  batch.remove("stale");
  batch.put("k", "second");
  batch.put("gone", "y");
  batch.remove("gone");
  backend.write(batch);
  EXPECT_EQ(backend.get("k"), "second");
  EXPECT_FALSE(backend.contains("stale"));
  EXPECT_FALSE(backend.contains("gone"));
  EXPECT_EQ(backend.count(), 1u);
}

TEST(StateBackendDefaults, WriteOfAnEmptyBatchChangesNothing) {
  SeedMapBackend backend;
  backend.put("a", "1");
  backend.write(WriteBatch{});
  EXPECT_EQ(backend.count(), 1u);
  EXPECT_EQ(backend.get("a"), "1");
}

TEST(StateBackendDefaults, WritePutsGoesThroughWriteAsOneBatchInOrder) {
  struct CountingBackend : SeedMapBackend {
    int writes = 0;
    void write(const WriteBatch& batch) override {
      ++writes;
      SeedMapBackend::write(batch);
    }
  };
  CountingBackend backend;
  const std::vector<StateBackend::PutView> puts{{"k", "first"}, {"j", "x"}, {"k", "second"}};
  backend.write_puts(puts);
  EXPECT_EQ(backend.writes, 1);
  EXPECT_EQ(backend.get("k"), "second");
  EXPECT_EQ(backend.count(), 2u);
}

TEST(StateBackendDefaults, WriteUnloggedGoesThroughWriteInOrderAndFlushChangesNothing) {
  SeedMapBackend backend;
  backend.put("gone", "x");
  const std::vector<StateBackend::UnloggedWrite> writes = {
      {"a", std::string_view("1")}, {"a", std::string_view("2")}, {"gone", std::nullopt}};
  backend.write_unlogged(writes);
  backend.flush();
  EXPECT_EQ(backend.get("a"), "2");
  EXPECT_FALSE(backend.contains("gone"));
  EXPECT_EQ(backend.count(), 1u);
}

TEST(StateBackendDefaults, LoadSortedAppliesEveryRunAndRefusesKeysOutOfOrderChangingNothing) {
  SeedMapBackend backend;
  backend.put("gone", "x");
  const std::vector<StateBackend::UnloggedWrite> data = {{"a", std::string_view("1")},
                                                         {"gone", std::nullopt}};
  const std::vector<StateBackend::UnloggedWrite> position = {{"p", std::string_view("9")}};
  const std::span<const StateBackend::UnloggedWrite> runs[] = {data, position};
  backend.load_sorted(runs);
  EXPECT_EQ(backend.get("a"), "1");
  EXPECT_EQ(backend.get("p"), "9");
  EXPECT_FALSE(backend.contains("gone"));

  const std::vector<StateBackend::UnloggedWrite> unsorted = {{"z", std::string_view("1")},
                                                             {"b", std::string_view("2")}};
  const std::span<const StateBackend::UnloggedWrite> bad[] = {unsorted};
  try {
    backend.load_sorted(bad);
    ADD_FAILURE() << "keys out of order were loaded";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("'b' (run 0, write 1)"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(backend.contains("z"));
  EXPECT_EQ(backend.count(), 2u);
}

TEST(StateBackendDefaults, ForEachVisitsThePrefixedPairsInAscendingOrder) {
  SeedMapBackend backend;
  backend.put("p:b", "2");
  backend.put("q:a", "3");
  backend.put("p:a", "1");
  std::vector<std::pair<std::string, std::string>> seen;
  backend.for_each("p:", [&](std::string_view key, std::string_view value) {
    seen.emplace_back(std::string(key), std::string(value));
  });
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::string>>{{"p:a", "1"}, {"p:b", "2"}}));
}

TEST(StateBackendDefaults, ScanReturnsThePrefixedPairsInAscendingOrder) {
  SeedMapBackend backend;
  backend.put("g:2", "two");
  backend.put("g:1", "one");
  backend.put("h:1", "other");
  backend.put("g", "bare");
  EXPECT_EQ(backend.scan("g:"), (Rows{{"g:1", "one"}, {"g:2", "two"}}));
  EXPECT_EQ(backend.scan(""), (Rows{{"g", "bare"}, {"g:1", "one"}, {"g:2", "two"}, {"h:1", "other"}}));
}

TEST(StateBackendDefaults, ScanSkipsKeysRemovedBetweenListingAndReading) {
  VanishingKeysBackend backend({"b"});
  backend.put("a", "1");
  backend.put("b", "2");
  backend.put("c", "3");
  EXPECT_EQ(backend.scan(""), (Rows{{"a", "1"}, {"c", "3"}}));
}

TEST(StateBackendDefaults, SnapshotIsACopyThatLaterWritesDoNotChange) {
  SeedMapBackend backend;
  backend.put("a", "1");
  backend.put("b:1", "2");
  backend.put("b:2", "3");
  const auto snapshot = backend.snapshot();
  backend.put("a", "changed");
  backend.remove("b:1");
  backend.put("c", "new");
  EXPECT_EQ(snapshot->get("a"), "1");
  EXPECT_EQ(snapshot->get("b:1"), "2");
  EXPECT_EQ(snapshot->get("c"), std::nullopt);
  EXPECT_EQ(snapshot->scan("b:"), (Rows{{"b:1", "2"}, {"b:2", "3"}}));
}

TEST(StateBackendDefaults, SnapshotOfASeedBackendRestoresIntoAMemoryBackend) {
  SeedMapBackend seed;
  seed.put("offset:orders:0", "42");
  seed.put("offset:orders:1", "7");
  MemoryStateBackend memory;
  memory.put("leftover", "x");
  memory.restore(*seed.snapshot());
  EXPECT_EQ(memory.scan(""), (Rows{{"offset:orders:0", "42"}, {"offset:orders:1", "7"}}));
}

}  // namespace
}  // namespace processor::state
