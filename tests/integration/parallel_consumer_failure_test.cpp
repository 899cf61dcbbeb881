// ParallelConsumer on librdkafka's mock cluster when things go wrong: handlers that throw, bad
// options, and the user's executor (refusing tasks, and where handlers run).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kafka_test_support.hpp"
#include "parallel_consumer_support.hpp"
#include "processor/kafka.hpp"
#include "processor/kafka/parallel_consumer.hpp"
#include "state_error_of.hpp"

namespace processor::kafka {
namespace {

using testing::acked_offsets;
using testing::ConcurrencyGauge;
using testing::Gate;
using testing::HandlerLog;
using testing::MockCluster;
using testing::parallel_options;
using testing::ParallelMember;
using testing::pending_acks;
using testing::poll_through_errors;
using testing::poll_times;
using testing::poll_until;
using testing::Producer;
using testing::unique_name;

class ParallelConsumerFailures : public ::testing::Test {
 protected:
  void SetUp() override {
    topic_ = unique_name("parallel");
    group_ = unique_name("parallel-group");
  }

  MockCluster cluster_;
  std::string topic_;
  std::string group_;
};

// ---- Retries ----

TEST_F(ParallelConsumerFailures, AHandlerThatFailsTwiceIsCalledThreeTimesAndHoldsBackOnlyItsKey) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  testing::produce_keys(producer, topic_, 0, {"a", "a", "b"});
  std::atomic<int> attempts_of_first{0};
  Gate other_key_done;
  bool other_key_ran_during_retries = false;
  HandlerLog log;
  ConcurrencyGauge by_key;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Key;
  options.max_concurrency = 4;
  options.consumer.failure.retry.max_attempts = 3;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    auto running = by_key.enter(std::string(r.key));
    if (r.offset == 0) {
      const int attempt = ++attempts_of_first;
      if (attempt <= 2) throw std::runtime_error("flaky attempt " + std::to_string(attempt));
      // The last try succeeds only once key "b" was processed meanwhile: a consumer that held
      // "b" behind "a"'s retries leaves this waiting until the limit.
      other_key_ran_during_retries = other_key_done.pass(std::chrono::seconds(30));
    }
    if (r.offset == 2) other_key_done.open();
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 3; }));
  EXPECT_EQ(attempts_of_first.load(), 3);
  EXPECT_TRUE(other_key_ran_during_retries);
  EXPECT_EQ(by_key.peak_in_group(), 1);
  // Record 1 (key "a") started only after record 0's last try.
  const auto order = log.order();
  const auto last_try =
      std::find_if(order.rbegin(), order.rend(), [](const auto& s) { return s.offset == 0; });
  const auto second_a = std::find_if(order.begin(), order.end(), [](const auto& s) { return s.offset == 1; });
  ASSERT_NE(second_a, order.end());
  EXPECT_GT(second_a - order.begin(), order.rend() - last_try - 1);
  EXPECT_EQ(log.calls_of(0, 1), 1);
  EXPECT_EQ(log.calls_of(0, 2), 1);
  const auto stats = member.consumer.stats();
  EXPECT_EQ(stats.failed_attempts, 2u);
  EXPECT_EQ(stats.processed, 3u);
  EXPECT_EQ(stats.dead_lettered, 0u);
}

TEST_F(ParallelConsumerFailures, ARecordThatFailsEveryTryGoesToOnFailureAndIsAcknowledgedAfterwards) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 5);
  std::mutex mutex;
  std::vector<std::tuple<std::int64_t, std::string, std::string, int>>
      dead_letters;  // offset, key, error, attempts
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.consumer.failure.retry.max_attempts = 2;
  options.on_failure = [&](const FailedRecord& failed) {
    std::string message;
    try {
      std::rethrow_exception(failed.error);
    } catch (const std::exception& error) {
      message = error.what();
    }
    std::lock_guard lock(mutex);
    dead_letters.emplace_back(failed.record.offset, std::string(failed.record.key), message, failed.attempts);
  };
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    if (r.offset == 2) throw std::runtime_error("poison record 2");
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] {
    const auto acks = pending_acks(member.manager, topic_, 0);
    return acks && acks->committable == 5;
  })) << "the dead-lettered record was never acknowledged";
  {
    std::lock_guard lock(mutex);
    ASSERT_EQ(dead_letters.size(), 1u);
    EXPECT_EQ(std::get<0>(dead_letters[0]), 2);
    EXPECT_EQ(std::get<1>(dead_letters[0]), "key-2");
    EXPECT_EQ(std::get<2>(dead_letters[0]), "poison record 2");
    EXPECT_EQ(std::get<3>(dead_letters[0]), 2);
  }
  EXPECT_EQ(log.calls_of(0, 2), 2);
  const auto stats = member.consumer.stats();
  EXPECT_EQ(stats.dead_lettered, 1u);
  EXPECT_EQ(stats.failed_attempts, 2u);
  member.manager.commit();
  EXPECT_EQ(member.committed(topic_, 0)->offset, 5);
}

