// Commits and checkpoints of 100k partitions, each with its anchor in this binary and run:
//   4. commit() of 100k pending offsets to InMemoryOffsetStore and to StateBackendOffsetStore over
//      RocksDbStateBackend; the anchor (the floor) is RocksDbStateBackend::write() of a WriteBatch
//      holding the same 100k keys and values;
//   5. checkpoint(id) and restore_from_checkpoint() of 100k partitions in RocksDB; anchors: the
//      raw write of a record of the checkpoint's size, and the raw read of the checkpoint record.
//
// Every measure uses manual time: only the call itself is timed, not the updates that make the
// offsets pending again before each commit or checkpoint.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"

namespace {

using namespace processor;
using namespace processor::kafka;

constexpr int kTopics = 100;
constexpr int kPartitionsPerTopic = 1'000;
constexpr std::size_t kPartitions = std::size_t{kTopics} * kPartitionsPerTopic;  // 100k

std::string topic_name(int t) {
  char name[32];
  std::snprintf(name, sizeof name, "bench-topic-%03d", t);
  return name;
}

std::vector<PartitionHandle> register_all(OffsetManager& manager) {
  std::vector<PartitionHandle> handles;
  handles.reserve(kPartitions);
  for (int t = 0; t < kTopics; ++t) {
    const std::string topic = topic_name(t);
    for (int p = 0; p < kPartitionsPerTopic; ++p) handles.push_back(manager.partition(topic, p));
  }
  return handles;
}

double elapsed(bench::Clock::time_point start, bench::Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

// ---- 4. commit() ----

struct CommitEnv {
  CommitEnv(std::shared_ptr<OffsetStore> offset_store, std::shared_ptr<state::StateBackend> state_backend)
      : backend(std::move(state_backend)),
        store(std::move(offset_store)),
        manager("bench-commit", backend, store, OffsetCommitStrategy::manual()),
        handles(register_all(manager)) {}

  // Makes every partition pending again (untimed).
  void update_all() {
    ++round;
    for (PartitionHandle& handle : handles) handle.update(round * 1'000);
  }

  std::shared_ptr<state::StateBackend> backend;
  std::shared_ptr<OffsetStore> store;
  OffsetManager manager;
  std::vector<PartitionHandle> handles;
  std::int64_t round = 0;
};

CommitEnv& in_memory_env() {
  static CommitEnv env(std::make_shared<InMemoryOffsetStore>(), nullptr);
  return env;
}

struct RocksDbCommitEnv {
  RocksDbCommitEnv()
      : dir("commit"),
        backend(std::make_shared<state::RocksDbStateBackend>(dir.path() / "db")),
        offset_store(std::make_shared<StateBackendOffsetStore>(backend)),
        env(offset_store, backend) {
    // One commit, so that the anchor's batch holds exactly what a commit writes, in the order
    // it writes it: key order (StateBackendOffsetStore sorts a commit by key, since the memtable
    // inserts sorted keys several times faster than keys in registration order).
    env.update_all();
    env.manager.commit();
    for (const auto& [key, value] : backend->scan("kafka_offset:bench-commit:")) anchor_batch.put(key, value);
    if (anchor_batch.size() != kPartitions) throw std::runtime_error("anchor batch has the wrong size");
  }
  bench::TempDir dir;
  std::shared_ptr<state::RocksDbStateBackend> backend;
  std::shared_ptr<StateBackendOffsetStore> offset_store;
  CommitEnv env;
  state::WriteBatch anchor_batch;
};

std::unique_ptr<RocksDbCommitEnv> g_rocksdb_commit;
RocksDbCommitEnv& rocksdb_commit_env() {
  if (!g_rocksdb_commit) g_rocksdb_commit = std::make_unique<RocksDbCommitEnv>();
  return *g_rocksdb_commit;
}

void run_commits(benchmark::State& state, CommitEnv& env) {
  for (auto _ : state) {
    env.update_all();
    const auto start = bench::Clock::now();
    const std::size_t written = env.manager.commit();
    state.SetIterationTime(elapsed(start, bench::Clock::now()));
    if (written != kPartitions) {
      state.SkipWithError("commit() wrote the wrong number of partitions");
      return;
    }
  }
}

void BM_Commit100k_InMemory(benchmark::State& state) { run_commits(state, in_memory_env()); }
BENCHMARK(BM_Commit100k_InMemory)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_Commit100k_RocksDb(benchmark::State& state) { run_commits(state, rocksdb_commit_env().env); }
BENCHMARK(BM_Commit100k_RocksDb)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_Anchor_RocksDbWriteBatch100k(benchmark::State& state) {
  RocksDbCommitEnv& env = rocksdb_commit_env();
  for (auto _ : state) {
    const auto start = bench::Clock::now();
    env.backend->write(env.anchor_batch);
    state.SetIterationTime(elapsed(start, bench::Clock::now()));
  }
}
BENCHMARK(BM_Anchor_RocksDbWriteBatch100k)->UseManualTime()->Unit(benchmark::kMillisecond);

// ---- 5. checkpoint() and restore_from_checkpoint() ----

constexpr const char* kCheckpointGroup = "bench-checkpoint";

struct CheckpointEnv {
  CheckpointEnv()
      : dir("checkpoint"),
        backend(std::make_shared<state::RocksDbStateBackend>(dir.path() / "db")),
        store(std::make_shared<StateBackendOffsetStore>(backend)),
        manager(kCheckpointGroup, backend, store, OffsetCommitStrategy::on_checkpoint()),
        handles(register_all(manager)) {
    // As after a few checkpoint cycles: the retained checkpoints exist, the store holds the last.
    for (int i = 0; i < 3; ++i) cycle();
  }

  void update_all() {
    ++round;
    for (PartitionHandle& handle : handles) handle.update(round * 1'000);
  }
  // A whole untimed cycle: updates, checkpoint, completion.
  void cycle() {
    update_all();
    manager.checkpoint(++id);
    manager.notify_checkpoint_complete(id);
  }
  std::string latest_record() {
    const auto keys = backend->list_keys(std::string("checkpoint:") + kCheckpointGroup + ":");
    if (keys.empty()) throw std::runtime_error("no checkpoint record");
    return keys.back();
  }

  bench::TempDir dir;
  std::shared_ptr<state::RocksDbStateBackend> backend;
  std::shared_ptr<StateBackendOffsetStore> store;
  OffsetManager manager;
  std::vector<PartitionHandle> handles;
  std::int64_t round = 0;
  std::uint64_t id = 0;
};

std::unique_ptr<CheckpointEnv> g_checkpoint;
CheckpointEnv& checkpoint_env() {
  if (!g_checkpoint) g_checkpoint = std::make_unique<CheckpointEnv>();
  return *g_checkpoint;
}

void BM_Checkpoint100k_RocksDb(benchmark::State& state) {
  CheckpointEnv& env = checkpoint_env();
  double complete_seconds = 0;
  for (auto _ : state) {
    env.update_all();
    const auto start = bench::Clock::now();
    const CheckpointInfo info = env.manager.checkpoint(++env.id);
    const auto end = bench::Clock::now();
    state.SetIterationTime(elapsed(start, end));
    // Untimed here, reported as a counter: commits the checkpoint's 100k offsets to the store.
    env.manager.notify_checkpoint_complete(env.id);
    complete_seconds += elapsed(end, bench::Clock::now());
    if (info.offsets.size() != kPartitions) {
      state.SkipWithError("checkpoint() holds the wrong number of partitions");
      return;
    }
  }
  state.counters["complete_ms"] = complete_seconds * 1e3 / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Checkpoint100k_RocksDb)->UseManualTime()->Unit(benchmark::kMillisecond);

// Anchor: one raw write of a record the size of the checkpoint's (the floor of its I/O).
void BM_Anchor_RocksDbWriteCheckpointRecord(benchmark::State& state) {
  CheckpointEnv& env = checkpoint_env();
  const auto record = env.backend->get(env.latest_record());
  state::WriteBatch batch;
  batch.put("bench-anchor:checkpoint-record", *record);
  for (auto _ : state) {
    const auto start = bench::Clock::now();
    env.backend->write(batch);
    state.SetIterationTime(elapsed(start, bench::Clock::now()));
  }
  state.counters["record_bytes"] = static_cast<double>(record->size());
}
BENCHMARK(BM_Anchor_RocksDbWriteCheckpointRecord)->UseManualTime()->Unit(benchmark::kMillisecond);

// A restart: a fresh manager on the same RocksDB restores the latest checkpoint (untimed: the
// manager's construction and destruction).
void BM_Restore100k_RocksDb(benchmark::State& state) {
  CheckpointEnv& env = checkpoint_env();
  for (auto _ : state) {
    auto restored = std::make_unique<OffsetManager>(kCheckpointGroup, env.backend, env.store,
                                                    OffsetCommitStrategy::on_checkpoint());
    const auto start = bench::Clock::now();
    const auto checkpoint = restored->restore_from_checkpoint();
    state.SetIterationTime(elapsed(start, bench::Clock::now()));
    if (!checkpoint || checkpoint->offsets.size() != kPartitions) {
      state.SkipWithError("restore_from_checkpoint() restored the wrong number of partitions");
      return;
    }
    restored.reset();
  }
}
BENCHMARK(BM_Restore100k_RocksDb)->UseManualTime()->Unit(benchmark::kMillisecond);

// Anchor: the raw read of the checkpoint record (the floor of a restore's I/O).
void BM_Anchor_RocksDbReadCheckpointRecord(benchmark::State& state) {
  CheckpointEnv& env = checkpoint_env();
  const std::string key = env.latest_record();
  std::size_t bytes = 0;
  for (auto _ : state) {
    const auto start = bench::Clock::now();
    const auto record = env.backend->get(key);
    state.SetIterationTime(elapsed(start, bench::Clock::now()));
    bytes = record ? record->size() : 0;
  }
  if (bytes == 0) state.SkipWithError("checkpoint record missing");
}
BENCHMARK(BM_Anchor_RocksDbReadCheckpointRecord)->UseManualTime()->Unit(benchmark::kMillisecond);

// ---- Summary ----

void summarize(const bench::CollectingReporter& r, bench::Summary& s) {
  using bench::fmt;
  auto ms = [](double seconds) { return fmt(seconds * 1e3) + " ms"; };

  if (const auto in_memory = r.real("BM_Commit100k_InMemory")) {
    s.add(bench::Result{"commit() 100k partitions -> InMemoryOffsetStore", ms(*in_memory)});
  } else {
    s.missing("commit() 100k partitions -> InMemoryOffsetStore");
  }

  const auto rocksdb = r.real("BM_Commit100k_RocksDb");
  const auto write_floor = r.real("BM_Anchor_RocksDbWriteBatch100k");
  if (rocksdb) {
    bench::Result result{"commit() 100k partitions -> RocksDB (StateBackendOffsetStore)", ms(*rocksdb)};
    if (write_floor) {
      result.anchor = ms(*write_floor) + " (raw WriteBatch)";
      result.ratio = "ours/floor " + fmt(*rocksdb / *write_floor) + "x";
    }
    result.target = "<=50 ms";
    result.met = bench::met(*rocksdb * 1e3 <= 50.0);
    s.add(result);
  } else {
    s.missing("commit() 100k partitions -> RocksDB (StateBackendOffsetStore)");
  }

  if (const auto checkpoint = r.real("BM_Checkpoint100k_RocksDb")) {
    bench::Result result{"checkpoint(id) 100k partitions, RocksDB", ms(*checkpoint)};
    if (const auto floor = r.real("BM_Anchor_RocksDbWriteCheckpointRecord")) {
      result.anchor = ms(*floor) + " (raw write of the record)";
      result.ratio = "ours/floor " + fmt(*checkpoint / *floor) + "x";
    }
    s.add(result);
    if (const auto complete = r.counter("BM_Checkpoint100k_RocksDb", "complete_ms")) {
      bench::Result completion{"notify_checkpoint_complete 100k -> RocksDB store", fmt(*complete) + " ms"};
      if (write_floor) {
        completion.anchor = ms(*write_floor) + " (raw WriteBatch)";
        completion.ratio = "ours/floor " + fmt(*complete / 1e3 / *write_floor) + "x";
      }
      s.add(completion);
    }
  } else {
    s.missing("checkpoint(id) 100k partitions, RocksDB");
  }

  if (const auto restore = r.real("BM_Restore100k_RocksDb")) {
    bench::Result result{"restore_from_checkpoint() 100k partitions, RocksDB", ms(*restore)};
    if (const auto floor = r.real("BM_Anchor_RocksDbReadCheckpointRecord")) {
      result.anchor = ms(*floor) + " (raw read of the record)";
      result.ratio = "ours/floor " + fmt(*restore / *floor) + "x";
    }
    result.target = "<=50 ms";
    result.met = bench::met(*restore * 1e3 <= 50.0);
    s.add(result);
  } else {
    s.missing("restore_from_checkpoint() 100k partitions, RocksDB");
  }
  s.note(
      "100k partitions = 100 topics x 1000 partitions; RocksDB in a temporary directory, sync_writes=false "
      "(WAL "
      "in the page cache), as RocksDbOptions defaults.");
}

}  // namespace

int main(int argc, char** argv) {
  const int code = bench::run_main(argc, argv, "bench_commit", summarize);
  g_checkpoint.reset();
  g_rocksdb_commit.reset();
  return code;
}
