#pragma once
// GroupAdmin's state, shared by its two implementation files (groups in group_admin.cpp, offsets
// and metadata in group_admin_offsets.cpp). Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <optional>
#include <string>

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

  // Retries of one Admin request while its error is retriable (a coordinator loading or moving),
  // for at most `timeout`.
  template <class Attempt>
  void with_retries(Attempt&& attempt) const {
    internal::with_retries(
        internal::RetryPolicy{timeout, std::chrono::milliseconds(100), std::chrono::seconds(1)},
        std::forward<Attempt>(attempt));
  }
};

}  // namespace processor::kafka
