#pragma once
// The child runs of bench_parallel: one consumption in this process (ours: ParallelConsumer; raw:
// a bare librdkafka loop), timed from the first record the handler sees to the M-th it finishes,
// then one "RUN {json}" line on stdout, the fields of the Parallel Consumer peer's "PEER" line:
//   records, seconds, records_per_s, cpu_seconds (getrusage of the whole process over that window),
//   peak_rss_bytes (VmHWM), startup_seconds, and with a slow record slow_window_seconds,
//   slow_window_records, slow_records_per_s, slow_finished_first; ours adds fetched,
//   partition_pauses and peak_buffered_bytes (ParallelConsumerStats).
// Only bench_parallel.cpp includes it.

#include <librdkafka/rdkafka.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "processor/kafka.hpp"
#include "processor/kafka/parallel_consumer.hpp"

namespace bench::parallel {

using Clock = std::chrono::steady_clock;

// librdkafka 2.0.2 stalls on a 1 s tick when its prefetch queue holds queued.min.messages small
// messages (see bench_e2e.cpp): ours and the raw loop prefetch up to 1M per partition, unless
// --queued-min-messages says otherwise (librdkafka's default is 100000).
constexpr const char* kQueuedMinMessages = "1000000";

inline double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// VmHWM of this process in bytes, -1 when /proc cannot tell.
inline long long peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return -1;
}

struct ChildArgs {
  std::string bootstrap, topic, group, mode;
  std::int64_t records = 0;
  int max_concurrency = 16;
  int work_ms = 0;
  std::string ordering = "key";
  int slow_partition = -1;
  std::int64_t slow_offset = -1;
  int slow_seconds = 0;
  std::string queued_min_messages = kQueuedMinMessages;
  bool slow() const { return slow_partition >= 0 && slow_offset >= 0 && slow_seconds > 0; }
};

// What a run measures, on the handler's threads: the first record, the M-th finished, and the
// window in which the slow record was outstanding.
class RunClock {
 public:
  explicit RunClock(std::int64_t records) : records_(records) {}

  void started() {
    std::call_once(first_once_, [this] {
      first_cpu_ = process_cpu_seconds();
      first_ = Clock::now();
    });
  }
  void finished() {
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == records_) {
      std::lock_guard<std::mutex> lock(mutex_);
      last_cpu_ = process_cpu_seconds();
      last_ = Clock::now();
      cv_.notify_all();
    }
  }
  bool complete() const { return done_.load(std::memory_order_acquire) >= records_; }

  // The slow record: waits up to `seconds`, or until release().
  void slow(int seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    slow_start_ = Clock::now();
    done_at_slow_start_ = done_.load();
    cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return released_; });
    if (!released_) {
      slow_end_ = Clock::now();
      done_at_slow_end_ = done_.load();
    }
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }

  // `extra`: more fields, ",\"name\":value..." (ours: its stats).
  std::string json(const ChildArgs& args, Clock::time_point begun, const std::string& extra = "") {
    std::lock_guard<std::mutex> lock(mutex_);
    const double seconds = std::chrono::duration<double>(last_ - first_).count();
    std::ostringstream out;
    out.precision(9);
    out << "{\"mode\":\"" << args.mode << "\",\"records\":" << records_ << ",\"seconds\":" << seconds
        << ",\"records_per_s\":" << static_cast<double>(records_) / seconds
        << ",\"cpu_seconds\":" << last_cpu_ - first_cpu_ << ",\"peak_rss_bytes\":" << peak_rss_bytes()
        << ",\"startup_seconds\":" << std::chrono::duration<double>(first_ - begun).count();
    if (args.slow()) {
      if (slow_start_ == Clock::time_point{}) throw std::runtime_error("the slow record was never processed");
      const bool slow_first = slow_end_ != Clock::time_point{} && slow_end_ < last_;
      const double window =
          std::chrono::duration<double>((slow_first ? slow_end_ : last_) - slow_start_).count();
      const std::int64_t in_window = (slow_first ? done_at_slow_end_ : records_) - done_at_slow_start_;
      out << ",\"slow_window_seconds\":" << window << ",\"slow_window_records\":" << in_window
          << ",\"slow_records_per_s\":" << static_cast<double>(in_window) / window
          << ",\"slow_finished_first\":" << (slow_first ? "true" : "false");
    }
    out << extra << "}";
    return out.str();
  }

 private:
  const std::int64_t records_;
  std::atomic<std::int64_t> done_{0};
  std::once_flag first_once_;
  std::mutex mutex_;
  std::condition_variable cv_;
  Clock::time_point first_{}, last_{}, slow_start_{}, slow_end_{};
  double first_cpu_ = 0, last_cpu_ = 0;
  std::int64_t done_at_slow_start_ = 0, done_at_slow_end_ = 0;
  bool released_ = false;
};

