// demo: a consumer that crashes midway and resumes from its RocksDB offsets, end to end.
//
//   1. starts an embedded Kafka (librdkafka's mock cluster: 3 brokers on loopback) with a topic
//      `events` of 6 partitions, and produces 60,000 events into it;
//   2. runs the consumer as a child process (this binary, `--consumer`): KafkaConsumer feeding
//      an OffsetManager whose offsets live in RocksDB (StateBackendOffsetStore);
//   3. SIGKILLs the consumer at ~40% and starts a new one, which resumes from RocksDB;
//   4. opens the RocksDB and checks that every event was processed at least once.
//
// The consumer is a separate process so that the crash is real: no destructor, no final commit.
//
// Act 2, on the same mock cluster: word count with StreamProcessor (examples/word_count.cpp).
//   5. produces words, runs a processor until it has counted them, prints the counts;
//   6. closes it and deletes its state directory, produces more words, and starts a new
//      processor on the same application id: it restores the counts from the changelog topic
//      (printing RestoreProgress) and continues counting; checks every count against the words.

#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <processor/kafka.hpp>
#include <processor/state.hpp>
#include <processor/streams.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace processor;
using Clock = std::chrono::steady_clock;

constexpr const char* kTopic = "events";
constexpr const char* kGroup = "demo-group";
constexpr int kPartitions = 6;
constexpr int kEvents = 60'000;
constexpr int kUsers = 1'000;
constexpr double kKillAt = 0.40;                                 // fraction processed before the SIGKILL
constexpr const char* kSeenPrefix = "demo:seen:";                // demo:seen:<partition>:<offset> -> times
constexpr auto kSimulatedWork = std::chrono::microseconds(100);  // per event, so there is a "midway"

// A plain librdkafka producer handle (the demo's producer, and the mock cluster's owner).
rd_kafka_t* new_producer(const std::map<std::string, std::string>& properties) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      throw std::runtime_error(error);
    }
  }
  rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (handle == nullptr) throw std::runtime_error(error);
  return handle;
}

// ---------------------------------------------------------------- the consumer (child process)

// Consumes until every one of `total` events has been processed at least once, counting the
// events that earlier (killed) consumers already processed. Prints "progress N" for the parent.
int run_consumer(const std::string& bootstrap, const std::string& db_dir, int total) {
  auto db = std::make_shared<state::RocksDbStateBackend>(db_dir);
  auto store = std::make_shared<kafka::StateBackendOffsetStore>(db);
  auto client = kafka::KafkaClient::create({
      {"bootstrap.servers", bootstrap},
      {"group.id", kGroup},
      // A killed member stays in the group until its session times out, and the group waits
      // for it before handing its partitions to the new member: keep that wait short.
      {"session.timeout.ms", "3000"},
      {"heartbeat.interval.ms", "300"},
      {"log_level", "3"},  // errors only: no connection chatter
  });
  kafka::OffsetManagerOptions manager_options;
  manager_options.broker = std::make_shared<kafka::KafkaBrokerMetadata>(client);
  // On assignment the consumer asks this manager's store (RocksDB) for each partition's position
  // before it asks the broker: RocksDB is the resume point.
  kafka::OffsetManager manager(kGroup, db, store, kafka::OffsetCommitStrategy::every_n_events(500),
                               manager_options);
  kafka::KafkaConsumerOptions options;
  options.topics = {kTopic};
  options.on_assigned = [&](const std::vector<kafka::TopicPartition>& partitions) {
    std::string where;  // the positions the consumer resumes from: RocksDB's, else the log start
    for (const auto& tp : partitions) {
      const auto position = manager.get_offset(kTopic, tp.partition).value_or(0);
      where += " p" + std::to_string(tp.partition) + "@" + std::to_string(position);
    }
    std::printf("note assigned %zu partitions, starting at%s\n", partitions.size(), where.c_str());
    std::fflush(stdout);
  };
  kafka::KafkaConsumer consumer(client, manager, options);

  // Events processed by earlier consumers are already marked in RocksDB.
  auto processed = static_cast<int>(db->list_keys(kSeenPrefix).size());
  std::printf("progress %d\n", processed);
  std::fflush(stdout);
  auto last_report = Clock::now();
  consumer.run([&](const kafka::ConsumedRecord& record) {
    std::this_thread::sleep_for(kSimulatedWork);  // "processing" the event
    // The side effect of processing: count how often this (partition, offset) was handled. It
    // is written before the consumer records the offset, so a kill in between repeats the
    // event (at-least-once) and shows up here as a count of 2.
    const std::string key =
        kSeenPrefix + std::to_string(record.partition) + ":" + std::to_string(record.offset);
    const auto times = db->get(key);
    db->put(key, std::to_string(times ? std::stoi(*times) + 1 : 1));
    if (!times) ++processed;
    // Report by time, not by count, so that the parent's SIGKILL lands at an arbitrary point
    // between two commits, like a real crash.
    if (Clock::now() - last_report >= std::chrono::milliseconds(50) || processed == total) {
      std::printf("progress %d\n", processed);
      std::fflush(stdout);
      last_report = Clock::now();
    }
    if (processed == total) consumer.stop();
  });
  consumer.close();  // commits the last offsets and leaves the group
  return 0;
}

