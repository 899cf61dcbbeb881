#pragma once
// A member writing its group's committed offsets: one synchronous OffsetCommit, retried while
// its error is retriable. Used by KafkaOffsetStore and by StreamProcessor's at-least-once
// commits. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <functional>
#include <string>

#include "kafka/rdkafka/retry.hpp"

namespace processor::kafka::internal {

// Commits `offsets` (the next offsets to consume) as member `rk` of its group, one OffsetCommit
// per try, each answered within `request_timeout`, tried again under `policy` while its error is
// retriable. STALE_MEMBER_EPOCH (Kafka 4's consumer group protocol: a heartbeat moved the member
// epoch on under the commit, as in a commit on revoke) is tried again with the new epoch once
// `require_owned()` has not thrown, i.e. while the member still owns the partitions, as Kafka's
// Java consumer does. `what` names the commit in errors. Throws the last failure as StateError.
void commit_offsets(rd_kafka_t* rk, const rd_kafka_topic_partition_list_t* offsets, const std::string& what,
                    std::chrono::milliseconds request_timeout, const RetryPolicy& policy,
                    const std::function<void()>& require_owned);

}  // namespace processor::kafka::internal
