// The exactly-once crash proof: a consumer (kill_loop_worker) that counts records per key, with
// its counts and its positions checkpointed together into RocksDB (OffsetManager::checkpoint),
// is SIGKILLed over and over at random moments; afterwards the counts must equal what was
// produced — no record counted twice (duplicates), none missed (losses).
//
//   1. librdkafka's mock cluster (in this process, on loopback) gets a topic of 4 partitions and
//      kRecords records whose keys come from kKeys keys ("k0".."k49", skewed); each key lives on
//      one partition, like a keyed producer's. The expected result is the count per key.
//   2. One fresh RocksDB directory; then `cycles` times: start the worker (fork/exec), wait until
//      the group has handed it its partitions, let it consume a random 50–600 ms, SIGKILL it,
//      waitpid. One cycle in eight kills it instead 0–1500 ms after exec, while it is restoring
//      or joining the group. After every kill the directory is opened and checked: the counts
//      must equal exactly the records below the checkpointed positions (so a fault is pinned to
//      the cycle that made it).
//   3. The worker runs once more, not killed, until it has checkpointed every partition's end
//      and exits by itself.
//   4. The counts are compared with the expected ones: duplicates and losses must be 0, and the
//      checkpointed positions must sum to kRecords.
//
// Cycles: 50 by default; KILL_LOOP_CYCLES=<n> overrides. Run by hand, use 200 cycles (about 18
// minutes, past ctest's 900 s timeout, so run the binary itself):
//   KILL_LOOP_CYCLES=200 build/tests/robustness/kill_loop_tests
// KILL_LOOP_SEED=<n> replays a run's random choices (the seed is printed).
//
// Time: about 5 s per cycle, nearly all of it the mock coordinator's group join. A SIGKILLed
// member stays in the group until its session (session.timeout.ms = 3000) expires, checked once a
// second; the new member's join then waits another session.timeout.ms - 1000 for stragglers.
// 3000 is the lowest safe session timeout: the mock's first join into an empty group waits 3 s
// (its group.initial.rebalance.delay.ms) without refreshing the joining member's session, so a
// shorter session expires the joiner while it waits and the join never completes. 50 cycles take
// about 4.5 minutes.
//
// The worker sleeps a little per record ("processing") so that the stream lasts across the
// cycles: the pace is chosen so that the killed runs checkpoint most of the records and the
// final run the rest.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"

#ifndef KILL_LOOP_WORKER_PATH
#error "KILL_LOOP_WORKER_PATH must name the kill_loop_worker executable"
#endif

namespace processor::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kPartitions = 4;
constexpr int kRecords = 20'000;
constexpr int kKeys = 50;
constexpr int kCheckpointInterval = 200;  // records between checkpoints (K)
constexpr int kDefaultCycles = 50;        // KILL_LOOP_CYCLES overrides; 200 when run by hand
constexpr int kSessionTimeoutMs = 3000;   // of the worker's group membership
constexpr int kMinRunMs = 50;             // a cycle's consuming time before the SIGKILL
constexpr int kMaxRunMs = 600;
constexpr const char* kGroup = "kill-loop";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::stoi(value) : fallback;
}

// What was produced: the key of every record, by partition and offset.
struct Produced {
  std::vector<std::vector<std::string>> keys;    // [partition][offset]
  std::map<std::string, std::int64_t> expected;  // key -> records
};

