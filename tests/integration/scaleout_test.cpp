// The scale-out acceptance test on the real broker (KAFKA_BOOTSTRAP): three consumer processes
// (scaleout_worker) in one group share a 12-partition topic, and one of them is killed with
// SIGKILL mid-way. Every record must be processed, no partition's committed offset may ever move
// backwards, and no member may commit an offset for a partition it no longer owns.
//
// The run: 12 x 300 records are produced, three workers start, and a monitor in this process
// reads the group's committed offsets every 100 ms (OffsetFetch through an outside client) and
// records any decrease. Once the workers' R lines cover a third of the records, the worker that
// handled the most is SIGKILLed; its partitions move to the survivors after the session timeout
// (6 s). When every record has been handled and every partition's committed offset has reached
// the log end (so the takeover has happened), the survivors get SIGTERM and must exit 0.
// Duplicates are allowed (at-least-once: the killed worker's uncommitted records are redone).
//
// Knobs for a manual look: SCALEOUT_KEEP_LOGS=1 keeps the worker logs (the path is printed);
// SCALEOUT_ASSIGNMENT=range runs the eager protocol instead of cooperative-sticky.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"

#ifndef SCALEOUT_WORKER_PATH
#error "SCALEOUT_WORKER_PATH must name the scaleout_worker executable"
#endif

namespace processor::kafka {
namespace {

using Clock = std::chrono::steady_clock;
using testing::Producer;
using testing::unique_name;

constexpr int kPartitions = 12;
constexpr int kRecordsPerPartition = 300;
constexpr int kWorkers = 3;
constexpr auto kRunDeadline = std::chrono::seconds(120);
constexpr auto kShutdownDeadline = std::chrono::seconds(30);
constexpr auto kMonitorInterval = std::chrono::milliseconds(100);

template <class T, void (*Destroy)(T*)>
struct RdDeleter {
  void operator()(T* p) const { Destroy(p); }
};
using EventPtr = std::unique_ptr<rd_kafka_event_t, RdDeleter<rd_kafka_event_t, rd_kafka_event_destroy>>;
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, RdDeleter<rd_kafka_queue_t, rd_kafka_queue_destroy>>;
using AdminOptionsPtr = std::unique_ptr<rd_kafka_AdminOptions_t,
                                        RdDeleter<rd_kafka_AdminOptions_t, rd_kafka_AdminOptions_destroy>>;
using NewTopicPtr =
    std::unique_ptr<rd_kafka_NewTopic_t, RdDeleter<rd_kafka_NewTopic_t, rd_kafka_NewTopic_destroy>>;

// Creates `topic` with `partitions` partitions (replication factor 1) through the admin API,
// then waits until the metadata shows a leader for every partition.
void create_topic(const std::string& bootstrap, const std::string& topic, int partitions) {
  Producer producer(bootstrap);
  rd_kafka_t* rk = producer.handle();
  char error[512];
  NewTopicPtr new_topic(rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, error, sizeof error));
  if (!new_topic) throw std::runtime_error(std::string("NewTopic: ") + error);
  AdminOptionsPtr options(rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS));
  rd_kafka_AdminOptions_set_operation_timeout(options.get(), 20'000, error, sizeof error);
  QueuePtr queue(rd_kafka_queue_new(rk));
  rd_kafka_NewTopic_t* topics[] = {new_topic.get()};
  rd_kafka_CreateTopics(rk, topics, 1, options.get(), queue.get());
  EventPtr event(rd_kafka_queue_poll(queue.get(), 30'000));
  if (!event) throw std::runtime_error("CreateTopics: no result within 30 s");
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error(std::string("CreateTopics: ") + rd_kafka_event_error_string(event.get()));
  }
  std::size_t count = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &count);
  for (std::size_t i = 0; i < count; ++i) {
    if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("CreateTopics " + topic + ": " +
                               rd_kafka_topic_result_error_string(results[i]));
    }
  }

  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    const rd_kafka_metadata_t* metadata = nullptr;
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
    const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &metadata, 5'000);
    rd_kafka_topic_destroy(rkt);
    bool ready = false;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && metadata->topic_cnt == 1 &&
        metadata->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
        metadata->topics[0].partition_cnt == partitions) {
      ready = std::all_of(metadata->topics[0].partitions, metadata->topics[0].partitions + partitions,
                          [](const rd_kafka_metadata_partition_t& p) {
                            return p.err == RD_KAFKA_RESP_ERR_NO_ERROR && p.leader >= 0;
                          });
    }
    if (metadata != nullptr) rd_kafka_metadata_destroy(metadata);
    if (ready) return;
    if (Clock::now() > deadline) throw std::runtime_error("topic " + topic + " has no leaders after 30 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// One line of a worker's log (see scaleout_worker.cpp).
struct LogLine {
  char kind = 0;
  std::vector<std::int64_t> numbers;
};

std::vector<LogLine> parse_lines(const std::string& text, std::size_t* consumed) {
  std::vector<LogLine> lines;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // a partial last line: read it next time
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    LogLine parsed;
    parsed.kind = line[0];
    if (parsed.kind != 'E') {
      std::istringstream in(line.substr(1));
      std::int64_t number = 0;
      while (in >> number) parsed.numbers.push_back(number);
    }
    lines.push_back(std::move(parsed));
  }
  *consumed = start;
  return lines;
}

