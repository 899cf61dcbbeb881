#include "processor/streams/stream_processor.hpp"

#include <filesystem>
#include <random>
#include <set>

#include "common/log_internal.hpp"
#include "kafka/group/static_member.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "streams/changelog_topics.hpp"
#include "streams/required_permissions.hpp"
#include "streams/state_keys.hpp"
#include "streams/stream_processor_impl.hpp"

namespace processor::streams {

std::string changelog_topic(std::string_view application_id, std::string_view store) {
  std::string topic;
  topic.reserve(application_id.size() + store.size() + 11);
  topic.append(application_id).append("-").append(store).append("-changelog");
  return topic;
}

namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw StateError(ErrorKind::InvalidArgument, message);
}

void validate(const StreamProcessorOptions& options) {
  require(!options.application_id.empty(), "StreamProcessor needs an application_id");
  kafka::validate_topic(options.application_id);
  require(!options.input_topic.empty(), "StreamProcessor needs an input_topic");
  kafka::validate_topic(options.input_topic);
  require(!options.state_dir.empty(), "StreamProcessor needs a state_dir");
  kafka::internal::require_properties(options.properties, {"bootstrap.servers"}, "StreamProcessor");
  require(options.commit_interval.count() > 0, "invalid commit_interval " +
                                                   std::to_string(options.commit_interval.count()) +
                                                   "ms: it must be positive");
  require(options.transaction_timeout.count() > 0, "invalid transaction_timeout " +
                                                       std::to_string(options.transaction_timeout.count()) +
                                                       "ms: it must be positive");
  require(options.request_timeout.count() > 0, "invalid request_timeout " +
                                                   std::to_string(options.request_timeout.count()) +
                                                   "ms: it must be positive");
  require(options.num_standby_replicas >= 0, "invalid num_standby_replicas " +
                                                 std::to_string(options.num_standby_replicas) +
                                                 ": it must be 0 or more");
  kafka::validate(options.failure, "StreamProcessorOptions::failure");
  std::set<std::string> seen;
  for (const auto& store : options.stores) {
    require(!store.empty(), "invalid store name '': it must not be empty");
    try {
      kafka::validate_topic(store);
      kafka::validate_topic(changelog_topic(options.application_id, store));
    } catch (const StateError& error) {
      throw StateError(ErrorKind::InvalidArgument, "invalid store name '" + store +
                                                       "': its changelog topic name would be invalid (" +
                                                       error.what() + ")");
    }
    require(seen.insert(store).second, "store '" + store + "' is listed twice");
  }
  const std::pair<const char*, const kafka::KafkaProperties*> maps[] = {
      {"properties", &options.properties},
      {"consumer_properties", &options.consumer_properties},
      {"producer_properties", &options.producer_properties},
      {"restore_consumer_properties", &options.restore_consumer_properties}};
  for (const auto& [field, map] : maps) {
    for (const char* reserved : {"group.id", "transactional.id", "isolation.level", "enable.auto.commit"}) {
      require(map->count(reserved) == 0, std::string("property '") + reserved + "' (in " + field +
                                             ") is set by the StreamProcessor itself; remove it");
    }
  }
}

// A random 16-hex-digit id, kept in the state directory.
std::string instance_id_of(state::StateBackend& db) {
  if (auto stored = db.get(internal::kInstanceIdKey)) return *stored;
  std::random_device random;
  const std::uint64_t bits = (static_cast<std::uint64_t>(random()) << 32) ^ random();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  db.put(internal::kInstanceIdKey, text);
  return text;
}

}  // namespace

// An admin client joins no group: the group's own settings stay with the consumer.
kafka::KafkaProperties StreamProcessor::Impl::admin_properties() const {
  return kafka::internal::admin_properties_of(
      kafka::internal::properties_for(RD_KAFKA_CONSUMER, options.properties, {}));
}