// Produces kRecords records with skewed keys; key kI goes to partition I % kPartitions, in order
// (an idempotent producer: offsets are 0, 1, 2, ... per partition, in production order).
Produced produce(const std::string& bootstrap, std::mt19937_64& rng) {
  Produced produced;
  produced.keys.resize(kPartitions);
  Producer producer(bootstrap, {{"enable.idempotence", "true"}, {"log_level", "3"}});
  std::uniform_int_distribution<int> pick(0, kKeys - 1);
  for (int i = 0; i < kRecords; ++i) {
    const int key_index = std::min(pick(rng), pick(rng));  // skewed: k0 is the most frequent
    const std::string key = "k" + std::to_string(key_index);
    const std::string value = "v" + std::to_string(i);
    const int partition = key_index % kPartitions;
    producer.send("kill-loop", partition, key, value);
    produced.keys[static_cast<std::size_t>(partition)].push_back(key);
    ++produced.expected[key];
  }
  producer.flush();
  for (int p = 0; p < kPartitions; ++p) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(producer.handle(), "kill-loop", p, &low, &high, 10'000) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("cannot read the watermarks of partition " + std::to_string(p));
    }
    if (low != 0 || high != static_cast<std::int64_t>(produced.keys[static_cast<std::size_t>(p)].size())) {
      throw std::runtime_error(
          "partition " + std::to_string(p) + " holds [" + std::to_string(low) + ", " + std::to_string(high) +
          "), expected " + std::to_string(produced.keys[static_cast<std::size_t>(p)].size()) + " records");
    }
  }
  return produced;
}

// What a RocksDB directory holds: the latest checkpoint's positions and the counts.
struct Inspection {
  std::uint64_t checkpoint_id = 0;
  std::vector<std::int64_t> positions = std::vector<std::int64_t>(kPartitions, 0);
  std::int64_t position_sum = 0;
  std::map<std::string, std::int64_t> counts;
  std::map<std::string, std::int64_t> should_be;  // the records below the positions, per key
  std::int64_t duplicates = 0;                    // sum over keys of max(0, count - should_be)
  std::int64_t losses = 0;                        // sum over keys of max(0, should_be - count)
  std::string first_difference;
};

// Opens the directory (no worker may be running: one process per RocksDB) and compares its
// counts with `reference` — by default the records below the checkpointed positions.
Inspection inspect(const fs::path& dir, const Produced& produced,
                   const std::map<std::string, std::int64_t>* reference = nullptr) {
  Inspection result;
  auto backend = std::make_shared<state::RocksDbStateBackend>(dir);
  kafka::OffsetManager manager(kGroup, backend, std::make_shared<kafka::InMemoryOffsetStore>(),
                               kafka::OffsetCommitStrategy::on_checkpoint());
  if (const auto checkpoint = manager.restore_from_checkpoint()) {
    result.checkpoint_id = checkpoint->id;
    for (const auto& [tp, offset] : checkpoint->offsets) {
      if (tp.topic != "kill-loop" || tp.partition < 0 || tp.partition >= kPartitions) {
        throw std::runtime_error("checkpoint holds an unexpected partition " + tp.to_key());
      }
      result.positions[static_cast<std::size_t>(tp.partition)] = offset;
    }
  }
  for (const auto& [key, value] : backend->scan("count:")) result.counts[key.substr(6)] = std::stoll(value);
  for (int p = 0; p < kPartitions; ++p) {
    const auto& keys = produced.keys[static_cast<std::size_t>(p)];
    const std::int64_t position = result.positions[static_cast<std::size_t>(p)];
    result.position_sum += position;
    for (std::int64_t offset = 0;
         offset < std::min<std::int64_t>(position, static_cast<std::int64_t>(keys.size())); ++offset) {
      ++result.should_be[keys[static_cast<std::size_t>(offset)]];
    }
  }
  const auto& wanted = reference != nullptr ? *reference : result.should_be;
  std::map<std::string, std::int64_t> all_keys = wanted;
  for (const auto& [key, count] : result.counts) all_keys.emplace(key, 0);
  for (const auto& [key, unused] : all_keys) {
    const auto have_it = result.counts.find(key);
    const auto want_it = wanted.find(key);
    const std::int64_t have = have_it == result.counts.end() ? 0 : have_it->second;
    const std::int64_t want = want_it == wanted.end() ? 0 : want_it->second;
    result.duplicates += std::max<std::int64_t>(0, have - want);
    result.losses += std::max<std::int64_t>(0, want - have);
    if (have != want && result.first_difference.empty()) {
      result.first_difference =
          "key " + key + ": counted " + std::to_string(have) + ", expected " + std::to_string(want);
    }
  }
  return result;
}

