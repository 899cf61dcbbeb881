// Real-broker faults, case 3: the broker is SIGKILLed and restarted (twice) under a checkpointing
// consumer: kill_loop_worker (see kill_loop_worker.cpp), which counts records per key and
// checkpoints its counts and positions together into RocksDB, resuming from the checkpoint
// whatever the broker says. Here the worker is left alive and the broker dies instead.
//
// What a user can observe, and what must hold: the worker ends by itself once it has
// checkpointed every partition's end, and the per-key counts in its RocksDB equal exactly what
// was produced (no record counted twice, none missed). Should the worker exit with an error
// during an outage, the test restarts it, as a supervisor would, checks that its directory is
// consistent (counts = the records below the checkpointed positions) and counts the restart.
//
// Kafka acknowledges before fsync: a SIGKILL of the process leaves its writes in the page cache
// (see broker_kill_commit_test.cpp).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kafka_test_support.hpp"
#include "owned_broker.hpp"
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
constexpr int kRecords = 3000;
constexpr int kKeys = 40;
constexpr int kKills = 2;
constexpr int kCheckpointInterval = 100;                          // records between checkpoints
constexpr int kRecordDelayUs = 3000;                              // the worker's "processing": 9 s in all
constexpr auto kRunBeforeKill = std::chrono::milliseconds(1500);  // after assignment or restart
constexpr auto kDownTime = std::chrono::seconds(1);
constexpr auto kDeadline = std::chrono::seconds(150);
constexpr const char* kTopic = "counted";
constexpr const char* kGroup = "counter";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Produced {
  std::vector<std::vector<std::string>> keys =
      std::vector<std::vector<std::string>>(kPartitions);  // [p][offset]
  std::map<std::string, std::int64_t> expected;            // key -> records
};

// kRecords records with keys k0..k39 (key kI on partition I % kPartitions), acknowledged.
Produced produce(const std::string& bootstrap) {
  Produced produced;
  Producer producer(bootstrap, {{"enable.idempotence", "true"}, {"log_level", "3"}});
  for (int i = 0; i < kRecords; ++i) {
    const int key_index = (i * 7 + i / 13) % kKeys;
    const std::string key = "k" + std::to_string(key_index);
    const std::string value = "v" + std::to_string(i);
    const int partition = key_index % kPartitions;
    producer.send(kTopic, partition, key, value);
    produced.keys[static_cast<std::size_t>(partition)].push_back(key);
    ++produced.expected[key];
  }
  producer.flush();
  return produced;
}

// The worker's RocksDB, compared with the records below its checkpointed positions (or, with
// `reference`, with those counts).
struct Inspection {
  std::vector<std::int64_t> positions = std::vector<std::int64_t>(kPartitions, 0);
  std::int64_t duplicates = 0;
  std::int64_t losses = 0;
  std::string first_difference;
};

Inspection inspect(const fs::path& dir, const Produced& produced,
                   const std::map<std::string, std::int64_t>* reference = nullptr) {
  Inspection result;
  auto backend = std::make_shared<state::RocksDbStateBackend>(dir);
  kafka::OffsetManager manager(kGroup, backend, std::make_shared<kafka::InMemoryOffsetStore>(),
                               kafka::OffsetCommitStrategy::on_checkpoint());
  std::map<std::string, std::int64_t> below;  // the records below the positions, per key
  if (const auto checkpoint = manager.restore_from_checkpoint()) {
    for (const auto& [tp, offset] : checkpoint->offsets)
      result.positions.at(static_cast<std::size_t>(tp.partition)) = offset;
  }
  for (int p = 0; p < kPartitions; ++p) {
    const auto& keys = produced.keys[static_cast<std::size_t>(p)];
    const auto end = std::min<std::int64_t>(result.positions[static_cast<std::size_t>(p)],
                                            static_cast<std::int64_t>(keys.size()));
    for (std::int64_t offset = 0; offset < end; ++offset) ++below[keys[static_cast<std::size_t>(offset)]];
  }
  std::map<std::string, std::int64_t> counts;
  for (const auto& [key, value] : backend->scan("count:")) counts[key.substr(6)] = std::stoll(value);
  const auto& wanted = reference != nullptr ? *reference : below;
  std::map<std::string, std::int64_t> keys = wanted;
  for (const auto& [key, count] : counts) keys.emplace(key, 0);
  for (const auto& [key, unused] : keys) {
    const std::int64_t have = counts.count(key) ? counts[key] : 0;
    const std::int64_t want = wanted.count(key) ? wanted.at(key) : 0;
    result.duplicates += std::max<std::int64_t>(0, have - want);
    result.losses += std::max<std::int64_t>(0, want - have);
    if (have != want && result.first_difference.empty()) {
      result.first_difference =
          "key " + key + ": counted " + std::to_string(have) + ", expected " + std::to_string(want);
    }
  }
  return result;
}

// The worker process: its stdout is read line by line; its stderr is the test's.
struct Worker {
  pid_t pid = -1;
  int out = -1;
  std::string partial;
  bool assigned = false;
  bool done = false;
  bool reaped = false;
};

