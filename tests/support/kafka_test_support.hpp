#pragma once
// Kafka fixtures for the integration tier: librdkafka's mock cluster (in-process, for fault
// injection) and the real broker started by scripts/kafka/broker.sh (KAFKA_BOOTSTRAP).

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "processor/kafka.hpp"

namespace processor::testing {

inline std::string unique_name(const std::string& base) {
  static std::atomic<int> counter{0};
  return base + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000);
}

// A librdkafka producer; produce() waits until every message is acknowledged.
class Producer {
 public:
  explicit Producer(const std::string& bootstrap, kafka::KafkaProperties extra = {}) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char error[512];
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "linger.ms", "5");
    for (const auto& [name, value] : extra) set(conf, name, value);
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (rk_ == nullptr) throw std::runtime_error(error);
  }
  ~Producer() {
    rd_kafka_flush(rk_, 10'000);
    rd_kafka_destroy(rk_);
  }
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Produces `count` records "key-<i>"/"value-<i>" to the partition and waits for them.
  void produce(const std::string& topic, std::int32_t partition, int count, int first_index = 0) {
    for (int i = first_index; i < first_index + count; ++i) {
      send(topic, partition, "key-" + std::to_string(i), "value-" + std::to_string(i));
    }
    flush();
  }

  // Queues one record (waiting while librdkafka's queue is full); flush() waits for it.
  void send(const std::string& topic, std::int32_t partition, const std::string& key,
            const std::string& value) {
    for (;;) {
      const rd_kafka_resp_err_t error =
          rd_kafka_producev(rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                            RD_KAFKA_V_KEY(key.data(), key.size()),
                            RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (error == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk_, 10);
        continue;
      }
      if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(rd_kafka_err2str(error));
      return;
    }
  }

  // Waits until every queued record is acknowledged.
  void flush(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    if (rd_kafka_flush(rk_, static_cast<int>(timeout.count())) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("flush timed out");
    }
  }

  rd_kafka_t* handle() const { return rk_; }

 private:
  static void set(rd_kafka_conf_t* conf, const std::string& name, const std::string& value) {
    char error[512];
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      throw std::runtime_error(error);
    }
  }
  rd_kafka_t* rk_ = nullptr;
};

