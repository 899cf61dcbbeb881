#include "processor/monitor/lag_monitor.hpp"

#include <map>
#include <thread>
#include <utility>

#include "common/log_internal.hpp"
#include "monitor/lag/partition_book.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/error.hpp"

namespace processor::monitor {

namespace {

using internal::GroupBook;
using internal::Micros;
using SteadyClock = std::chrono::steady_clock;

Micros micros_of(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

void require(bool ok, const char* option, const std::string& value) {
  if (!ok)
    throw StateError(ErrorKind::InvalidArgument, std::string("LagMonitorOptions.") + option + " = " + value);
}

}  // namespace

struct LagMonitor::Impl {
  Impl(std::shared_ptr<LagSource> lag_source, LagMonitorOptions monitor_options)
      : source(std::move(lag_source)),
        options(std::move(monitor_options)),
        logs(options.table_capacity),
        history(options.history_capacity) {}

  LagSnapshot poll(std::chrono::system_clock::time_point now);
  void describe(const std::vector<std::string>& names, std::vector<kafka::GroupDescription>& out,
                std::vector<bool>& failed);
  bool read_group(const std::string& name, GroupBook& book) PROCESSOR_REQUIRES(poll_mutex);
  void forget_unreferenced_logs() PROCESSOR_REQUIRES(poll_mutex);
  LagSnapshot snapshot(std::chrono::system_clock::time_point now) PROCESSOR_REQUIRES(poll_mutex);
  void run();

  const std::shared_ptr<LagSource> source;
  const LagMonitorOptions options;

  // Only the polling caller touches these; polls are serialized by poll_mutex.
  detail::Mutex poll_mutex;
  internal::TopicTable topics PROCESSOR_GUARDED_BY(poll_mutex);
  internal::LogBook logs PROCESSOR_GUARDED_BY(poll_mutex);
  std::map<std::string, GroupBook, std::less<>> groups PROCESSOR_GUARDED_BY(poll_mutex);
  std::uint64_t poll_count PROCESSOR_GUARDED_BY(poll_mutex) = 0;

  // What readers see. Lock order: poll_mutex, then state_mutex.
  mutable detail::Mutex state_mutex;
  LagSnapshot latest PROCESSOR_GUARDED_BY(state_mutex);  // when history_capacity is 0
  LagHistory history PROCESSOR_GUARDED_BY(state_mutex);
  MonitorStats stats PROCESSOR_GUARDED_BY(state_mutex);

