#pragma once
// Retries against Kafka: the one loop that repeats a request while its error is retriable.
// Internal.

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "processor/error.hpp"

namespace processor::kafka::internal {

// How long to keep trying, and how long to wait between tries.
struct RetryPolicy {
  std::chrono::milliseconds deadline{30'000};    // no new try starts after this, from the first
  std::chrono::milliseconds backoff{100};        // the first wait; doubles after each try
  std::chrono::milliseconds backoff_max{1'000};  // the longest wait
};

// Runs attempt() — which returns nullopt on success, else its failure as StateError (see
// errors.hpp) — until it succeeds, fails with a non-retriable error, or waiting for the next try
// would pass the deadline. Throws the last failure.
template <class Attempt>
void with_retries(const RetryPolicy& policy, Attempt&& attempt) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + policy.deadline;
  auto backoff = policy.backoff;
  for (;;) {
    std::optional<StateError> failure = attempt();
    if (!failure) return;
    if (!failure->retriable() || Clock::now() + backoff > deadline) throw std::move(*failure);
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, policy.backoff_max);
  }
}

// Runs call() — a librdkafka call that returns an error object (nullptr on success), as the
// transactional APIs do — every 100 ms while librdkafka says its error is retriable, for at most
// `timeout`. Throws the last failure as kafka_error(error, what).
template <class Call>
void with_error_object_retries(Call&& call, const std::string& what, std::chrono::milliseconds timeout) {
  const RetryPolicy policy{timeout, std::chrono::milliseconds(100), std::chrono::milliseconds(100)};
  with_retries(policy, [&]() -> std::optional<StateError> {
    RdPtr<rd_kafka_error_t> error(call());
    if (!error) return std::nullopt;
    return kafka_error(error.get(), what);
  });
}

}  // namespace processor::kafka::internal