// Creates `topic` with `partitions` partitions on a real broker (Admin API) and waits for it; the
// replication factor is the cluster's default (1 on broker.sh's single node, 3 on its clusters).
// `configs` are topic configs, e.g. {{"retention.ms", "-1"}} for records stamped long ago (the
// broker's retention check would delete them while a test runs); `client` the client's own
// properties (a secured cluster's).
inline void create_topic(const std::string& bootstrap, const std::string& topic, int partitions,
                         const std::vector<std::pair<std::string, std::string>>& configs = {},
                         const kafka::KafkaProperties& client = {}) {
  Producer admin(bootstrap, client);
  char error[512];
  rd_kafka_NewTopic_t* request = rd_kafka_NewTopic_new(topic.c_str(), partitions, -1, error, sizeof error);
  if (request == nullptr) throw std::runtime_error(error);
  for (const auto& [name, value] : configs) {
    if (rd_kafka_NewTopic_set_config(request, name.c_str(), value.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_NewTopic_destroy(request);
      throw std::runtime_error("cannot set topic config " + name);
    }
  }
  rd_kafka_queue_t* queue = rd_kafka_queue_new(admin.handle());
  rd_kafka_CreateTopics(admin.handle(), &request, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30'000);
  std::string failure;
  if (event == nullptr) {
    failure = "CreateTopics timed out";
  } else {
    std::size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      failure = rd_kafka_event_error_string(event);
    } else if (count == 1 && rd_kafka_topic_result_error(results[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      failure = rd_kafka_topic_result_error_string(results[0]);
    }
    rd_kafka_event_destroy(event);
  }
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(request);
  if (!failure.empty()) throw std::runtime_error("cannot create topic " + topic + ": " + failure);
  // Wait until the broker serves metadata for every partition...
  bool listed = false;
  for (int attempt = 0; attempt < 100 && !listed; ++attempt) {
    const rd_kafka_metadata_t* metadata = nullptr;
    rd_kafka_topic_t* handle = rd_kafka_topic_new(admin.handle(), topic.c_str(), nullptr);
    listed = rd_kafka_metadata(admin.handle(), 0, handle, &metadata, 5'000) == RD_KAFKA_RESP_ERR_NO_ERROR &&
             metadata->topic_cnt == 1 && metadata->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
             metadata->topics[0].partition_cnt == partitions;
    if (metadata != nullptr) rd_kafka_metadata_destroy(metadata);
    rd_kafka_topic_destroy(handle);
    if (!listed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!listed) throw std::runtime_error("topic " + topic + " did not become available");
  // ...and answers a watermark query (ListOffsets) for each, the query KafkaConsumer makes for
  // every partition it is assigned: the metadata can name the broker as leader tens of
  // milliseconds before it serves the partition (NOT_LEADER_FOR_PARTITION until then).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int p = 0; p < partitions;) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    const rd_kafka_resp_err_t queried =
        rd_kafka_query_watermark_offsets(admin.handle(), topic.c_str(), p, &low, &high, 5'000);
    if (queried == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++p;
    } else if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("topic " + topic + " partition " + std::to_string(p) +
                               " not served after 60 s: " + rd_kafka_err2str(queried));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

// librdkafka's in-process mock cluster, reachable on loopback.
class MockCluster {
 public:
  explicit MockCluster(int brokers = 3) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char error[512];
    rd_kafka_conf_set(conf, "log_level", "0", error, sizeof error);
    owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (owner_ == nullptr) throw std::runtime_error(error);
    cluster_ = rd_kafka_mock_cluster_new(owner_, brokers);
    if (cluster_ == nullptr) throw std::runtime_error("rd_kafka_mock_cluster_new failed");
    bootstrap_ = rd_kafka_mock_cluster_bootstraps(cluster_);
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(owner_);
  }
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  void create_topic(const std::string& topic, int partitions) {
    if (rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("cannot create mock topic " + topic);
    }
  }
  const std::string& bootstrap() const { return bootstrap_; }
  rd_kafka_mock_cluster_t* get() const { return cluster_; }

 private:
  rd_kafka_t* owner_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::string bootstrap_;
};

// Properties of a consumer-group client for tests: fast joins and short timeouts. `assignment`
// names a classic group's assignor ("range": eager, "cooperative-sticky": cooperative), or is
// "consumer" for Kafka 4's consumer group protocol (KIP-848), whose assignor, session timeout and
// heartbeat interval are the broker's.
inline kafka::KafkaProperties group_properties(const std::string& bootstrap, const std::string& group,
                                               const std::string& assignment = "cooperative-sticky") {
  if (assignment == "consumer") {
    return {{"bootstrap.servers", bootstrap},
            {"group.id", group},
            {"group.protocol", "consumer"},
            {"topic.metadata.refresh.interval.ms", "1000"},
            {"log_level", "3"}};
  }
  return {{"bootstrap.servers", bootstrap},
          {"group.id", group},
          {"partition.assignment.strategy", assignment},
          {"session.timeout.ms", "6000"},
          {"heartbeat.interval.ms", "500"},
          {"topic.metadata.refresh.interval.ms", "1000"},
          {"log_level", "3"}};
}

// Store retries short enough for tests that inject failures: a fault that outlasts
// `retry_deadline` surfaces as the store's StateError.
inline kafka::KafkaOffsetStoreOptions fast_retries(
    std::chrono::milliseconds request_timeout = std::chrono::seconds(5),
    std::chrono::milliseconds retry_deadline = std::chrono::seconds(20)) {
  kafka::KafkaOffsetStoreOptions options;
  options.request_timeout = request_timeout;
  options.retry_backoff = std::chrono::milliseconds(20);
  options.retry_backoff_max = std::chrono::milliseconds(200);
  options.retry_deadline = retry_deadline;
  return options;
}

// One group member wired as an application would: client, Kafka offset store, manager with
// broker metadata, and a consumer of `topic`.
struct GroupMember {
  GroupMember(const std::string& bootstrap, const std::string& group, const std::string& topic,
              const std::string& assignment,
              kafka::OffsetCommitStrategy strategy = kafka::OffsetCommitStrategy::manual(),
              const kafka::KafkaProperties& extra = {})
      : GroupMember(bootstrap, group, options_for(topic), assignment, strategy, extra) {}
  // The same with the consumer's options (topics included) given.
  GroupMember(const std::string& bootstrap, const std::string& group,
              const kafka::KafkaConsumerOptions& options, const std::string& assignment,
              kafka::OffsetCommitStrategy strategy = kafka::OffsetCommitStrategy::manual(),
              const kafka::KafkaProperties& extra = {})
      : client(make_client(bootstrap, group, assignment, extra)),
        store(std::make_shared<kafka::KafkaOffsetStore>(client, fast_retries())),
        manager(group, nullptr, store, strategy,
                kafka::OffsetManagerOptions{std::make_shared<kafka::KafkaBrokerMetadata>(client),
                                            std::chrono::milliseconds(100)}),
        consumer(client, manager, options) {}

  static std::shared_ptr<kafka::KafkaClient> make_client(const std::string& bootstrap,
                                                         const std::string& group,
                                                         const std::string& assignment,
                                                         const kafka::KafkaProperties& extra);
  static kafka::KafkaConsumerOptions options_for(const std::string& topic) {
    kafka::KafkaConsumerOptions options;
    options.topics = {topic};
    options.poll_timeout = std::chrono::milliseconds(50);
    return options;
  }

  std::shared_ptr<kafka::KafkaClient> client;
  std::shared_ptr<kafka::KafkaOffsetStore> store;
  kafka::OffsetManager manager;
  kafka::KafkaConsumer consumer;
};

// Polls `consumer` until `done` holds or `timeout` passes; returns whether it held.
inline bool poll_until(kafka::KafkaConsumer& consumer, const kafka::KafkaConsumer::RecordHandler& handler,
                       const std::function<bool()>& done,
                       std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    consumer.poll(handler);
    if (done()) return true;
  }
  return done();
}

// A group member takes over part of a topic while another consumes it: member `a` of
// `assignment` handles 100 of 4 partitions x 200 records, then `b` joins, and both poll until
// every record was handled or 60 s pass. Until `b` has partitions, `a` handles one record per
// poll, so that records remain to hand over.
struct HandOver {
  bool first_started = false;                              // `a` handled its first 100 records
  std::map<std::pair<int, std::int64_t>, int> times_seen;  // (partition, offset) -> times handled
  kafka::ConsumerStats a;
  kafka::ConsumerStats b;
};

inline HandOver hand_over(const std::string& bootstrap, const std::string& group, const std::string& topic,
                          const std::string& assignment) {
  Producer producer(bootstrap);
  for (int p = 0; p < 4; ++p) producer.produce(topic, p, 200);
  HandOver out;
  auto record = [&](const kafka::ConsumedRecord& r) { ++out.times_seen[{r.partition, r.offset}]; };

  GroupMember a(bootstrap, group, topic, assignment);
  out.first_started = poll_until(
      a.consumer,
      [&](const kafka::ConsumedRecord& r) {
        record(r);
        if (out.times_seen.size() == 100) a.consumer.stop();
      },
      [&] { return out.times_seen.size() >= 100; });
  if (!out.first_started) return out;
  GroupMember b(bootstrap, group, topic, assignment);
  auto slow_record = [&](const kafka::ConsumedRecord& r) {
    record(r);
    if (b.consumer.stats().assignments == 0) a.consumer.stop();
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (out.times_seen.size() < 800 && std::chrono::steady_clock::now() < deadline) {
    a.consumer.poll(slow_record);
    b.consumer.poll(record);
  }
  out.a = a.consumer.stats();
  out.b = b.consumer.stats();
  return out;
}

inline std::shared_ptr<kafka::KafkaClient> GroupMember::make_client(const std::string& bootstrap,
                                                                    const std::string& group,
                                                                    const std::string& assignment,
                                                                    const kafka::KafkaProperties& extra) {
  auto properties = group_properties(bootstrap, group, assignment);
  for (const auto& [name, value] : extra) properties[name] = value;
  return kafka::KafkaClient::create(properties);
}

// The three ways a group rebalances, as `assignment` values of group_properties(), and their
// names for parameterized tests.
inline const std::vector<std::string>& group_protocols() {
  static const std::vector<std::string> protocols{"range", "cooperative-sticky", "consumer"};
  return protocols;
}
inline std::string group_protocol_name(const std::string& assignment) {
  if (assignment == "range") return "Eager";
  if (assignment == "cooperative-sticky") return "Cooperative";
  return "ConsumerProtocol";
}

// The real broker's bootstrap address, or empty when none was started.
inline std::string real_broker() {
  const char* bootstrap = std::getenv("KAFKA_BOOTSTRAP");
  return bootstrap == nullptr ? std::string() : std::string(bootstrap);
}

}  // namespace processor::testing
