#include "processor/streams/stream_processor.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <set>

#include "common/log_internal.hpp"
#include "kafka/group/rebalance.hpp"
#include "kafka/group/start_offsets.hpp"
#include "kafka/producer/transactions.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "kafka/rdkafka/retry.hpp"
#include "streams/changelog_topics.hpp"
#include "streams/required_permissions.hpp"
#include "streams/standby_placement.hpp"
#include "streams/state_keys.hpp"
#include "streams/stream_processor_impl.hpp"

namespace processor::streams {

using kafka::internal::RdPtr;

std::string changelog_topic(std::string_view application_id, std::string_view store) {
  std::string topic;
  topic.reserve(application_id.size() + store.size() + 11);
  topic.append(application_id).append("-").append(store).append("-changelog");
  return topic;
}

namespace {

using Clock = std::chrono::steady_clock;

// How many records one poll() processes at most before it checks the commit and returns.
constexpr std::size_t kMaxRecordsPerPoll = 10'000;

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

// Where a task starts, for the log: an offset, or librdkafka's logical offset in words.
std::string describe_start(std::int64_t start) {
  if (start == RD_KAFKA_OFFSET_BEGINNING) return "the log start (no committed offset)";
  if (start == RD_KAFKA_OFFSET_END) return "the log end (no committed offset)";
  return "offset " + std::to_string(start);
}

// How long a transaction may block a changelog before the processor fences the transactional.id
// that last committed the partition: far longer than a live member's commit takes to write its
// markers, far shorter than the transaction timeout the coordinator would otherwise wait for.
constexpr std::chrono::seconds kFenceAfter{2};
// How often the standby placement is read again from the group's description (and after each
// rebalance).
constexpr std::chrono::seconds kPlacementInterval{2};

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

// librdkafka calls this from inside rd_kafka_consumer_poll(): no exception may cross it. The
// assignment is applied whatever happens, so that librdkafka's state stays consistent.
void rebalance_callback(rd_kafka_t* rk, rd_kafka_resp_err_t event,
                        rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  auto* impl = static_cast<StreamProcessor::Impl*>(opaque);
  impl->rebalance_applied = false;
  try {
    impl->on_rebalance(event, partitions);
    return;
  } catch (...) {
    if (!impl->callback_error) impl->callback_error = std::current_exception();
  }
  if (!impl->rebalance_applied) kafka::internal::apply_rebalance_noexcept(rk, event, partitions);
}

}  // namespace

// An admin client joins no group: the group's own settings stay with the consumer.
kafka::KafkaProperties StreamProcessor::Impl::admin_properties() const {
  kafka::KafkaProperties config = kafka::internal::properties_for(RD_KAFKA_CONSUMER, options.properties, {});
  for (const char* group_only :
       {"group.protocol", "group.remote.assignor", "group.instance.id", "partition.assignment.strategy",
        "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"}) {
    config.erase(group_only);
  }
  return config;
}

void StreamProcessor::Impl::open() {
  validate(options);
  for (const auto& store : options.stores)
    changelogs.push_back(changelog_topic(options.application_id, store));
  // What the principal may do, before anything else: a secured cluster's missing ACL (or its
  // refusal of the client) leaves the state directory untouched.
  internal::check_permissions(admin_properties(), options.application_id, options.input_topic, changelogs,
                              options.request_timeout);
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
  consumer_config["auto.offset.reset"] = options.no_offset == kafka::OutOfRangeAction::Earliest ? "earliest"
                                         : options.no_offset == kafka::OutOfRangeAction::Latest ? "latest"
                                                                                                : "error";
  kafka::internal::ClientCallbacks consumer_callbacks;
  consumer_callbacks.opaque = this;
  consumer_callbacks.rebalance = rebalance_callback;
  consumer = kafka::internal::create_client(RD_KAFKA_CONSUMER, consumer_config, consumer_callbacks,
                                            "the stream processor's consumer");

  partitions =
      internal::ensure_changelog_topics(consumer.get(), options.input_topic, changelogs,
                                        options.changelog_replication_factor, options.request_timeout);
  delivered.assign(options.stores.size(),
                   std::vector<std::int64_t>(static_cast<std::size_t>(partitions), -1));

  producer_config =
      kafka::internal::properties_for(RD_KAFKA_PRODUCER, options.properties, options.producer_properties);
  producer_config["enable.idempotence"] = "true";
  if (exactly_once()) {
    producer_config["transactional.id"] = transactional_id;
    producer_config["transaction.timeout.ms"] = std::to_string(options.transaction_timeout.count());
  }
  start_producer();

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

void StreamProcessor::Impl::on_rebalance(rd_kafka_resp_err_t event, rd_kafka_topic_partition_list_t* list) {
  rd_kafka_t* rk = consumer.get();
  const auto assigned = kafka::internal::from_partition_list(list);
  next_placement = Clock::now();  // the standbys follow the new assignment
  if (event == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    kafka::internal::apply_rebalance(rk, event, list);
    rebalance_applied = true;
    // Nothing is fetched for processing until its stores are restored and it is positioned.
    rd_kafka_pause_partitions(rk, list);
    for (const auto& tp : assigned) add_task(tp.partition);
    count([&](StreamProcessorStats& stats) { stats.assignments += assigned.size(); });
    return;
  }
  const bool lost = rd_kafka_assignment_lost(rk) != 0;
  try {
    if (broken) {
      // Nothing can commit any more (the producer failed for good); the transaction dies with it.
      for (auto& [partition, task] : tasks) {
        for (auto& store : task.stores) store->discard();
      }
      transaction_open = false;
    } else if (lost) {
      // The group moved on: this member's offsets would be refused, its transaction is void.
      abort("partitions lost");
    } else {
      // The open transaction covers these partitions' records: it commits while this member
      // still owns them (or aborts, and their next owner processes them again).
      commit();
    }
  } catch (...) {
    for (const auto& tp : assigned) remove_task(tp.partition);
    kafka::internal::apply_rebalance_noexcept(rk, event, list);
    rebalance_applied = true;
    throw;
  }
  for (const auto& tp : assigned) remove_task(tp.partition);
  count([&](StreamProcessorStats& stats) { (lost ? stats.lost : stats.revocations) += assigned.size(); });
  rebalance_applied = true;
  kafka::internal::apply_rebalance(rk, event, list);
}

std::vector<std::unique_ptr<internal::StorePartition>> StreamProcessor::Impl::open_stores(
    std::int32_t partition) {
  std::vector<std::unique_ptr<internal::StorePartition>> stores;
  for (const auto& name : options.stores) {
    try {
      stores.push_back(std::make_unique<internal::StorePartition>(*db, name, partition));
    } catch (const StateError& error) {
      if (error.kind() != ErrorKind::Corruption) throw;
      // The local state is a cache of the changelog: a damaged position means restore it all.
      processor::internal::log(LogLevel::Warning, "streams", error.what(), ": restoring from the changelog");
      db->remove(internal::position_key(name, partition));
      stores.push_back(std::make_unique<internal::StorePartition>(*db, name, partition));
    }
  }
  return stores;
}

void StreamProcessor::Impl::add_task(std::int32_t partition) {
  if (partition >= partitions) {
    throw StateError(ErrorKind::InvalidArgument, "input topic '" + options.input_topic +
                                                     "' now has partition " + std::to_string(partition) +
                                                     " but its changelogs have " +
                                                     std::to_string(partitions) + " partitions");
  }
  if (standbys.count(partition) != 0) {
    // Its warm copy becomes the task's local state: the restoration replays only the tail.
    drop_standby(partition);
    processor::internal::log(LogLevel::Info, "streams", input_key(partition),
                             " was kept warm by a standby here: restoring only what it had not read");
    count([](StreamProcessorStats& stats) { ++stats.standbys_promoted; });
  }
  fenced_for.erase(partition);
  Task& task = tasks[partition];
  task = Task{};
  task.partition = partition;
  task.stores = open_stores(partition);
  task.restoring = task.stores.size();
  for (std::size_t i = 0; i < task.stores.size(); ++i) {
    if (restorer->add(*task.stores[i], changelogs[i])) --task.restoring;
  }
  // Activated from the polling loop (activate_restored()), never inside this callback: librdkafka
  // refuses to seek a partition that a revoke in the same rebalance is still stopping.
}

void StreamProcessor::Impl::remove_task(std::int32_t partition) {
  restorer->remove(partition);
  tasks.erase(partition);
  fenced_for.erase(partition);
}

void StreamProcessor::Impl::drop_standby(std::int32_t partition) {
  standby_restorer->remove(partition);  // loads what it read first
  standbys.erase(partition);
}

void StreamProcessor::Impl::maintain_standbys() {
  if (!standby_restorer) return;
  if (Clock::now() >= next_placement) {
    next_placement = Clock::now() + kPlacementInterval;
    place_standbys();
  }
  if (!standby_restorer->idle()) {
    // A standby is a cache: its failure is logged and costs the warm copy, never the processing.
    try {
      standby_restorer->poll(std::chrono::milliseconds(0));
    } catch (const StateError& error) {
      processor::internal::log(LogLevel::Warning, "streams", "standby replicas failed (", error.what(),
                               "): dropped, placed again in ", kPlacementInterval.count(), " s");
      while (!standbys.empty()) drop_standby(standbys.begin()->first);
    }
  }
  const std::uint64_t held = standbys.size();
  const std::uint64_t records = standby_restorer->counters().records;
  count([&](StreamProcessorStats& stats) {
    stats.standby_partitions = held;
    stats.standby_records = records;
  });
}

void StreamProcessor::Impl::place_standbys() {
  kafka::GroupDescription group;
  try {
    group = admin->describe_groups({options.application_id}).at(0);
  } catch (const StateError& error) {
    processor::internal::log(LogLevel::Debug, "streams",
                             "describing the group for standby placement failed: ", error.what());
    return;
  }
  if (group.state != "Stable") return;  // placed again once the group settles
  char* self_id = rd_kafka_memberid(consumer.get());
  const std::string self = self_id != nullptr ? self_id : "";
  if (self_id != nullptr) rd_kafka_mem_free(consumer.get(), self_id);
  std::vector<internal::MemberPartitions> members;
  std::set<std::int32_t> assigned_here;  // by the group, whether or not the assignment was served yet
  for (const auto& member : group.members) {
    internal::MemberPartitions& entry = members.emplace_back();
    entry.member_id = member.member_id;
    for (const auto& tp : member.assignment) {
      if (tp.topic != options.input_topic) continue;
      entry.partitions.push_back(tp.partition);
      if (member.member_id == self) assigned_here.insert(tp.partition);
    }
  }
  std::set<std::int32_t> wanted = internal::standby_partitions(members, self, options.num_standby_replicas);
  for (const auto& [partition, task] : tasks) wanted.erase(partition);
  for (auto it = standbys.begin(); it != standbys.end();) {
    const std::int32_t partition = it->first;
    ++it;
    // A standby of a partition the group has just given this member stays until the assignment
    // is served: it is then promoted (a failover's warm copy), not dropped a moment before.
    if (wanted.count(partition) == 0 && assigned_here.count(partition) == 0) {
      drop_standby(partition);
      processor::internal::log(LogLevel::Info, "streams", "standby of ", input_key(partition),
                               " dropped (placed elsewhere now)");
    }
  }
  for (const std::int32_t partition : wanted) {
    if (standbys.count(partition) != 0 || partition >= partitions) continue;
    try {
      auto& stores = standbys[partition] = open_stores(partition);
      for (std::size_t i = 0; i < stores.size(); ++i) standby_restorer->add(*stores[i], changelogs[i]);
    } catch (const StateError& error) {
      processor::internal::log(LogLevel::Warning, "streams", "no standby of ", input_key(partition), " (",
                               error.what(), ")");
      drop_standby(partition);
    }
  }
}

void StreamProcessor::Impl::fence_departed_owner(std::int32_t partition) {
  if (!exactly_once() || !admin) {
    fenced_for.insert(partition);
    return;
  }
  // Whether the transactional.id that last committed the partition belongs to a live member: the
  // members' client ids are their transactional.ids when every member is a StreamProcessor of
  // this application that kept the default client.id. Then a departed member's transaction is
  // ended at once and a live member's never (it commits or aborts it itself); otherwise only
  // once it has blocked the restoration for kFenceAfter.
  const auto blocked_for = restorer->blocked(kFenceAfter);
  const bool waited = std::find(blocked_for.begin(), blocked_for.end(), partition) != blocked_for.end();
  if (!waited && Clock::now() < next_fence_look) return;
  next_fence_look = Clock::now() + std::chrono::milliseconds(500);
  std::optional<std::vector<kafka::GroupMember>> members;
  try {
    members = admin->describe_groups({options.application_id}).at(0).members;
  } catch (const StateError& error) {
    processor::internal::log(LogLevel::Debug, "streams", "describing the group failed: ", error.what());
  }
  const std::string prefix = options.application_id + "-";
  const bool ids_known = members && std::all_of(members->begin(), members->end(), [&](const auto& member) {
                           return member.client_id.size() > prefix.size() &&
                                  member.client_id.compare(0, prefix.size(), prefix) == 0;
                         });
  if (!ids_known && !waited) return;  // looked at again on the next poll
  fenced_for.insert(partition);
  std::string owner;
  try {
    for (const auto& committed : admin->committed_offsets(options.application_id)) {
      if (committed.tp.topic == options.input_topic && committed.tp.partition == partition)
        owner = committed.metadata;
    }
  } catch (const StateError& error) {
    processor::internal::log(LogLevel::Warning, "streams", "reading who last committed ", options.input_topic,
                             ":", partition, " failed (", error.what(),
                             "): waiting for the transaction timeout instead");
    return;
  }
  // The metadata is read from Kafka: only an id of this application, not this member's, is fenced.
  const bool printable = std::all_of(owner.begin(), owner.end(), [](char c) { return c > ' ' && c < 127; });
  if (owner.size() <= prefix.size() || owner.size() > 249 || owner.compare(0, prefix.size(), prefix) != 0 ||
      !printable || owner == transactional_id) {
    processor::internal::log(LogLevel::Info, "streams", "a transaction still blocks the changelog of ",
                             input_key(partition),
                             " and no departed member of this application committed it last: waiting for "
                             "the coordinator to abort it (transaction timeout)");
    return;
  }
  if (ids_known && std::any_of(members->begin(), members->end(),
                               [&](const auto& member) { return member.client_id == owner; })) {
    processor::internal::log(LogLevel::Info, "streams", "a transaction of '", owner,
                             "', a live member, blocks the changelog of ", input_key(partition),
                             ": waiting for it to end");
    return;
  }
  processor::internal::log(
      LogLevel::Info, "streams", "a transaction blocks the changelog of ", input_key(partition),
      ids_known ? std::string() : " for " + std::to_string(kFenceAfter.count()) + " s", ": fencing '", owner,
      "' (its last committer, ", ids_known ? "no longer a member" : "a member that departed",
      ") so that the coordinator aborts it");
  try {
    kafka::KafkaProperties config = producer_config;
    config["transactional.id"] = owner;
    auto fencer = kafka::internal::create_client(RD_KAFKA_PRODUCER, config, {}, "the fencing producer");
    kafka::internal::init_transactions(fencer.get(), options.request_timeout, "fencing '" + owner + "'");
  } catch (const StateError& error) {
    processor::internal::log(LogLevel::Warning, "streams", "fencing '", owner, "' failed (", error.what(),
                             "): waiting for the transaction timeout instead");
    return;
  }
  count([](StreamProcessorStats& stats) { ++stats.departed_fenced; });
}

bool StreamProcessor::Impl::activate_restored() {
  bool waiting = false;
  for (auto& [partition, task] : tasks) {
    if (!task.active && task.restoring == 0 && !activate(task)) waiting = true;
  }
  return waiting;
}

bool StreamProcessor::Impl::activate(Task& task) {
  // Read after restoration: every transaction that wrote to this partition's changelogs is
  // decided by now, and librdkafka asks for stable offsets (read_committed), so the committed
  // offset is the one that matches the restored state.
  auto list = kafka::internal::make_partition_list(1);
  rd_kafka_topic_partition_list_add(list.get(), options.input_topic.c_str(), task.partition);
  kafka::internal::read_committed(consumer.get(), list.get(), options.request_timeout,
                                  kafka::internal::RetryPolicy{options.request_timeout});
  std::int64_t start = list->elems[0].offset;
  if (start < 0) {
    if (options.no_offset == kafka::OutOfRangeAction::Error) {
      throw StateError(ErrorKind::Kafka,
                       "no committed offset for " + input_key(task.partition) + " and no_offset is Error");
    }
    start = options.no_offset == kafka::OutOfRangeAction::Latest ? RD_KAFKA_OFFSET_END
                                                                 : RD_KAFKA_OFFSET_BEGINNING;
  }
  try {
    seek(task.partition, start);
  } catch (const StateError& error) {
    if (error.kafka_error_code() != RD_KAFKA_RESP_ERR__STATE) throw;
    processor::internal::log(LogLevel::Debug, "streams", input_key(task.partition),
                             " cannot be positioned yet (", error.what(), "): trying again");
    return false;
  }
  task.rewind_offset = start;
  task.next_offset = -1;
  task.active = true;
  list->elems[0].offset = RD_KAFKA_OFFSET_INVALID;
  rd_kafka_resume_partitions(consumer.get(), list.get());
  processor::internal::log(LogLevel::Info, "streams", input_key(task.partition),
                           " restored; processing from ", describe_start(start));
  return true;
}

void StreamProcessor::Impl::seek(std::int32_t partition, std::int64_t offset) {
  auto list = kafka::internal::make_partition_list(1);
  rd_kafka_topic_partition_list_add(list.get(), options.input_topic.c_str(), partition)->offset = offset;
  kafka::internal::throw_if_error(
      RdPtr<rd_kafka_error_t>(rd_kafka_seek_partitions(
          consumer.get(), list.get(), kafka::internal::to_timeout_ms(options.request_timeout))),
      "seeking " + input_key(partition) + " to " + std::to_string(offset));
  if (list->elems[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw kafka::internal::kafka_error(list->elems[0].err,
                                       "seeking " + input_key(partition) + " to " + std::to_string(offset));
  }
}

void StreamProcessor::Impl::rewind() {
  rewind_pending = false;
  for (auto& [partition, task] : tasks) {
    if (!task.active) continue;
    seek(partition, task.rewind_offset);
    task.next_offset = -1;
  }
}

void StreamProcessor::Impl::restore_some() {
  if (restorer->idle()) return;
  for (const std::int32_t partition : restorer->poll(std::chrono::milliseconds(50))) {
    const auto it = tasks.find(partition);
    if (it != tasks.end()) --it->second.restoring;
  }
  // At once when the group's description can tell a departed member (see fence_departed_owner),
  // else after kFenceAfter.
  for (const std::int32_t partition : restorer->blocked(std::chrono::milliseconds(0))) {
    if (fenced_for.count(partition) == 0) fence_departed_owner(partition);
  }
  const auto& restored = restorer->counters();
  count([&](StreamProcessorStats& stats) {
    stats.restored_records = restored.records;
    stats.restorations = restored.completed;
    stats.local_state_reused = restored.reused;
    stats.local_state_wiped = restored.wiped;
  });
}

PartitionStore& StreamProcessor::Impl::store(std::string_view name) {
  for (std::size_t i = 0; i < options.stores.size(); ++i) {
    if (options.stores[i] == name) return *current->stores[i];
  }
  throw StateError(ErrorKind::InvalidArgument, "no store named '" + std::string(name) + "'");
}

void StreamProcessor::Impl::process(const rd_kafka_message_t& message) {
  const auto it = tasks.find(message.partition);
  // A record fetched before its partition was paused or rewound: it comes again after the seek.
  if (it == tasks.end() || !it->second.active) return;
  Task& task = it->second;
  if (task.next_offset >= 0 && message.offset < task.next_offset) return;
  if (!transaction_open) begin();
  kafka::ConsumedRecord record;
  record.topic = options.input_topic;
  record.partition = message.partition;
  record.offset = message.offset;
  rd_kafka_timestamp_type_t type;
  record.timestamp_ms = rd_kafka_message_timestamp(&message, &type);
  record.key = std::string_view(static_cast<const char*>(message.key), message.key_len);
  record.value = std::string_view(static_cast<const char*>(message.payload), message.len);
  current = &task;
  function(record, *this);
  current = nullptr;
  if (task.rewind_offset < 0) task.rewind_offset = message.offset;  // the logical start, now known
  task.next_offset = message.offset + 1;
  task.next_leader_epoch = rd_kafka_message_leader_epoch(&message);
  ++transaction_records;
}

void StreamProcessor::Impl::on_consume_error(const rd_kafka_message_t& message) {
  if (message.err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return;
  if (message.err == RD_KAFKA_RESP_ERR__FATAL) {
    if (auto fatal = kafka::internal::fatal_error(consumer.get(), "the consumer failed for good")) {
      throw *std::move(fatal);
    }
  }
  if (kafka::internal::consume_error_is_final(message.err)) {
    throw kafka::internal::consume_error(message, options.application_id, {options.input_topic});
  }
  processor::internal::log(LogLevel::Warning, "streams", "consumer: ", rd_kafka_message_errstr(&message));
}

bool StreamProcessor::Impl::start_producer_again() {
  try {
    if (start_producer_or_wait()) return true;
  } catch (const StateError&) {
    broken = std::current_exception();
    throw;
  }
  // The member stays in its group meanwhile: its rebalances are served. A record fetched here is
  // fetched again after the rewind that the replacement asked for.
  RdPtr<rd_kafka_message_t> ignored(rd_kafka_consumer_poll(consumer.get(), 0));
  return false;
}

std::size_t StreamProcessor::Impl::poll() {
  if (broken) std::rethrow_exception(broken);
  if (closed) throw StateError(ErrorKind::InvalidArgument, "the StreamProcessor is closed");
  auto rethrow_callback_error = [&] {
    if (callback_error) std::rethrow_exception(std::exchange(callback_error, nullptr));
  };
  if (exactly_once() && !producer && !start_producer_again()) {
    rethrow_callback_error();
    return 0;
  }
  restore_some();
  maintain_standbys();
  const bool waiting = activate_restored();
  std::size_t processed = 0;
  int timeout_ms =
      restorer->idle() && !transaction_open
          ? kafka::internal::to_timeout_ms(waiting ? std::chrono::milliseconds(10) : options.poll_timeout)
          : 0;
  if (transaction_open) {
    // Wake up for the commit when it is due.
    const auto due = transaction_started + options.commit_interval - Clock::now();
    timeout_ms =
        std::clamp<int>(static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(due).count()),
                        0, kafka::internal::to_timeout_ms(options.poll_timeout));
  }
  while (processed < kMaxRecordsPerPoll && !stop_requested.load(std::memory_order_relaxed)) {
    RdPtr<rd_kafka_message_t> message(rd_kafka_consumer_poll(consumer.get(), timeout_ms));
    timeout_ms = 0;
    rethrow_callback_error();
    if (rewind_pending) {
      rewind();
      continue;  // `message` was fetched before the seek
    }
    if (!message) {
      // A cluster that refuses this member (a wrong password, an untrusted certificate): nothing
      // arrives, librdkafka retries for ever, and only the user can fix it.
      kafka::internal::throw_if_refused(consumer.get());
      if (producer) kafka::internal::throw_if_refused(producer.get());
      break;
    }
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      on_consume_error(*message);
      continue;
    }
    try {
      process(*message);
    } catch (...) {
      current = nullptr;
      // The transaction failed under the record function (its output was refused): abort it and
      // process its records again. Anything else is the function's own failure, for the caller.
      const bool transaction_failure = transaction_failed || (exactly_once() && producer_failed_for_good());
      processor::internal::log(
          LogLevel::Warning, "streams",
          transaction_failure ? "the transaction failed while processing " : "the record function failed at ",
          input_key(message->partition), "@", message->offset, ": aborting");
      abort(transaction_failure ? "producing into the transaction failed" : "the record function failed");
      rewind();
      if (transaction_failure) continue;
      count([&](StreamProcessorStats& stats) { stats.records += processed; });  // those of this poll so far
      throw;
    }
    ++processed;
    if (commit_due(Clock::now())) commit();
  }
  if (commit_due(Clock::now())) commit();
  count([&](StreamProcessorStats& stats) { stats.records += processed; });
  return processed;
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
  if (impl.consumer) {
    // Leaves the group: the revoke callback commits nothing more (or aborts) and drops the tasks.
    rd_kafka_consumer_close(impl.consumer.get());
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