  // The background thread.
  detail::Mutex thread_mutex;
  detail::CondVar wake;
  bool stopping PROCESSOR_GUARDED_BY(thread_mutex) = false;
  std::thread thread;  // joinable while running; only start() and stop() touch it
};

LagMonitor::LagMonitor(std::shared_ptr<LagSource> source, LagMonitorOptions options) {
  require(source != nullptr, "source", "null");
  require(options.interval.count() > 0, "interval", std::to_string(options.interval.count()) + "ms");
  require(options.window >= 2, "window", std::to_string(options.window));
  require(options.table_capacity >= 2, "table_capacity", std::to_string(options.table_capacity));
  require(options.max_extrapolation.count() >= 0, "max_extrapolation",
          std::to_string(options.max_extrapolation.count()) + "s");
  impl_ = std::make_unique<Impl>(std::move(source), std::move(options));
}

LagMonitor::~LagMonitor() { stop(); }

const LagMonitorOptions& LagMonitor::options() const noexcept { return impl_->options; }

LagSnapshot LagMonitor::poll_once(std::chrono::system_clock::time_point now) { return impl_->poll(now); }

LagSnapshot LagMonitor::latest() const {
  detail::MutexLock lock(impl_->state_mutex);
  const auto& snapshots = impl_->history.snapshots();
  return snapshots.empty() ? impl_->latest : snapshots.back();
}

LagHistory LagMonitor::history() const {
  detail::MutexLock lock(impl_->state_mutex);
  return impl_->history;
}

MonitorStats LagMonitor::stats() const {
  detail::MutexLock lock(impl_->state_mutex);
  return impl_->stats;
}

void LagMonitor::start() {
  if (impl_->thread.joinable()) return;
  {
    detail::MutexLock lock(impl_->thread_mutex);
    impl_->stopping = false;
  }
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

void LagMonitor::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  {
    detail::MutexLock lock(impl_->thread_mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->thread.join();
}

void LagMonitor::Impl::run() {
  for (;;) {
    const auto next = SteadyClock::now() + options.interval;
    try {
      poll(std::chrono::system_clock::now());
    } catch (const std::exception& e) {  // out of memory, a sink that throws: keep polling
      processor::internal::log(LogLevel::Error, "lag_monitor", "poll failed: ", e.what());
    }
    detail::MutexLock lock(thread_mutex);
    while (!stopping && SteadyClock::now() < next) wake.wait_until(thread_mutex, next);
    if (stopping) return;
  }
}

// ---- one poll ----

void LagMonitor::Impl::describe(const std::vector<std::string>& names,
                                std::vector<kafka::GroupDescription>& out, std::vector<bool>& failed) {
  out.assign(names.size(), {});
  failed.assign(names.size(), false);
  try {
    std::vector<kafka::GroupDescription> all = source->describe_groups(names);
    if (all.size() == names.size()) {
      out = std::move(all);
      return;
    }
  } catch (const std::exception& e) {
    processor::internal::log(LogLevel::Warning, "lag_monitor", "describing ", names.size(),
                             " groups failed: ", e.what());
  }
  // One group's failure must not fail the others: ask again one by one.
  for (std::size_t i = 0; i < names.size(); ++i) {
    try {
      std::vector<kafka::GroupDescription> one = source->describe_groups({names[i]});
      if (one.size() == 1) {
        out[i] = std::move(one.front());
        continue;
      }
    } catch (const std::exception& e) {
      processor::internal::log(LogLevel::Warning, "lag_monitor", "describing group ", names[i],
                               " failed: ", e.what());
    }
    failed[i] = true;
  }
}

bool LagMonitor::Impl::read_group(const std::string& name, GroupBook& book) {
  std::vector<kafka::CommittedOffset> committed;
  try {
    committed = source->committed_offsets(name);
  } catch (const std::exception& e) {
    processor::internal::log(LogLevel::Warning, "lag_monitor", "reading the offsets of group ", name,
                             " failed: ", e.what());
    return false;
  }
  for (const kafka::CommittedOffset& offset : committed) {
    const std::uint32_t slot =
        book.slot(topics.intern(offset.tp.topic), offset.tp.partition, logs, options.window);
    book.slots[slot].committed_offset = offset.offset;
    book.slots[slot].seen_in_poll = poll_count;
  }
  book.drop_unseen(poll_count, options.window);
  return true;
}

void LagMonitor::Impl::forget_unreferenced_logs() {
  std::vector<bool> referenced(logs.slots(), false);
  for (const auto& [name, book] : groups) {
    for (const GroupBook::Slot& slot : book.slots) referenced[slot.log_slot] = true;
  }
  logs.retain(referenced);
}

LagSnapshot LagMonitor::Impl::poll(std::chrono::system_clock::time_point now) {
  const auto poll_start = SteadyClock::now();
  detail::MutexLock poll_lock(poll_mutex);
  ++poll_count;
  std::uint64_t errors = 0;

  std::vector<std::string> names = options.groups;
  bool listed = true;
  if (names.empty()) {
    try {
      names = source->list_groups();
    } catch (const std::exception& e) {
      processor::internal::log(LogLevel::Warning, "lag_monitor", "listing groups failed: ", e.what());
      listed = false;
      ++errors;
      for (const auto& [name, book] : groups) names.push_back(name);  // report what we knew, as ERR
    }
  }

  std::vector<kafka::GroupDescription> descriptions;
  std::vector<bool> failed;
  if (listed) {
    describe(names, descriptions, failed);
  } else {
    descriptions.assign(names.size(), {});
    failed.assign(names.size(), true);
  }

  // Groups that vanished from the source are forgotten.
  std::map<std::string, GroupBook, std::less<>> polled;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto node = groups.extract(names[i]);
    GroupBook book = node.empty() ? GroupBook{} : std::move(node.mapped());
    book.error = failed[i] || !read_group(names[i], book);
    if (book.error) {
      ++errors;
    } else {
      book.state = std::move(descriptions[i].state);
      book.type = std::move(descriptions[i].type);
      book.simple = descriptions[i].simple;
      if (*book.members != descriptions[i].members) {
        book.members =
            std::make_shared<const std::vector<kafka::GroupMember>>(std::move(descriptions[i].members));
      }
      book.assign_owners(topics);
    }
    polled.emplace(names[i], std::move(book));
  }
  groups = std::move(polled);
  forget_unreferenced_logs();

  std::vector<LogOffsets> answer;
  const std::vector<kafka::TopicPartition>& request = logs.request(topics);
  if (!request.empty()) {
    try {
      answer = source->log_offsets(request);
    } catch (const std::exception& e) {
      processor::internal::log(LogLevel::Warning, "lag_monitor", "listing the offsets of ", request.size(),
                               " partitions failed: ", e.what());
      ++errors;
    }
  }

  const auto evaluation_start = SteadyClock::now();
  const Micros now_micros = micros_of(now);
  const Micros max_extrapolation =
      std::chrono::duration_cast<std::chrono::microseconds>(options.max_extrapolation).count();
  logs.record(answer, now_micros);
  std::uint64_t evaluated = 0;
  for (auto& [name, book] : groups) {
    book.evaluate(logs, now_micros, options.window, max_extrapolation);
    evaluated += book.slots.size();
  }
  const double evaluation_seconds = seconds_since(evaluation_start);

  LagSnapshot result = snapshot(now);
  detail::MutexLock state_lock(state_mutex);
  stats.polls += 1;
  stats.poll_errors += errors;
  stats.partitions_evaluated += evaluated;
  stats.last_evaluation_seconds = evaluation_seconds;
  stats.last_poll_seconds = seconds_since(poll_start);
  result.stats = stats;
  if (options.history_capacity > 0) {
    history.add(result);  // latest() reads its newest snapshot: one copy, not two
  } else {
    latest = result;
  }
  return result;
}

LagSnapshot LagMonitor::Impl::snapshot(std::chrono::system_clock::time_point now) {
  LagSnapshot result;
  result.taken_at = now;
  result.groups.reserve(groups.size());
  for (auto& [name, book] : groups) {
    GroupLag& group = result.groups.emplace_back();
    group.group = name;
    group.state = book.state;
    group.type = book.type;
    group.simple = book.simple;
    group.members = static_cast<std::int32_t>(book.members->size());
    group.member_list = book.members;
    group.status = book.error ? Status::Error : Status::Ok;
    group.partitions.reserve(book.slots.size());
    for (const std::uint32_t index : book.sorted(topics)) {
      const GroupBook::Slot& slot = book.slots[index];
      PartitionLag& partition = group.partitions.emplace_back();
      partition.topic = topics.name(slot.topic_id);
      partition.partition = slot.partition;
      if (slot.committed_offset >= 0) partition.committed_offset = slot.committed_offset;
      if (const std::int64_t start = logs.log_start(slot.log_slot); start >= 0)
        partition.log_start_offset = start;
      if (const std::int64_t end = logs.log_end(slot.log_slot); end >= 0) partition.log_end_offset = end;
      if (slot.lag >= 0) partition.lag = slot.lag;
      if (slot.lag >= 0 && slot.lag_seconds_source != TimeLagSource::None)
        partition.lag_seconds = slot.lag_seconds;
      partition.lag_seconds_source = partition.lag_seconds ? slot.lag_seconds_source : TimeLagSource::None;
      partition.status = slot.status;
      if (slot.owner >= 0) {
        const kafka::GroupMember& member = (*book.members)[static_cast<std::size_t>(slot.owner)];
        partition.member_id = member.member_id;
        partition.client_id = member.client_id;
        partition.host = member.host;
      }
      if (partition.status > group.status) group.status = partition.status;
    }
  }
  return result;
}

}  // namespace processor::monitor