// ---------------------------------------------------------------- the embedded Kafka (parent)

// librdkafka's mock cluster lives in a (producer) client handle of this process; its brokers
// listen on loopback, so the consumer child connects to it like to any Kafka.
class EmbeddedKafka {
 public:
  EmbeddedKafka() : owner_(new_producer({{"log_level", "0"}})) {
    cluster_ = rd_kafka_mock_cluster_new(owner_, 3);
    if (cluster_ == nullptr) throw std::runtime_error("cannot start the mock cluster");
    create_topic(kTopic, kPartitions);
  }
  void create_topic(const std::string& name, int partitions) {
    if (rd_kafka_mock_topic_create(cluster_, name.c_str(), partitions, 3) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("cannot create the topic " + name);
    }
  }
  ~EmbeddedKafka() {
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(owner_);
  }
  std::string bootstrap() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }

 private:
  rd_kafka_t* owner_;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
};

// Produces `count` events, key = user id (so a user's events stay in order on one partition),
// value = an amount. Returns each partition's high watermark (log end offset) afterwards.
std::map<int, std::int64_t> produce_events(const std::string& bootstrap, int count) {
  rd_kafka_t* producer =
      new_producer({{"bootstrap.servers", bootstrap}, {"linger.ms", "5"}, {"log_level", "3"}});

  for (int i = 0; i < count; ++i) {
    const std::string key = "user-" + std::to_string(i % kUsers);
    const std::string value = std::to_string((i * 7919) % 10'000);
    rd_kafka_resp_err_t err;
    while ((err = rd_kafka_producev(
                producer, RD_KAFKA_V_TOPIC(kTopic), RD_KAFKA_V_KEY(key.data(), key.size()),
                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(producer, 10);  // the local queue is full: let deliveries drain it
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(rd_kafka_err2str(err));
    if ((i + 1) % 10'000 == 0) std::printf("demo: produced %d / %d events\n", i + 1, count);
  }
  if (rd_kafka_flush(producer, 30'000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error("producer flush timed out");
  }

  std::map<int, std::int64_t> log_end;
  for (int p = 0; p < kPartitions; ++p) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(producer, kTopic, p, &low, &high, 10'000) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("cannot read the high watermark of partition " + std::to_string(p));
    }
    log_end[p] = high;
  }
  rd_kafka_destroy(producer);
  return log_end;
}

// ---------------------------------------------------------------- running the consumer child

struct Child {
  pid_t pid = -1;
  int out = -1;           // read end of the child's stdout
  std::string pending;    // a partial line
  int processed = 0;      // the last "progress N" read
  bool assigned = false;  // whether the group has handed it its partitions yet
};

// fork + exec of this binary in --consumer mode. Everything is prepared before fork(): the
// parent has threads (librdkafka), so the child may only call async-signal-safe functions.
Child start_consumer(const std::string& bootstrap, const std::string& db_dir) {
  std::vector<std::string> args = {"demo", "--consumer", bootstrap, db_dir, std::to_string(kEvents)};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fds[0], {}, 0, false};
}

// Reads what the child printed within `timeout`; returns false at end of output.
bool read_progress(Child& child, std::chrono::milliseconds timeout) {
  pollfd pfd{child.out, POLLIN, 0};
  if (poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return true;
  char buffer[4096];
  const ssize_t n = read(child.out, buffer, sizeof buffer);
  if (n <= 0) return false;
  child.pending.append(buffer, static_cast<std::size_t>(n));
  for (std::size_t end; (end = child.pending.find('\n')) != std::string::npos;) {
    const std::string line = child.pending.substr(0, end);
    child.pending.erase(0, end + 1);
    if (line.rfind("progress ", 0) == 0) child.processed = std::stoi(line.substr(9));
    if (line.rfind("note ", 0) == 0) std::printf("demo: consumer %d: %s\n", child.pid, line.c_str() + 5);
    if (line.rfind("note assigned", 0) == 0) child.assigned = true;
  }
  return true;
}

// Watches the child, printing progress every 0.5 s, until it exits or, when `kill_at` is given,
// has processed that many events: then it is SIGKILLed. Returns the child's wait status.
int watch_consumer(Child& child, std::optional<int> kill_at, Clock::time_point deadline) {
  auto last_report = Clock::now();
  int last_processed = -1;
  for (bool open = true; open;) {
    open = read_progress(child, std::chrono::milliseconds(20));
    if (kill_at && child.processed >= *kill_at) {
      kill(child.pid, SIGKILL);
      std::printf("demo: ** SIGKILL to consumer %d after %d / %d events processed **\n", child.pid,
                  child.processed, kEvents);
      break;
    }
    if (const auto now = Clock::now(); now - last_report >= std::chrono::milliseconds(500) || !open) {
      std::string rate = "waiting for the group to assign partitions";
      if (child.assigned && last_processed >= 0) {
        const double seconds = std::chrono::duration<double>(now - last_report).count();
        rate = std::to_string(static_cast<int>((child.processed - last_processed) / seconds)) + " events/s";
      }
      std::printf("demo: processed %6d / %d events (%3d%%), %s\n", child.processed, kEvents,
                  child.processed * 100 / kEvents, rate.c_str());
      last_report = now;
      last_processed = child.processed;
    }
    if (Clock::now() > deadline) {
      kill(child.pid, SIGKILL);
      throw std::runtime_error("the consumer did not finish in time (stuck at " +
                               std::to_string(child.processed) + " events)");
    }
  }
  close(child.out);
  int status = 0;
  waitpid(child.pid, &status, 0);
  return status;
}

// ---------------------------------------------------------------- verification (parent)

// Opens the RocksDB the consumers wrote (they have exited: one process per directory), prints
// committed offset, log end and lag per partition, and checks every event was processed.
bool verify(const std::string& db_dir, const std::map<int, std::int64_t>& log_end) {
  auto db = std::make_shared<state::RocksDbStateBackend>(db_dir);
  const auto committed = kafka::StateBackendOffsetStore(db).get_all_offsets(kGroup);

  std::map<int, long long> distinct, again;  // per partition: events processed, and repeats
  for (const auto& [key, times] : db->scan(kSeenPrefix)) {
    const int partition = std::stoi(key.substr(std::string(kSeenPrefix).size()));
    ++distinct[partition];
    again[partition] += std::stoll(times) - 1;
  }

  std::printf("\n%9s %10s %10s %6s %10s %12s\n", "partition", "committed", "log end", "lag", "processed",
              "reprocessed");
  auto print_row = [](const std::string& name, long long offset, long long end, long long processed,
                      long long repeats) {
    std::printf("%9s %10lld %10lld %6lld %10lld %12lld\n", name.c_str(), offset, end, end - offset, processed,
                repeats);
  };
  long long sum_committed = 0, sum_end = 0, sum_lag = 0, sum_processed = 0, sum_again = 0, missing = 0;
  for (const auto& [partition, end] : log_end) {
    const auto found = committed.find(kafka::TopicPartition(kTopic, partition));
    const long long offset = found == committed.end() ? 0 : found->second.offset;
    print_row(std::to_string(partition), offset, end, distinct[partition], again[partition]);
    sum_committed += offset, sum_end += end, sum_lag += end - offset;
    sum_processed += distinct[partition], sum_again += again[partition];
    missing += end - distinct[partition];  // the log has no gaps: offsets 0 .. end-1
  }
  print_row("total", sum_committed, sum_end, sum_processed, sum_again);
  std::printf("\n");

  if (missing != 0 || sum_lag != 0 || sum_end != kEvents) {
    std::printf(
        "demo: FAILED — %lld events in the log (%d produced), %lld processed, %lld missing, "
        "total lag %lld\n",
        sum_end, kEvents, sum_processed, missing, sum_lag);
    return false;
  }
  std::printf(
      "demo: OK — %d events produced, %lld processed, 0 missing, %lld reprocessed after the "
      "crash, total lag 0\n",
      kEvents, sum_processed, sum_again);
  return true;
}

// ---------------------------------------------------------------- act 2: word count (parent)

// Word count with StreamProcessor, as in examples/word_count.cpp: each record of `words` is one
// word as its key; the processor counts it in the store "counts" (RocksDB, backed by the
// changelog topic demo-word-count-counts-changelog) and sends (word, count) to `word-counts`.
constexpr const char* kWordsTopic = "words";
constexpr const char* kCountsTopic = "word-counts";
constexpr const char* kApplication = "demo-word-count";
constexpr int kWordPartitions = 3;
constexpr const char* kFirstText = "the quick brown fox jumps over the lazy dog and the dog sleeps";
constexpr const char* kSecondText = "the fox runs and the dog barks at the fox";
// On a real broker StreamProcessor runs exactly-once (the default). librdkafka 2.0.2's mock
// cluster acknowledges TxnOffsetCommit without storing the offsets, so a restarted processor
// would find no committed input offsets and count everything again: on the mock, the demo runs
// at-least-once, whose plain offset commits the mock stores. A clean close loses and repeats
// nothing either way; only a crash between a commit's two steps would repeat records.
constexpr auto kGuarantee = streams::ProcessingGuarantee::AtLeastOnce;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> words;
  for (std::size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) words.push_back(text.substr(start, end - start));
  }
  return words;
}

// Produces each word as a record keyed by the word, so that a word always lands on one partition.
void produce_words(const std::string& bootstrap, const std::vector<std::string>& words) {
  rd_kafka_t* producer = new_producer({{"bootstrap.servers", bootstrap}, {"log_level", "3"}});
  for (const auto& word : words) {
    const rd_kafka_resp_err_t err =
        rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(kWordsTopic), RD_KAFKA_V_KEY(word.data(), word.size()),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(rd_kafka_err2str(err));
  }
  const rd_kafka_resp_err_t flushed = rd_kafka_flush(producer, 10'000);
  rd_kafka_destroy(producer);
  if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error("producer flush timed out");
}

std::string format_counts(const std::map<std::string, long long>& counts) {
  std::string text;
  for (const auto& [word, count] : counts)
    text += (text.empty() ? "" : " ") + word + "=" + std::to_string(count);
  return text;
}

// Runs a StreamProcessor on `state_dir` until it has processed `records` records and then seen
// nothing more for a while, and closes it. `counts` gets the (word, count) pairs it outputs.
streams::StreamProcessorStats count_words(const std::string& bootstrap, const std::string& state_dir,
                                          std::uint64_t records, std::map<std::string, long long>& counts,
                                          Clock::time_point deadline) {
  streams::StreamProcessorOptions options;
  options.application_id = kApplication;
  options.input_topic = kWordsTopic;
  options.stores = {"counts"};
  options.state_dir = state_dir;
  // The mock group coordinator answers a member that joins after another one left only once
  // the rebalance it started on the leave times out, after session.timeout.ms - 1 s: keep it short.
  options.properties = {{"bootstrap.servers", bootstrap},
                        {"session.timeout.ms", "3000"},
                        {"heartbeat.interval.ms", "300"},
                        {"log_level", "3"}};
  options.guarantee = kGuarantee;
  options.on_restore_progress = [](const streams::RestoreProgress& progress) {
    std::printf(
        "demo:   restore of '%s' partition %d%s: changelog offsets %lld..%lld of %lld, %llu records "
        "applied\n",
        progress.store.c_str(), progress.partition, progress.done ? " done" : "",
        static_cast<long long>(progress.start_offset), static_cast<long long>(progress.position),
        static_cast<long long>(progress.end_offset), static_cast<unsigned long long>(progress.records));
  };
  // The per-record function, as a user writes it.
  streams::StreamProcessor processor(
      options, [&](const kafka::ConsumedRecord& record, streams::RecordContext& context) {
        streams::PartitionStore& store = context.store("counts");
        const auto current = store.get(record.key);
        const std::string count = std::to_string((current ? std::stoll(*current) : 0) + 1);
        store.put(record.key, count);
        context.output().send(kCountsTopic, record.key, count);
        counts[std::string(record.key)] = std::stoll(count);
      });
  // Until every record is processed, then 1 s more: a processor that started at the wrong
  // offsets would process records beyond `records` there.
  auto idle_since = Clock::now();
  while (processor.stats().records < records || Clock::now() - idle_since < std::chrono::seconds(1)) {
    if (processor.poll() > 0) idle_since = Clock::now();
    if (Clock::now() > deadline) {
      throw std::runtime_error("the word count did not finish in time (" +
                               std::to_string(processor.stats().records) + " of " + std::to_string(records) +
                               " records)");
    }
  }
  processor.close();  // commits and leaves the group
  return processor.stats();
}

bool run_word_count(EmbeddedKafka& kafka, Clock::time_point deadline) {
  std::printf("\ndemo: ---- act 2: word count with StreamProcessor (examples/word_count.cpp) ----\n");
  set_log_level(LogLevel::Warning);  // the demo prints the restore progress itself
  kafka.create_topic(kWordsTopic, kWordPartitions);
  kafka.create_topic(kCountsTopic, kWordPartitions);
  // The processor creates a missing changelog topic with the Admin API, which the mock cluster
  // does not implement (CreateTopics, see rdkafka_mock.h): create it here, as many partitions as
  // the input. (The mock keeps every record: it does not compact.)
  kafka.create_topic(streams::changelog_topic(kApplication, "counts"), kWordPartitions);
  std::printf(
      "demo: topic '%s' (%d partitions, one word per record, keyed by the word), output '%s',\n"
      "      store 'counts' backed by the changelog topic '%s'\n",
      kWordsTopic, kWordPartitions, kCountsTopic, streams::changelog_topic(kApplication, "counts").c_str());
  std::printf(
      "demo: at-least-once here: the mock cluster does not keep offsets committed inside a\n"
      "      transaction (TxnOffsetCommit); on a real broker StreamProcessor runs exactly-once\n");

  const char* tmp = std::getenv("TMPDIR");
  std::string state_dir =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/processor-demo-streams-XXXXXX";
  if (mkdtemp(state_dir.data()) == nullptr) throw std::runtime_error("cannot create " + state_dir);

  std::map<std::string, long long> expected;
  const auto first = split(kFirstText);
  for (const auto& word : first) ++expected[word];
  produce_words(kafka.bootstrap(), first);
  std::printf("demo: produced %zu words: \"%s\"\n", first.size(), kFirstText);
  std::map<std::string, long long> counts;
  auto stats = count_words(kafka.bootstrap(), state_dir, first.size(), counts, deadline);
  std::printf("demo: processor 1 processed %llu records in %llu commits; counts: %s\n",
              static_cast<unsigned long long>(stats.records), static_cast<unsigned long long>(stats.commits),
              format_counts(counts).c_str());

  std::filesystem::remove_all(state_dir);
  std::printf(
      "demo: processor 1 closed and its state directory deleted, as when a machine is lost: the\n"
      "      counts now live only in the changelog topic\n");

  const auto second = split(kSecondText);
  for (const auto& word : second) ++expected[word];
  produce_words(kafka.bootstrap(), second);
  std::printf("demo: produced %zu more words: \"%s\"\n", second.size(), kSecondText);
  std::printf(
      "demo: processor 2 starts on the same application id with an empty state directory; it\n"
      "      restores 'counts' from the changelog before it processes a record:\n");
  std::map<std::string, long long> continued;
  stats = count_words(kafka.bootstrap(), state_dir, second.size(), continued, deadline);
  std::printf(
      "demo: processor 2 restored %llu changelog records, then processed %llu records (only the new\n"
      "      ones: it resumed from the committed input offsets); counts it output: %s\n",
      static_cast<unsigned long long>(stats.restored_records), static_cast<unsigned long long>(stats.records),
      format_counts(continued).c_str());
  std::filesystem::remove_all(state_dir);

  for (const auto& [word, count] : continued) counts[word] = count;
  if (counts != expected || stats.records != second.size()) {
    std::printf("demo: FAILED — counts %s, expected %s\n", format_counts(counts).c_str(),
                format_counts(expected).c_str());
    return false;
  }
  std::printf(
      "demo: OK — every word's count equals the times it was produced: the restored counts\n"
      "      continued exactly, nothing lost and nothing counted twice\n");
  return true;
}

int run_demo() {
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::seconds(50);
  EmbeddedKafka kafka;
  std::printf("demo: embedded Kafka (mock cluster, 3 brokers) at %s, topic '%s' with %d partitions\n",
              kafka.bootstrap().c_str(), kTopic, kPartitions);
  const auto log_end = produce_events(kafka.bootstrap(), kEvents);

  const char* tmp = std::getenv("TMPDIR");
  std::string db_dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/processor-demo-XXXXXX";
  if (mkdtemp(db_dir.data()) == nullptr) throw std::runtime_error("cannot create " + db_dir);
  std::printf("demo: consumer offsets in RocksDB at %s\n", db_dir.c_str());

  Child first = start_consumer(kafka.bootstrap(), db_dir);
  std::printf("demo: consumer started (pid %d)\n", first.pid);
  const int first_status = watch_consumer(first, static_cast<int>(kEvents * kKillAt), deadline);
  if (WIFEXITED(first_status) && WEXITSTATUS(first_status) != 0) {
    std::printf("demo: FAILED — the consumer exited with status %d\n", WEXITSTATUS(first_status));
    return 1;
  }

  Child second = start_consumer(kafka.bootstrap(), db_dir);
  std::printf(
      "demo: consumer restarted (pid %d): it resumes from the offsets in RocksDB once the group\n"
      "      has expired the killed member's session (session.timeout.ms = 3000)\n",
      second.pid);
  const int status = watch_consumer(second, std::nullopt, deadline);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::printf("demo: FAILED — the restarted consumer did not exit cleanly (wait status %d)\n", status);
    return 1;
  }
  if (!verify(db_dir, log_end)) {
    std::printf("demo: the RocksDB is left at %s for inspection\n", db_dir.c_str());
    return 1;
  }
  std::filesystem::remove_all(db_dir);
  if (!run_word_count(kafka, Clock::now() + std::chrono::seconds(30))) return 1;
  std::printf("demo: took %.1f s\n", std::chrono::duration<double>(Clock::now() - started).count());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // Hidden mode: the parent runs this binary as its consumer child.
    if (argc == 5 && std::string(argv[1]) == "--consumer") {
      return run_consumer(argv[2], argv[3], std::stoi(argv[4]));
    }
    return run_demo();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "demo: FAILED — %s\n", error.what());
    return 1;
  }
}