Worker start_worker(const std::string& bootstrap, const fs::path& dir) {
  std::vector<std::string> args = {KILL_LOOP_WORKER_PATH,
                                   "--bootstrap",
                                   bootstrap,
                                   "--topic",
                                   kTopic,
                                   "--partitions",
                                   std::to_string(kPartitions),
                                   "--group",
                                   kGroup,
                                   "--dir",
                                   dir.string(),
                                   "--interval",
                                   std::to_string(kCheckpointInterval),
                                   "--record-delay-us",
                                   std::to_string(kRecordDelayUs),
                                   "--session-timeout-ms",
                                   "6000"};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {  // only async-signal-safe calls until exec: the parent has threads
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

// Reads what the worker printed within `timeout`; false once its output is closed (it exited).
bool read_worker(Worker& worker, std::chrono::milliseconds timeout) {
  if (worker.out < 0) return false;
  pollfd pfd{worker.out, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return true;
  char buffer[1024];
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
  }
  return true;
}

int reap(Worker& worker) {
  ::kill(worker.pid, SIGKILL);  // harmless once it exited
  int status = 0;
  ::waitpid(worker.pid, &status, 0);
  worker.reaped = true;
  if (worker.out >= 0) ::close(worker.out);
  worker.out = -1;
  return status;
}

TEST(BrokerKill, CheckpointedCountsStayExactAcrossBrokerKills) {
  const std::string script = broker_script();
  if (script.empty())
    GTEST_SKIP() << "KAFKA_BROKER_SCRIPT is not set: this test starts (and kills) a broker of its own "
                    "with scripts/kafka/broker.sh";
  const auto started = Clock::now();
  OwnedBroker broker(script, fs::temp_directory_path() / unique_name("processor-broker-kill-checkpoints"));
  create_topic(broker.bootstrap(), kTopic, kPartitions);
  const Produced produced = produce(broker.bootstrap());
  const fs::path dir = fs::temp_directory_path() / unique_name("processor-broker-kill-rocksdb");
  fs::remove_all(dir);
  std::printf("broker kill (checkpoints): broker %s up and %d records with %zu keys produced in %.1f s\n",
              broker.bootstrap().c_str(), kRecords, produced.expected.size(), seconds_since(started));

  int kills = 0;
  int kills_after_done = 0;
  int worker_runs = 1;
  std::vector<std::string> worker_failures;  // exits other than "done" and 0
  std::vector<double> restart_seconds;
  int inconsistent = 0;
  std::string first_inconsistency;
  bool finished = false;
  std::optional<Clock::time_point> next_kill;
  Worker worker = start_worker(broker.bootstrap(), dir);
  const auto deadline = Clock::now() + kDeadline;
  while (Clock::now() < deadline) {
    const bool running = read_worker(worker, std::chrono::milliseconds(20));
    if (worker.assigned && kills == 0 && !next_kill) next_kill = Clock::now() + kRunBeforeKill;
    if (next_kill && Clock::now() >= *next_kill && kills < kKills) {
      if (worker.done || !running) ++kills_after_done;
      broker.kill();
      ++kills;
      std::this_thread::sleep_for(kDownTime);
      restart_seconds.push_back(broker.restart());
      next_kill = kills < kKills ? std::optional(Clock::now() + kRunBeforeKill) : std::nullopt;
    }
    if (running) continue;
    const int status = reap(worker);
    const bool ok = worker.done && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    const Inspection state = inspect(dir, produced);
    if (state.duplicates != 0 || state.losses != 0) {
      ++inconsistent;
      if (first_inconsistency.empty()) first_inconsistency = state.first_difference;
    }
    if (ok) {
      finished = kills == kKills;  // else it was done before the kills: they hit no consumer
      break;
    }
    // A supervisor starts it again.
    worker_failures.push_back("exit status " + std::to_string(status));
    ++worker_runs;
    worker = start_worker(broker.bootstrap(), dir);
  }
  if (!worker.reaped) reap(worker);

  const Inspection final_state = inspect(dir, produced, &produced.expected);
  std::int64_t position_sum = 0;
  std::string positions;
  for (const auto position : final_state.positions) {
    position_sum += position;
    positions += (positions.empty() ? "" : "/") + std::to_string(position);
  }
  for (std::size_t i = 0; i < restart_seconds.size(); ++i) {
    std::printf("broker kill (checkpoints): kill %zu; broker back in %.1f s\n", i + 1, restart_seconds[i]);
  }
  for (const auto& failure : worker_failures)
    std::printf("broker kill (checkpoints): worker failed: %s\n", failure.c_str());
  std::printf(
      "broker kill (checkpoints): %d records, %zu keys; %d kills (%d after the worker was done); %d worker "
      "runs; "
      "checkpointed positions %s; duplicates %lld, losses %lld; %d inconsistent directories; total %.1f s\n",
      kRecords, produced.expected.size(), kills, kills_after_done, worker_runs, positions.c_str(),
      static_cast<long long>(final_state.duplicates), static_cast<long long>(final_state.losses),
      inconsistent, seconds_since(started));
  std::fflush(stdout);

  EXPECT_EQ(kills, kKills);
  EXPECT_EQ(kills_after_done, 0) << "a kill came after the worker had finished: slow the worker down";
  EXPECT_TRUE(finished) << "the worker did not finish within " << kDeadline.count() << " s";
  EXPECT_EQ(final_state.duplicates, 0) << final_state.first_difference;
  EXPECT_EQ(final_state.losses, 0) << final_state.first_difference;
  EXPECT_EQ(position_sum, kRecords) << "checkpointed positions " << positions;
  EXPECT_EQ(inconsistent, 0) << first_inconsistency;
  if (::testing::Test::HasFailure()) {
    broker.keep_directory();
    std::printf("broker kill (checkpoints): RocksDB left at %s, broker at %s\n", dir.c_str(),
                broker.dir().c_str());
  } else {
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace processor::testing