std::string positions_text(const Inspection& inspection) {
  std::string text;
  for (const auto position : inspection.positions)
    text += (text.empty() ? "" : "/") + std::to_string(position);
  return text;
}

// ---------------------------------------------------------------- the worker process

struct Worker {
  pid_t pid = -1;
  int out = -1;  // read end of its stdout
  std::string partial;
  std::vector<std::string> lines;
  bool assigned = false;
  bool done = false;
  std::optional<int> status;  // wait status once reaped
};

// fork + exec. argv is built before fork(): the parent has threads (librdkafka, the mock
// cluster), so the child may only call async-signal-safe functions until exec.
// KILL_LOOP_WORKER=<path> runs another worker binary (e.g. a deliberately broken one, to see the
// test catch it).
Worker start_worker(const std::string& bootstrap, const fs::path& dir, std::int64_t record_delay_us) {
  const char* worker_override = std::getenv("KILL_LOOP_WORKER");
  std::vector<std::string> args = {
      worker_override != nullptr && *worker_override != '\0' ? worker_override : KILL_LOOP_WORKER_PATH,
      "--bootstrap",
      bootstrap,
      "--topic",
      "kill-loop",
      "--partitions",
      std::to_string(kPartitions),
      "--group",
      kGroup,
      "--dir",
      dir.string(),
      "--interval",
      std::to_string(kCheckpointInterval),
      "--record-delay-us",
      std::to_string(record_delay_us),
      "--session-timeout-ms",
      std::to_string(kSessionTimeoutMs)};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  Worker worker;
  worker.pid = pid;
  worker.out = fds[0];
  return worker;
}

// Reads what the worker printed within `timeout`. Returns false at the end of its output.
bool read_worker(Worker& worker, std::chrono::milliseconds timeout) {
  if (worker.out < 0) {
    std::this_thread::sleep_for(timeout);
    return false;
  }
  pollfd pfd{worker.out, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(0, timeout.count()))) <= 0) return true;
  char buffer[4096];
  const ssize_t n = ::read(worker.out, buffer, sizeof buffer);
  if (n <= 0) {
    ::close(worker.out);
    worker.out = -1;
    return false;
  }
  worker.partial.append(buffer, static_cast<std::size_t>(n));
  for (std::size_t end; (end = worker.partial.find('\n')) != std::string::npos;) {
    const std::string line = worker.partial.substr(0, end);
    worker.partial.erase(0, end + 1);
    if (line.rfind("assigned", 0) == 0) worker.assigned = true;
    if (line.rfind("done", 0) == 0) worker.done = true;
    worker.lines.push_back(line);
  }
  return true;
}

// Reads the worker's output until `until` holds, it closes its output, or `deadline` passes.
void read_until(Worker& worker, const std::function<bool()>& until, Clock::time_point deadline) {
  while (!until() && Clock::now() < deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (!read_worker(worker, std::min(left, std::chrono::milliseconds(20)))) break;
  }
}