std::string read_from(const std::string& path, std::size_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string read_file(const std::string& path) { return read_from(path, 0); }

struct Worker {
  int index = 0;
  pid_t pid = -1;  // -1 once reaped
  std::string log_path;
  std::string stderr_path;
  std::size_t log_read = 0;  // bytes of the log already parsed
  std::size_t records = 0;   // R lines seen
  bool killed = false;
  int status = 0;  // waitpid status once reaped
};

// Kills (SIGKILL) and reaps every worker still running: on any early exit from the test.
struct ChildGuard {
  std::vector<Worker>& workers;
  ~ChildGuard() {
    for (auto& worker : workers) {
      if (worker.pid <= 0) continue;
      ::kill(worker.pid, SIGKILL);
      ::waitpid(worker.pid, nullptr, 0);
      worker.pid = -1;
    }
  }
};

// Removes the workers' logs, unless SCALEOUT_KEEP_LOGS is set (for a look after a run).
struct TempDirGuard {
  std::filesystem::path path;
  ~TempDirGuard() {
    if (path.empty()) return;
    if (std::getenv("SCALEOUT_KEEP_LOGS") != nullptr) {
      std::cout << "[scaleout] logs kept in " << path.string() << "\n";
      return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

pid_t spawn_worker(const std::vector<std::string>& args, const std::string& stderr_path) {
  // Everything the child needs is prepared before fork(): it only makes async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
  if (::getppid() != parent) ::_exit(127);
  const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err >= 0) {
    ::dup2(err, STDERR_FILENO);
    ::close(err);
  }
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

// Waits up to `timeout` for `worker` to exit; true when it was reaped.
bool reap(Worker& worker, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const pid_t done = ::waitpid(worker.pid, &worker.status, WNOHANG);
    if (done == worker.pid) {
      worker.pid = -1;
      return true;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + ::strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

std::string join(const std::set<std::int64_t>& values) {
  std::string out;
  for (auto v : values) out += (out.empty() ? "" : " ") + std::to_string(v);
  return "{" + out + "}";
}

// The result of replaying one worker's log in order, tracking the partitions it owns.
struct Replay {
  std::size_t commit_entries_checked = 0;              // K entries
  std::size_t commit_attempts = 0;                     // runs of C lines
  std::vector<std::string> commits_outside_ownership;  // K entries for partitions not owned
  std::size_t attempts_outside_ownership = 0;          // C entries for partitions not owned
  std::size_t records_outside_ownership = 0;           // R lines for partitions not owned
  std::size_t errors = 0;                              // E lines
  std::size_t rebalances = 0;                          // A, V and L lines
};

// Ownership: A adds its partitions, V and L remove theirs. The consumer calls on_revoked (V)
// before the revocation's final commit, which still happens while the member owns the
// partitions (they are unassigned only after it). So the partitions of a V stay committable for
// exactly the one commit (C lines, then K lines) that immediately follows the V line; any
// other line ends that window.
Replay replay(const std::vector<LogLine>& lines) {
  Replay out;
  std::set<std::int64_t> owned;
  std::set<std::int64_t> revoking;
  enum class Window { None, AfterRevoke, RevokeCommitSent, RevokeCommitDone } window = Window::None;
  char previous = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const LogLine& line = lines[i];
    switch (line.kind) {
      case 'A':
        ++out.rebalances;
        window = Window::None;
        owned.insert(line.numbers.begin(), line.numbers.end());
        break;
      case 'V':
        ++out.rebalances;
        revoking.clear();
        for (auto p : line.numbers) {
          owned.erase(p);
          revoking.insert(p);
        }
        window = Window::AfterRevoke;
        break;
      case 'L':
        ++out.rebalances;
        window = Window::None;
        for (auto p : line.numbers) owned.erase(p);
        break;
      case 'R':
        window = Window::None;
        if (line.numbers.size() == 2 && !owned.contains(line.numbers[0])) ++out.records_outside_ownership;
        break;
      case 'C': {
        if (previous != 'C') ++out.commit_attempts;
        if (window == Window::AfterRevoke) {
          window = Window::RevokeCommitSent;
        } else if (window == Window::RevokeCommitDone) {
          window = Window::None;  // a new commit after the revocation's own
        }
        const bool may_revoking = window == Window::RevokeCommitSent;
        if (line.numbers.size() == 2 && !owned.contains(line.numbers[0]) &&
            !(may_revoking && revoking.contains(line.numbers[0]))) {
          ++out.attempts_outside_ownership;
        }
        break;
      }
      case 'K': {
        if (window == Window::RevokeCommitSent || window == Window::RevokeCommitDone) {
          window = Window::RevokeCommitDone;
        } else {
          window = Window::None;
        }
        const bool may_revoking = window == Window::RevokeCommitDone;
        ++out.commit_entries_checked;
        if (line.numbers.size() != 2) break;
        if (!owned.contains(line.numbers[0]) && !(may_revoking && revoking.contains(line.numbers[0]))) {
          out.commits_outside_ownership.push_back(
              "line " + std::to_string(i + 1) + ": K " + std::to_string(line.numbers[0]) + " " +
              std::to_string(line.numbers[1]) + " while owning " + join(owned));
        }
        break;
      }
      case 'E':
        ++out.errors;
        window = Window::None;
        break;
      default:
        window = Window::None;
        break;
    }
    if (window == Window::None) revoking.clear();
    previous = line.kind;
  }
  return out;
}

std::vector<LogLine> lines_of(const std::string& text) {
  std::size_t consumed = 0;
  return parse_lines(text, &consumed);
}

// The log checker itself, without a broker: it must catch what the acceptance test looks for.
TEST(ScaleOutLogReplay, PartialLastLineIsLeftForTheNextRead) {
  std::size_t consumed = 0;
  const auto lines = parse_lines("A 0 3\nR 3 17\nR 3", &consumed);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(consumed, 13u);
  EXPECT_EQ(lines[0].kind, 'A');
  EXPECT_EQ(lines[0].numbers, (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(lines[1].numbers, (std::vector<std::int64_t>{3, 17}));
}

TEST(ScaleOutLogReplay, CommitsOfOwnedPartitionsAndTheRevocationsOwnCommitPass) {
  const Replay result = replay(
      lines_of("A 0 1\nR 0 0\nR 1 0\nC 0 1\nC 1 1\nK 0 1\nK 1 1\nR 1 1\nV 1\nC 0 1\nC 1 2\nK 0 1\nK 1 2\n"
               "R 0 1\nC 0 2\nK 0 2\nA 1\nC 1 3\nK 1 3\n"));
  EXPECT_TRUE(result.commits_outside_ownership.empty())
      << ::testing::PrintToString(result.commits_outside_ownership);
  EXPECT_EQ(result.commit_entries_checked, 6u);
  EXPECT_EQ(result.commit_attempts, 4u);
  EXPECT_EQ(result.attempts_outside_ownership, 0u);
  EXPECT_EQ(result.records_outside_ownership, 0u);
}

TEST(ScaleOutLogReplay, CommitsOfPartitionsNoLongerOwnedAreCaught) {
  // A second commit after the revocation's own.
  EXPECT_EQ(replay(lines_of("A 0 1\nV 1\nC 1 9\nK 1 9\nC 1 10\nK 1 10\n")).commits_outside_ownership.size(),
            1u);
  // A commit after records were handled again: the revocation is over.
  EXPECT_EQ(replay(lines_of("A 0 1\nV 1\nR 0 3\nC 1 9\nK 1 9\n")).commits_outside_ownership.size(), 1u);
  // A lost partition is never committed, not even right after the loss.
  EXPECT_EQ(replay(lines_of("A 0 1\nL 1\nC 1 9\nK 1 9\n")).commits_outside_ownership.size(), 1u);
  // Never assigned.
  const Replay never = replay(lines_of("A 0\nR 2 0\nC 2 1\nK 2 1\n"));
  EXPECT_EQ(never.commits_outside_ownership.size(), 1u);
  EXPECT_EQ(never.attempts_outside_ownership, 1u);
  EXPECT_EQ(never.records_outside_ownership, 1u);
}

TEST(ScaleOut, ThreeProcessesOneKilledNothingLostNothingMovesBackwards) {
  const std::string bootstrap = testing::real_broker();
  if (bootstrap.empty()) {
    GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh start "
                    "and export KAFKA_BOOTSTRAP (scripts/test.sh does both)";
  }
  const std::string worker_path = SCALEOUT_WORKER_PATH;
  ASSERT_EQ(::access(worker_path.c_str(), X_OK), 0) << "worker binary not found: " << worker_path;

  // SCALEOUT_ASSIGNMENT=range runs the same scenario with the eager protocol.
  const char* assignment_env = std::getenv("SCALEOUT_ASSIGNMENT");
  const std::string assignment = assignment_env != nullptr ? assignment_env : "cooperative-sticky";
  const std::string topic = unique_name("scaleout");
  const std::string group = unique_name("scaleout-group");
  constexpr int kTotal = kPartitions * kRecordsPerPartition;

  // ---- The topic and its records ----
  ASSERT_NO_THROW(create_topic(bootstrap, topic, kPartitions));
  {
    Producer producer(bootstrap);
    for (int p = 0; p < kPartitions; ++p) producer.produce(topic, p, kRecordsPerPartition);
    for (int p = 0; p < kPartitions; ++p) {
      std::int64_t low = -1;
      std::int64_t high = -1;
      ASSERT_EQ(rd_kafka_query_watermark_offsets(producer.handle(), topic.c_str(), p, &low, &high, 10'000),
                RD_KAFKA_RESP_ERR_NO_ERROR);
      ASSERT_EQ(low, 0) << "partition " << p;
      ASSERT_EQ(high, kRecordsPerPartition) << "partition " << p << ": not every record was produced";
    }
  }

  // ---- Temp files and the workers ----
  TempDirGuard temp;
  {
    std::string pattern = (std::filesystem::temp_directory_path() / "scaleout-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    temp.path = pattern;
  }
  std::vector<Worker> workers(kWorkers);
  ChildGuard child_guard{workers};
  const auto started = Clock::now();
  for (int i = 0; i < kWorkers; ++i) {
    Worker& worker = workers[static_cast<std::size_t>(i)];
    worker.index = i;
    worker.log_path = (temp.path / ("worker-" + std::to_string(i) + ".log")).string();
    worker.stderr_path = (temp.path / ("worker-" + std::to_string(i) + ".err")).string();
    worker.pid = spawn_worker({worker_path, "--bootstrap", bootstrap, "--group", group, "--topic", topic,
                               "--log", worker.log_path, "--assignment", assignment},
                              worker.stderr_path);
    ASSERT_GT(worker.pid, 0) << "fork failed: " << std::strerror(errno);
  }

  // ---- The monitor: the group's committed offsets, read as an outsider ----
  KafkaProperties monitor_properties{
      {"bootstrap.servers", bootstrap}, {"group.id", group}, {"log_level", "3"}};
  KafkaOffsetStoreOptions monitor_options;
  monitor_options.request_timeout = std::chrono::seconds(2);
  monitor_options.retry_backoff = std::chrono::milliseconds(20);
  monitor_options.retry_backoff_max = std::chrono::milliseconds(200);
  monitor_options.retry_deadline = std::chrono::seconds(3);
  KafkaOffsetStore monitor(KafkaClient::create(monitor_properties), monitor_options);
  std::vector<TopicPartition> all_partitions;
  for (int p = 0; p < kPartitions; ++p) all_partitions.emplace_back(topic, p);

  std::array<std::int64_t, kPartitions> last_committed{};
  last_committed.fill(-1);
  std::size_t monitor_samples = 0;
  std::size_t monitor_failures = 0;
  std::size_t committed_advances = 0;
  std::vector<std::string> decreases;
  auto sample_committed = [&]() -> bool {
    std::unordered_map<TopicPartition, OffsetInfo> committed;
    try {
      committed = monitor.committed(all_partitions);
    } catch (const StateError& error) {
      ++monitor_failures;
      std::cerr << "[scaleout] monitor: " << error.what() << "\n";
      return false;
    }
    ++monitor_samples;
    const auto at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    for (const auto& [tp, info] : committed) {
      if (tp.partition < 0 || tp.partition >= kPartitions) continue;
      std::int64_t& last = last_committed[static_cast<std::size_t>(tp.partition)];
      if (info.offset < last) {
        decreases.push_back("partition " + std::to_string(tp.partition) + ": " + std::to_string(last) +
                            " -> " + std::to_string(info.offset) + " at " + std::to_string(at_ms) + " ms");
      } else if (info.offset > last) {
        ++committed_advances;
      }
      last = info.offset;
    }
    for (int p = 0; p < kPartitions; ++p) {
      std::int64_t& last = last_committed[static_cast<std::size_t>(p)];
      if (last >= 0 && !committed.contains(TopicPartition(topic, p))) {
        decreases.push_back("partition " + std::to_string(p) + ": " + std::to_string(last) +
                            " -> no committed offset at " + std::to_string(at_ms) + " ms");
        last = -1;
      }
    }
    return true;
  };
  auto all_committed_to_end = [&] {
    return std::all_of(last_committed.begin(), last_committed.end(),
                       [](std::int64_t offset) { return offset == kRecordsPerPartition; });
  };

  // ---- The records handled, from the R lines of every log ----
  std::vector<int> seen(static_cast<std::size_t>(kTotal), 0);
  std::size_t distinct = 0;
  std::size_t handled = 0;
  std::size_t unexpected_records = 0;
  auto read_logs = [&] {
    for (auto& worker : workers) {
      const std::string text = read_from(worker.log_path, worker.log_read);
      std::size_t consumed = 0;
      for (const auto& line : parse_lines(text, &consumed)) {
        if (line.kind != 'R' || line.numbers.size() != 2) continue;
        ++worker.records;
        ++handled;
        const auto p = line.numbers[0];
        const auto o = line.numbers[1];
        if (p < 0 || p >= kPartitions || o < 0 || o >= kRecordsPerPartition) {
          ++unexpected_records;
          continue;
        }
        if (seen[static_cast<std::size_t>(p * kRecordsPerPartition + o)]++ == 0) ++distinct;
      }
      worker.log_read += consumed;
    }
  };

  // ---- Run: kill the busiest worker at a third, go on until everything is handled and committed ----
  int killed_index = -1;
  std::size_t distinct_at_kill = 0;
  std::string records_at_kill;
  long kill_at_ms = -1;
  long all_handled_at_ms = -1;
  std::string unexpected_exit;
  const auto run_deadline = started + kRunDeadline;
  while (Clock::now() < run_deadline) {
    std::this_thread::sleep_for(kMonitorInterval);
    sample_committed();
    read_logs();
    for (auto& worker : workers) {
      if (worker.pid > 0 && ::waitpid(worker.pid, &worker.status, WNOHANG) == worker.pid) {
        worker.pid = -1;
        unexpected_exit +=
            " worker " + std::to_string(worker.index) + " (" + describe_status(worker.status) + ")";
      }
    }
    if (!unexpected_exit.empty()) break;
    const auto elapsed_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    if (killed_index < 0 && distinct * 3 >= static_cast<std::size_t>(kTotal)) {
      auto busiest = std::max_element(workers.begin(), workers.end(),
                                      [](const Worker& a, const Worker& b) { return a.records < b.records; });
      for (const auto& worker : workers) {
        records_at_kill += (records_at_kill.empty() ? "" : "/") + std::to_string(worker.records);
      }
      ASSERT_EQ(::kill(busiest->pid, SIGKILL), 0) << std::strerror(errno);
      ASSERT_TRUE(reap(*busiest, std::chrono::seconds(10))) << "a SIGKILLed worker did not die";
      busiest->killed = true;
      killed_index = busiest->index;
      distinct_at_kill = distinct;
      kill_at_ms = elapsed_ms;
    }
    if (distinct == static_cast<std::size_t>(kTotal) && all_handled_at_ms < 0) all_handled_at_ms = elapsed_ms;
    // Every record handled, and the survivors (having taken over the dead member's partitions)
    // have committed the end of every partition.
    if (killed_index >= 0 && distinct == static_cast<std::size_t>(kTotal) && all_committed_to_end()) break;
  }
  const auto run_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  ASSERT_TRUE(unexpected_exit.empty()) << "workers exited before SIGTERM:" << unexpected_exit;
  ASSERT_GE(killed_index, 0) << "the run ended before a third of the records was handled (" << distinct
                             << " of " << kTotal << ")";

  // ---- Stop the survivors: SIGTERM, they close (final commit, leave the group) and exit 0 ----
  for (auto& worker : workers) {
    if (worker.pid > 0) {
      ASSERT_EQ(::kill(worker.pid, SIGTERM), 0) << std::strerror(errno);
    }
  }
  const auto shutdown_deadline = Clock::now() + kShutdownDeadline;
  while (Clock::now() < shutdown_deadline &&
         std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return w.pid > 0; })) {
    for (auto& worker : workers) {
      if (worker.pid > 0) reap(worker, std::chrono::milliseconds(0));
    }
    sample_committed();
    std::this_thread::sleep_for(kMonitorInterval);
  }
  const auto shutdown_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count() - run_ms;
  for (const auto& worker : workers) {
    if (worker.killed) continue;
    EXPECT_EQ(worker.pid, -1) << "worker " << worker.index << " did not exit within 30 s of SIGTERM";
    if (worker.pid == -1) {
      EXPECT_TRUE(WIFEXITED(worker.status) && WEXITSTATUS(worker.status) == 0)
          << "worker " << worker.index << " ended with " << describe_status(worker.status);
    }
  }
  read_logs();
  for (int attempt = 0; attempt < 20 && !sample_committed(); ++attempt) {
    std::this_thread::sleep_for(kMonitorInterval);
  }

  // ---- (a) every record was handled ----
  std::vector<std::string> missing;
  for (int p = 0; p < kPartitions; ++p) {
    int first = -1;
    int count = 0;
    for (int o = 0; o < kRecordsPerPartition; ++o) {
      if (seen[static_cast<std::size_t>(p * kRecordsPerPartition + o)] != 0) continue;
      if (first < 0) first = o;
      ++count;
    }
    if (count > 0) {
      missing.push_back("partition " + std::to_string(p) + ": " + std::to_string(count) +
                        " missing from offset " + std::to_string(first));
    }
  }
  EXPECT_TRUE(missing.empty()) << ::testing::PrintToString(missing);
  EXPECT_EQ(distinct, static_cast<std::size_t>(kTotal));
  EXPECT_EQ(unexpected_records, 0u) << "R lines outside the produced offsets";

  // ---- (b) no committed offset ever moved backwards, and every partition ends at its log end ----
  EXPECT_TRUE(decreases.empty()) << ::testing::PrintToString(decreases);
  EXPECT_GT(monitor_samples, 10u);
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(last_committed[static_cast<std::size_t>(p)], kRecordsPerPartition)
        << "final committed offset of partition " << p;
  }

  // ---- (c) no member committed a partition it did not own ----
  std::size_t commits_checked = 0;
  std::size_t commit_attempts = 0;
  std::size_t attempts_outside = 0;
  std::size_t records_outside = 0;
  std::size_t errors = 0;
  std::string per_worker;
  for (const auto& worker : workers) {
    std::size_t consumed = 0;
    const Replay result = replay(parse_lines(read_file(worker.log_path), &consumed));
    commits_checked += result.commit_entries_checked;
    commit_attempts += result.commit_attempts;
    attempts_outside += result.attempts_outside_ownership;
    records_outside += result.records_outside_ownership;
    errors += result.errors;
    EXPECT_TRUE(result.commits_outside_ownership.empty())
        << "worker " << worker.index << " committed partitions it did not own: "
        << ::testing::PrintToString(result.commits_outside_ownership);
    EXPECT_GT(result.rebalances, 0u) << "worker " << worker.index << " was never assigned anything";
    per_worker += " w" + std::to_string(worker.index) + (worker.killed ? "(killed)" : "") + "=" +
                  std::to_string(worker.records) + "R/" + std::to_string(result.commit_entries_checked) +
                  "K/" + std::to_string(result.rebalances) + "reb";
    const std::string err = read_file(worker.stderr_path);
    if (!err.empty()) std::cout << "[scaleout] worker " << worker.index << " stderr:\n" << err;
  }

  std::cout << "[scaleout] assignment=" << assignment << " records=" << kTotal << " distinct=" << distinct
            << " handled=" << handled << " duplicates=" << (handled - distinct)
            << " commits_checked=" << commits_checked << " commit_attempts=" << commit_attempts
            << " decreases=" << decreases.size() << " monitor_samples=" << monitor_samples
            << " monitor_failures=" << monitor_failures << " committed_advances=" << committed_advances
            << "\n"
            << "[scaleout] killed=w" << killed_index << " at " << kill_at_ms << " ms (distinct "
            << distinct_at_kill << ", R per worker " << records_at_kill << "), all handled at "
            << all_handled_at_ms << " ms, run " << run_ms << " ms, shutdown " << shutdown_ms << " ms;"
            << per_worker << "; C outside ownership=" << attempts_outside
            << ", R outside ownership=" << records_outside << ", worker errors=" << errors << "\n";
}

}  // namespace
}  // namespace processor::kafka