void StreamProcessor::Impl::open() {
  validate(options);
  for (const auto& store : options.stores)
    changelogs.push_back(changelog_topic(options.application_id, store));
  // What the principal may do, before anything else: a secured cluster's missing ACL (or its
  // refusal of the client) leaves the state directory untouched.
  internal::check_permissions(admin_properties(), options.application_id, options.input_topic, changelogs,
                              options.request_timeout, options.failure.dead_letter_topic);
  const bool state_dir_existed = std::filesystem::exists(options.state_dir);
  try {
    open_state_and_clients();
  } catch (...) {
    // A refusal found only now (a transactional.id the principal may not use) leaves no state
    // directory behind that was not there.
    standby_restorer.reset();
    restorer.reset();
    db.reset();
    std::error_code ignored;
    if (!state_dir_existed) std::filesystem::remove_all(options.state_dir, ignored);
    throw;
  }
}

void StreamProcessor::Impl::open_state_and_clients() {
  // The state directory first: when it is locked, nothing is created in Kafka either.
  db = std::make_unique<state::RocksDbStateBackend>(options.state_dir);
  const std::string instance = options.instance_id.empty() ? instance_id_of(*db) : options.instance_id;
  previous_member_id = db->get(internal::kMemberIdKey).value_or("");
  stored_member_id = previous_member_id;

  kafka::KafkaProperties consumer_config =
      kafka::internal::properties_for(RD_KAFKA_CONSUMER, options.properties, options.consumer_properties);
  consumer_config["group.id"] = options.application_id;
  if (exactly_once()) {
    transactional_id = options.application_id + "-" + instance;
    // The group's description then tells which transactional.ids belong to live members: a
    // departed member's open transaction is ended as soon as it blocks a restoration.
    if (consumer_config.count("client.id") == 0) {
      consumer_config["client.id"] = transactional_id;
      members_named_by_transactional_id = true;
    }
  }
  consumer_config["isolation.level"] = "read_committed";
  consumer_config["enable.auto.commit"] = "false";
  consumer_config["enable.auto.offset.store"] = "false";
  consumer_config["enable.partition.eof"] = "false";
  consumer_config["allow.auto.create.topics"] = "false";
  // Where a position has no place in the log is decided by cause (options.out_of_range).
  consumer_config["auto.offset.reset"] = "error";
  kafka::internal::ClientCallbacks consumer_callbacks;
  consumer_callbacks.opaque = this;
  consumer_callbacks.rebalance = rebalance_callback;
  consumer = kafka::internal::create_client(RD_KAFKA_CONSUMER, consumer_config, consumer_callbacks,
                                            "the stream processor's consumer");
  buffer = std::make_unique<kafka::internal::FetchBuffer>(consumer.get());

  producer_config =
      kafka::internal::properties_for(RD_KAFKA_PRODUCER, options.properties, options.producer_properties);
  producer_config["enable.idempotence"] = "true";
  if (exactly_once()) {
    producer_config["transactional.id"] = transactional_id;
    producer_config["transaction.timeout.ms"] = std::to_string(options.transaction_timeout.count());
  }
  // The client before the changelog topics are checked, its transactions after: librdkafka looks
  // for the transaction coordinator only once a broker connection is up, else again on a 500 ms
  // timer, and a client created just before init_transactions() had none up yet (a first start
  // spent 0.5-0.6 s there, 0.1 s now; the checks give the connection their 60-100 ms).
  create_producer();
  partitions =
      internal::ensure_changelog_topics(consumer.get(), options.input_topic, changelogs,
                                        options.changelog_replication_factor, options.request_timeout);
  delivered.assign(options.stores.size(),
                   std::vector<std::int64_t>(static_cast<std::size_t>(partitions), -1));

  init_producer();

  kafka::KafkaProperties restore_config = kafka::internal::properties_for(
      RD_KAFKA_CONSUMER, options.properties, options.restore_consumer_properties);
  restore_config["group.id"] = options.application_id;
  // Completed restorations are timed from their last report, then handed to the user's callback.
  auto on_restore_progress = [this, user = options.on_restore_progress](const RestoreProgress& progress) {
    if (progress.done)
      count([&](StreamProcessorStats& stats) { stats.restore_duration.record(progress.elapsed); });
    if (user) user(progress);
  };
  restorer = std::make_unique<internal::ChangelogRestorer>(restore_config, std::move(on_restore_progress),
                                                           options.restore_progress_interval,
                                                           options.request_timeout);
  if (exactly_once() || options.num_standby_replicas > 0) {
    admin = kafka::GroupAdmin::create(admin_properties(), std::chrono::seconds(5));
  }
  if (options.num_standby_replicas > 0) {
    standby_restorer = std::make_unique<internal::ChangelogRestorer>(
        restore_config, nullptr, options.restore_progress_interval, options.request_timeout,
        internal::ChangelogRestorer::Mode::Follow);
  }

  kafka::internal::await_static_member_release(consumer_config, kafka::internal::kStaticMemberReleaseLimit);
  auto topics = kafka::internal::make_partition_list(1);
  rd_kafka_topic_partition_list_add(topics.get(), options.input_topic.c_str(), RD_KAFKA_PARTITION_UA);
  if (const auto error = rd_kafka_subscribe(consumer.get(), topics.get());
      error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw kafka::internal::kafka_error(error, "subscribing to " + options.input_topic);
  }
  processor::internal::log(
      LogLevel::Info, "streams", "application '", options.application_id, "' started: input ",
      options.input_topic, " (", partitions, " partitions), ", options.stores.size(), " stores, ",
      exactly_once() ? "exactly-once as '" + transactional_id + "'" : std::string("at-least-once"),
      ", state in ", options.state_dir.string());
}