TEST_F(ParallelConsumerFailures, UnderTheFailPolicyPollThrowsNamingTheRecordAndTheRecordIsNotCommitted) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 5);
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.consumer.failure.retry.max_attempts = 1;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    if (r.offset == 2) throw std::runtime_error("poison record 2");
    log.finished(r);
  });
  std::string rethrown;
  std::string nested;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (rethrown.empty() && std::chrono::steady_clock::now() < deadline) {
    try {
      member.consumer.poll();
    } catch (const StateError& error) {
      rethrown = error.what();
      try {
        std::rethrow_if_nested(error);
      } catch (const std::runtime_error& cause) {
        nested = cause.what();
      }
    }
  }
  EXPECT_EQ(rethrown, "record " + topic_ + ":0@2 failed 1 try: poison record 2");
  EXPECT_EQ(nested, "poison record 2");
  ASSERT_TRUE(poll_through_errors(member.consumer, [&] {
    const auto acks = pending_acks(member.manager, topic_, 0);
    return acks && acks->size() == 2 && log.calls_of(0, 2) >= 2;
  })) << "records 3 and 4 were not acknowledged, or record 2 was not tried again";
  member.manager.commit();
  const auto committed = member.committed(topic_, 0);
  ASSERT_TRUE(committed);
  EXPECT_EQ(committed->offset, 2) << "a record that never succeeded was committed";
  EXPECT_EQ(acked_offsets(PartitionAcks::decode_metadata(committed->metadata.value_or(""))),
            (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(member.consumer.stats().dead_lettered, 0u);
}

// ---- Bad options ----

struct BadOption {
  const char* name;
  std::function<void(ParallelConsumerOptions&)> change;
  std::vector<std::string> mentions;  // what the error message names
};

// ctest lists the case by its name, not by the struct's bytes.
void PrintTo(const BadOption& option, std::ostream* out) { *out << option.name; }

class BadParallelOption : public ParallelConsumerFailures, public ::testing::WithParamInterface<BadOption> {};

TEST_P(BadParallelOption, IsRefusedWithInvalidArgumentNamingTheValue) {
  cluster_.create_topic(topic_, 1);
  auto client = KafkaClient::create(testing::group_properties(cluster_.bootstrap(), group_));
  OffsetManager manager(group_, nullptr, std::make_shared<KafkaOffsetStore>(client),
                        OffsetCommitStrategy::manual());
  auto options = parallel_options(topic_);
  GetParam().change(options);
  ParallelConsumer::RecordHandler handler = [](const ConsumedRecord&) {};
  if (std::string(GetParam().name) == "EmptyHandler") handler = nullptr;
  const StateError error =
      testing::error_of([&] { ParallelConsumer consumer(client, manager, options, handler); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument) << error.what();
  for (const auto& text : GetParam().mentions) EXPECT_TRUE(testing::mentions(error, text));
  EXPECT_TRUE(client->assignment().empty());
}

INSTANTIATE_TEST_SUITE_P(
    EveryContractError, BadParallelOption,
    ::testing::Values(
        BadOption{"ZeroConcurrency", [](auto& o) { o.max_concurrency = 0; }, {"max_concurrency", "0"}},
        BadOption{"NegativeConcurrency", [](auto& o) { o.max_concurrency = -1; }, {"max_concurrency", "-1"}},
        BadOption{
            "HugeConcurrency", [](auto& o) { o.max_concurrency = 100'001; }, {"max_concurrency", "100001"}},
        BadOption{"NegativeDrainTimeout",
                  [](auto& o) { o.drain_timeout = std::chrono::milliseconds(-5); },
                  {"drain_timeout", "-5"}},
        BadOption{"ZeroAttempts",
                  [](auto& o) { o.consumer.failure.retry.max_attempts = 0; },
                  {"max_attempts", "0"}},
        BadOption{"NegativeBackoff",
                  [](auto& o) { o.consumer.failure.retry.initial_backoff = std::chrono::milliseconds(-3); },
                  {"initial_backoff", "-3"}},
        BadOption{"ReversedBackoff",
                  [](auto& o) {
                    o.consumer.failure.retry.initial_backoff = std::chrono::milliseconds(700);
                    o.consumer.failure.retry.max_backoff = std::chrono::milliseconds(200);
                  },
                  {"700", "200"}},
        BadOption{"ZeroBufferedBytes", [](auto& o) { o.max_buffered_bytes = 0; }, {"max_buffered_bytes"}},
        BadOption{"EmptyHandler", [](auto&) {}, {"handler"}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST_F(ParallelConsumerFailures, RequestCheckpointWithoutTakeCheckpointIsRefused) {
  cluster_.create_topic(topic_, 1);
  ParallelMember member(cluster_.bootstrap(), group_, parallel_options(topic_), [](const ConsumedRecord&) {});
  const StateError error = testing::error_of([&] { member.consumer.request_checkpoint(); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(testing::mentions(error, "take_checkpoint"));
}

// ---- The user's executor ----

TEST_F(ParallelConsumerFailures, AnExecutorThatRefusesIsReportedAndTheRecordRunsOnceItAcceptsAgain) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 10);
  testing::ThreadPool pool(2);
  std::atomic<int> accepted{0};
  std::atomic<bool> refusing{false};
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Partition;  // one task at a time: the 5th task is record 4
  options.executor = [&](std::function<void()> task) {
    if (refusing) throw std::runtime_error("pool is full");
    if (++accepted == 4) refusing = true;
    pool.submit(std::move(task));
  };
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    log.finished(r);
  });
  std::optional<StateError> refusal;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!refusal && std::chrono::steady_clock::now() < deadline) {
    try {
      member.consumer.poll();
    } catch (const StateError& error) {
      refusal = error;
    }
  }
  ASSERT_TRUE(refusal) << "poll() never reported the refusal";
  EXPECT_EQ(refusal->kind(), ErrorKind::Unavailable) << refusal->what();
  EXPECT_TRUE(testing::mentions(*refusal, "pool is full"));
  ASSERT_TRUE(poll_through_errors(member.consumer, [&] {
    const auto acks = pending_acks(member.manager, topic_, 0);
    return acks && acks->committable == 4;
  }));
  member.manager.commit();
  EXPECT_EQ(member.committed(topic_, 0)->offset, 4) << "committed past the refused record";
  EXPECT_EQ(log.calls_of(0, 4), 0);
  EXPECT_GE(member.consumer.stats().executor_rejections, 1u);

  refusing = false;
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 10; }));
  for (int offset = 0; offset < 10; ++offset) EXPECT_EQ(log.calls_of(0, offset), 1) << "offset " << offset;
  member.manager.commit();
  EXPECT_EQ(member.committed(topic_, 0)->offset, 10);
}

TEST_F(ParallelConsumerFailures, HandlersRunOnTheExecutorsThreadsAtMostMaxConcurrencyAtOnce) {
  cluster_.create_topic(topic_, 2);
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 2; ++p) producer.produce(topic_, p, 15);
  testing::ThreadPool pool(6);
  std::atomic<int> submitted_not_started{0};
  std::mutex mutex;
  std::set<std::thread::id> handler_threads;
  Gate gate;
  ConcurrencyGauge gauge;
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.max_concurrency = 2;
  options.executor = [&](std::function<void()> task) {
    ++submitted_not_started;
    pool.submit([&, task = std::move(task)] {
      --submitted_not_started;
      task();
    });
  };
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    {
      std::lock_guard lock(mutex);
      handler_threads.insert(std::this_thread::get_id());
    }
    auto running = gauge.enter();
    gate.pass();
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] { return gate.arrived() >= 2; }));
  poll_times(member.consumer, 20);
  EXPECT_EQ(gauge.running(), 2);
  EXPECT_EQ(submitted_not_started.load(), 0) << "tasks were submitted beyond max_concurrency";
  gate.open();
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 30; }));
  EXPECT_EQ(gauge.peak(), 2);
  const auto pool_threads = pool.thread_ids();
  std::lock_guard lock(mutex);
  for (const auto& id : handler_threads) {
    EXPECT_NE(std::find(pool_threads.begin(), pool_threads.end(), id), pool_threads.end())
        << "a handler ran on a thread that is not the executor's";
  }
}

}  // namespace
}  // namespace processor::kafka