inline std::chrono::seconds run_deadline(const ChildArgs& args) {
  return std::chrono::seconds(120 + args.slow_seconds + args.records / 2'000);
}

inline void child_ours(const ChildArgs& args) {
  const auto begun = Clock::now();
  auto client = processor::kafka::KafkaClient::create({{"bootstrap.servers", args.bootstrap},
                                                       {"group.id", args.group},
                                                       {"queued.min.messages", args.queued_min_messages},
                                                       {"log_level", "3"}});
  auto store = std::make_shared<processor::kafka::KafkaOffsetStore>(client);
  // Periodic commits every 5 s: the peer's commit interval (PERIODIC_CONSUMER_ASYNCHRONOUS).
  processor::kafka::OffsetManager manager(
      args.group, nullptr, store, processor::kafka::OffsetCommitStrategy::periodic(std::chrono::seconds(5)),
      processor::kafka::OffsetManagerOptions{
          std::make_shared<processor::kafka::KafkaBrokerMetadata>(client)});
  processor::kafka::ParallelConsumerOptions options;
  options.consumer.topics = {args.topic};
  options.max_concurrency = args.max_concurrency;
  options.ordering = args.ordering == "partition"   ? processor::kafka::ProcessingOrder::Partition
                     : args.ordering == "unordered" ? processor::kafka::ProcessingOrder::Unordered
                                                    : processor::kafka::ProcessingOrder::Key;
  options.drain_timeout = std::chrono::seconds(1);
  RunClock clock(args.records);
  const auto work = std::chrono::milliseconds(args.work_ms);
  processor::kafka::ParallelConsumer consumer(
      client, manager, options, [&](const processor::kafka::ConsumedRecord& record) {
        clock.started();
        if (args.slow() && record.partition == args.slow_partition && record.offset == args.slow_offset) {
          clock.slow(args.slow_seconds);
        } else if (args.work_ms > 0) {
          std::this_thread::sleep_for(work);
        }
        clock.finished();
      });
  const auto deadline = begun + run_deadline(args);
  while (!clock.complete()) {
    if (Clock::now() > deadline)
      throw std::runtime_error("ours: timed out after " + std::to_string(consumer.stats().processed) +
                               " records");
    consumer.poll();
  }
  // Diagnostics: what the consumer fetched, how often it paused partitions, its peak buffer.
  const processor::kafka::ParallelConsumerStats stats = consumer.stats();
  const std::string extra = ",\"fetched\":" + std::to_string(stats.consumer.records) +
                            ",\"partition_pauses\":" + std::to_string(stats.partition_pauses) +
                            ",\"peak_buffered_bytes\":" + std::to_string(stats.peak_buffered_bytes);
  std::printf("RUN %s\n", clock.json(args, begun, extra).c_str());
  std::fflush(stdout);
  clock.release();
  consumer.close();
}

// The raw loop: subscribe and rd_kafka_consumer_poll (100 ms while idle, 0 while records come,
// as bench_e2e's anchor), automatic commits and offset store, nothing per record but the count.
inline void child_raw(const ChildArgs& args) {
  const auto begun = Clock::now();
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::pair<const char*, std::string> properties[] = {{"bootstrap.servers", args.bootstrap},
                                                            {"group.id", args.group},
                                                            {"enable.auto.commit", "true"},
                                                            {"auto.offset.reset", "earliest"},
                                                            {"queued.min.messages", args.queued_min_messages},
                                                            {"log_level", "3"}};
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string(name) + ": " + error);
    }
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (rk == nullptr) throw std::runtime_error(error);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, args.topic.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_subscribe(rk, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  RunClock clock(args.records);
  const auto deadline = begun + run_deadline(args);
  int timeout_ms = 100;
  while (!clock.complete()) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(rk, timeout_ms);
    if (message == nullptr) {
      timeout_ms = 100;
      if (Clock::now() > deadline) throw std::runtime_error("raw loop: timed out");
      continue;
    }
    timeout_ms = 0;
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      clock.started();
      clock.finished();
    }
    rd_kafka_message_destroy(message);
  }
  std::printf("RUN %s\n", clock.json(args, begun).c_str());
  std::fflush(stdout);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

inline int child_main(const std::map<std::string, std::string>& options) {
  processor::set_log_level(processor::LogLevel::Warning);
  ChildArgs args;
  args.mode = options.at("child");
  args.bootstrap = options.at("bootstrap");
  args.topic = options.at("topic");
  args.group = options.at("group");
  args.records = std::stoll(options.at("records"));
  if (options.count("max-concurrency")) args.max_concurrency = std::stoi(options.at("max-concurrency"));
  if (options.count("work-ms")) args.work_ms = std::stoi(options.at("work-ms"));
  if (options.count("ordering")) args.ordering = options.at("ordering");
  if (options.count("queued-min-messages")) args.queued_min_messages = options.at("queued-min-messages");
  if (options.count("slow-seconds")) {
    args.slow_partition = std::stoi(options.at("slow-partition"));
    args.slow_offset = std::stoll(options.at("slow-offset"));
    args.slow_seconds = std::stoi(options.at("slow-seconds"));
  }
  if (args.mode == "ours") {
    child_ours(args);
  } else if (args.mode == "raw") {
    child_raw(args);
  } else {
    throw std::invalid_argument("--child " + args.mode + ": expected ours or raw");
  }
  return 0;
}

}  // namespace bench::parallel