StreamProcessor::StreamProcessor(StreamProcessorOptions options, RecordFunction function)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(function))) {
  if (!impl_->function)
    throw StateError(ErrorKind::InvalidArgument, "StreamProcessor needs a record function");
  impl_->open();
}

StreamProcessor::~StreamProcessor() {
  try {
    close();
  } catch (const std::exception& error) {
    processor::internal::log(LogLevel::Error, "streams",
                             "closing the stream processor failed: ", error.what());
  }
}

std::size_t StreamProcessor::poll() { return impl_->poll(); }

void StreamProcessor::run() {
  while (!impl_->stop_requested.load(std::memory_order_relaxed)) impl_->poll();
  impl_->stop_requested.store(false, std::memory_order_relaxed);
  impl_->commit();
}

void StreamProcessor::stop() noexcept { impl_->stop_requested.store(true, std::memory_order_relaxed); }

bool StreamProcessor::commit() {
  if (impl_->broken) std::rethrow_exception(impl_->broken);
  return impl_->commit();
}

void StreamProcessor::close() {
  if (!impl_ || impl_->closed) return;
  Impl& impl = *impl_;
  impl.closed = true;
  std::exception_ptr failure;
  if (!impl.broken && impl.consumer) {
    try {
      impl.commit();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  impl.buffer.reset();  // its records are neither processed nor committed now
  if (impl.consumer) {
    // Leaves the group: the revoke callback commits nothing more (or aborts) and drops the tasks.
    kafka::internal::close_consumer(impl.consumer.get(),
                                    kafka::internal::ClientCallbacks{&impl, Impl::rebalance_callback},
                                    3 * impl.options.request_timeout);
    impl.callback_error = nullptr;
  }
  if (impl.transaction_open && !impl.broken) {
    try {
      impl.abort("closing");
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  impl.tasks.clear();
  impl.restorer.reset();
  impl.standby_restorer.reset();
  impl.standbys.clear();
  impl.admin.reset();
  if (impl.producer)
    rd_kafka_flush(impl.producer.get(), kafka::internal::to_timeout_ms(impl.options.request_timeout));
  impl.producer.reset();
  impl.unanswered_commits.forget();
  impl.consumer.reset();
  impl.db.reset();
  if (failure) std::rethrow_exception(failure);
}

std::vector<kafka::TopicPartition> StreamProcessor::active_partitions() const {
  std::vector<kafka::TopicPartition> out;
  for (const auto& [partition, task] : impl_->tasks) {
    if (task.active) out.emplace_back(impl_->options.input_topic, partition);
  }
  return out;
}

std::vector<kafka::TopicPartition> StreamProcessor::restoring_partitions() const {
  std::vector<kafka::TopicPartition> out;
  for (const auto& [partition, task] : impl_->tasks) {
    if (!task.active) out.emplace_back(impl_->options.input_topic, partition);
  }
  return out;
}

StreamProcessorStats StreamProcessor::stats() const {
  processor::detail::MutexLock lock(impl_->stats_mutex);
  return impl_->counters;
}

const std::string& StreamProcessor::transactional_id() const noexcept { return impl_->transactional_id; }

}  // namespace processor::streams
