#pragma once
// GroupAdmin's state, shared by its two implementation files (groups in group_admin.cpp, offsets
// and metadata in group_admin_offsets.cpp). Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <optional>
#include <string>

#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "kafka/rdkafka/retry.hpp"
#include "processor/kafka/group_admin.hpp"

namespace processor::kafka {

struct GroupAdmin::Impl {
  // A consumer handle without group.id: it joins no group, and its ListOffsets requests carry
  // isolation.level (read_uncommitted by default here, as Kafka's AdminClient sends).
  internal::RdPtr<rd_kafka_t> rk;
  std::chrono::milliseconds timeout;

  // The failure of a request that ended in `error`: the broker's refusal of the client when there
  // was one (see with_retries), else kafka_error(error, what).
  StateError failure(rd_kafka_resp_err_t error, const std::string& what) const {
    if (auto refusal = internal::connection_refusal(rk.get())) return std::move(*refusal);
    return internal::kafka_error(error, what);
  }

  // Retries of one Admin request while its error is retriable (a coordinator loading or moving),
  // for at most `timeout`. A broker that refuses the client (a wrong password, an untrusted
  // certificate: internal::connection_refusal) fails it at once with that cause, never with the
  // time-out it would otherwise end in. The client joins no group, so its events are served
  // here (rd_kafka_poll), which is where librdkafka reports such a refusal.
  template <class Attempt>
  void with_retries(Attempt&& attempt) const {
    internal::with_retries(
        internal::RetryPolicy{timeout, std::chrono::milliseconds(100), std::chrono::seconds(1)},
        [&]() -> std::optional<StateError> {
          std::optional<StateError> failure = attempt();
          if (failure) {
            rd_kafka_poll(rk.get(), 0);
            if (auto refusal = internal::connection_refusal(rk.get())) return refusal;
          }
          return failure;
        });
  }
};

}  // namespace processor::kafka