void kill_and_reap(Worker& worker) {
  ::kill(worker.pid, SIGKILL);  // harmless when it already exited: it is a zombie until reaped
  int status = 0;
  ::waitpid(worker.pid, &status, 0);
  worker.status = status;
  if (worker.out >= 0) ::close(worker.out);
  worker.out = -1;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// ---------------------------------------------------------------- the test

TEST(KillLoop, ExactlyOnceAcrossRandomSigkills) {
  const auto started = Clock::now();
  const int cycles = env_int("KILL_LOOP_CYCLES", kDefaultCycles);
  const auto seed = static_cast<std::uint64_t>(
      env_int("KILL_LOOP_SEED", static_cast<int>(std::random_device{}() & 0x7fffffff)));
  std::printf(
      "kill loop: seed=%llu (replay with KILL_LOOP_SEED=%llu), cycles=%d (KILL_LOOP_CYCLES overrides; "
      "%d by default, 200 when run by hand)\n",
      static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed), cycles, kDefaultCycles);
  std::mt19937_64 rng(seed);

  MockCluster cluster;
  cluster.create_topic("kill-loop", kPartitions);
  const Produced produced = produce(cluster.bootstrap(), rng);
  std::printf("kill loop: produced %d records with %zu keys into %d partitions in %.1f s\n", kRecords,
              produced.expected.size(), kPartitions, seconds_since(started));

  // Pace the worker so that the killed runs move the checkpoints through most of the stream (the
  // estimate aims at 3/5; 50 and 200 cycles end at about 75-95%) and the final run does the rest.
  // A killed run consumes for about its mean run time minus ~100 ms (fetching starts after the
  // assignment), and loses the records since its last checkpoint (K/2 on average); 7 cycles in 8
  // are such runs.
  const std::int64_t net_per_run =
      static_cast<std::int64_t>(kRecords) * 3 / 5 * 8 / (7 * static_cast<std::int64_t>(std::max(cycles, 1)));
  const std::int64_t record_delay_us = std::clamp<std::int64_t>(
      ((kMinRunMs + kMaxRunMs) / 2 - 100) * 1000 / (net_per_run + kCheckpointInterval / 2), 20, 20'000);

  const fs::path dir = fs::temp_directory_path() / unique_name("processor-kill-loop");
  fs::remove_all(dir);
  std::printf("kill loop: RocksDB at %s, worker paced at %lld us per record, checkpoint every %d records\n",
              dir.c_str(), static_cast<long long>(record_delay_us), kCheckpointInterval);
  std::fflush(stdout);

  std::uniform_int_distribution<int> run_ms(kMinRunMs, kMaxRunMs);
  std::uniform_int_distribution<int> early_ms(0, 1500);
  std::uniform_int_distribution<int> one_in_eight(0, 7);
  int inconsistent_cycles = 0;
  int early_kills = 0;
  int exited_by_itself = 0;
  int join_timeouts = 0;
  std::vector<double> cycle_seconds;  // of the cycles that wait for the assignment
  std::vector<double> early_seconds;  // of the early-kill cycles
  std::vector<double> join_seconds;   // exec to assignment
  std::uint64_t last_checkpoint = 0;

  for (int cycle = 1; cycle <= cycles; ++cycle) {
    const auto cycle_start = Clock::now();
    Worker worker = start_worker(cluster.bootstrap(), dir, record_delay_us);
    std::string how;
    const bool early = one_in_eight(rng) == 0;
    if (early) {
      // Kill it while it restores, connects or joins the group.
      const int delay = early_ms(rng);
      read_until(
          worker, [] { return false; }, cycle_start + std::chrono::milliseconds(delay));
      how = "early kill " + std::to_string(delay) + " ms after exec";
      ++early_kills;
    } else {
      read_until(
          worker, [&] { return worker.assigned || worker.done; }, cycle_start + std::chrono::seconds(30));
      if (!worker.assigned && !worker.done && worker.out >= 0) {
        ++join_timeouts;
        ADD_FAILURE() << "cycle " << cycle << ": the worker got no partitions within 30 s";
      }
      const double join = seconds_since(cycle_start);
      join_seconds.push_back(join);
      const int delay = run_ms(rng);
      read_until(
          worker, [] { return false; }, Clock::now() + std::chrono::milliseconds(delay));
      char text[96];
      std::snprintf(text, sizeof text, "joined in %.2f s, killed after %d ms", join, delay);
      how = text;
    }
    const bool exited = worker.out < 0;  // its output closed: it exited (or crashed) by itself
    kill_and_reap(worker);
    if (exited) {
      ++exited_by_itself;
      how += " (it had exited by itself: " + describe_status(*worker.status) + ")";
      if (!worker.done)
        ADD_FAILURE() << "cycle " << cycle
                      << ": the worker died on its own: " << describe_status(*worker.status);
    }
    const Inspection state = inspect(dir, produced);
    if (state.checkpoint_id < last_checkpoint) {
      ADD_FAILURE() << "cycle " << cycle << ": the checkpoint id went back from " << last_checkpoint << " to "
                    << state.checkpoint_id;
    }
    last_checkpoint = state.checkpoint_id;
    const bool consistent = state.duplicates == 0 && state.losses == 0;
    if (!consistent) {
      ++inconsistent_cycles;
      ADD_FAILURE() << "cycle " << cycle << ": counts disagree with checkpoint " << state.checkpoint_id
                    << " (positions " << positions_text(state) << "): " << state.duplicates << " duplicates, "
                    << state.losses << " losses; first: " << state.first_difference;
    }
    const double took = seconds_since(cycle_start);
    (early ? early_seconds : cycle_seconds).push_back(took);
    std::printf("kill loop: cycle %3d: %s; checkpoint %llu at %lld/%d records (%s), %s, %.2f s\n", cycle,
                how.c_str(), static_cast<unsigned long long>(state.checkpoint_id),
                static_cast<long long>(state.position_sum), kRecords, positions_text(state).c_str(),
                consistent ? "consistent" : "INCONSISTENT", took);
    std::fflush(stdout);
  }

  // The last run: not killed; it exits once every partition's end is checkpointed.
  const auto final_start = Clock::now();
  Worker last = start_worker(cluster.bootstrap(), dir, record_delay_us);
  read_until(
      last, [] { return false; }, final_start + std::chrono::seconds(240));
  const bool finished = last.out < 0;
  if (!finished) ::kill(last.pid, SIGKILL);
  int status = 0;
  ::waitpid(last.pid, &status, 0);
  const double final_seconds = seconds_since(final_start);
  EXPECT_TRUE(finished) << "the final worker did not finish within 240 s";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the final worker ended with " << describe_status(status);
  EXPECT_TRUE(last.done) << "the final worker did not report done";

  const Inspection final_state = inspect(dir, produced, &produced.expected);
  auto mean = [](const std::vector<double>& values) {
    return values.empty()
               ? 0.0
               : std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  };
  const double max_cycle =
      cycle_seconds.empty() ? 0 : *std::max_element(cycle_seconds.begin(), cycle_seconds.end());
  std::printf("kill loop: final run %s in %.1f s at checkpoint %llu, positions %s\n",
              describe_status(status).c_str(), final_seconds,
              static_cast<unsigned long long>(final_state.checkpoint_id),
              positions_text(final_state).c_str());
  std::printf(
      "kill loop: cycle time mean %.2f s (exec to assignment %.2f s), max %.2f s; %d early kills (mean %.2f "
      "s); "
      "%d runs had exited by themselves; %d inconsistent cycles; total %.1f s\n",
      mean(cycle_seconds), mean(join_seconds), max_cycle, early_kills, mean(early_seconds), exited_by_itself,
      inconsistent_cycles, seconds_since(started));
  std::printf("kill loop: cycles=%d, records=%d, keys=%zu, duplicates=%lld, losses=%lld\n", cycles, kRecords,
              produced.expected.size(), static_cast<long long>(final_state.duplicates),
              static_cast<long long>(final_state.losses));
  std::fflush(stdout);

  EXPECT_EQ(final_state.duplicates, 0) << final_state.first_difference;
  EXPECT_EQ(final_state.losses, 0) << final_state.first_difference;
  EXPECT_EQ(final_state.position_sum, kRecords) << "checkpointed positions " << positions_text(final_state);
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(final_state.positions[static_cast<std::size_t>(p)],
              static_cast<std::int64_t>(produced.keys[static_cast<std::size_t>(p)].size()))
        << "partition " << p;
  }
  EXPECT_EQ(inconsistent_cycles, 0);
  EXPECT_EQ(join_timeouts, 0);

  if (!::testing::Test::HasFailure()) {
    fs::remove_all(dir);
  } else {
    std::printf("kill loop: the RocksDB is left at %s for inspection\n", dir.c_str());
  }
}

}  // namespace
}  // namespace processor::testing
