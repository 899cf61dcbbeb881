#pragma once
// A member writing its group's committed offsets: one synchronous OffsetCommit, retried while
// its error is retriable. Used by KafkaOffsetStore and by StreamProcessor's at-least-once
// commits. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "kafka/rdkafka/handles.hpp"
#include "kafka/rdkafka/retry.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/error.hpp"

namespace processor::kafka::internal {

// The offset commits of one client whose callers stopped waiting for their answer. librdkafka
// still sends such a commit (to a coordinator it finds later, after its own retries), so a newer
// commit sent meanwhile can be overtaken by it and the group's offset move back: seen on a 3-node
// cluster while a broker restarted, 1368 committed on revoke, then 762 from an automatic commit
// given up 4 s before. No commit goes out while one is unanswered. Thread-safe; destroyed before
// the client's handle.
class UnansweredCommits {
 public:
  // Keeps `queue`, on which a commit's answer arrives, until that answer came.
  void add(RdPtr<rd_kafka_queue_t> queue);
  // Waits for the answers of the commits kept, until `deadline` at the latest; false when one is
  // still unanswered then.
  bool settle(std::chrono::steady_clock::time_point deadline);
  // Drops what is kept: before the client's handle is destroyed, whose queues they are.
  void forget();

 private:
  processor::detail::Mutex mutex_;
  std::vector<RdPtr<rd_kafka_queue_t>> queues_ PROCESSOR_GUARDED_BY(mutex_);
};

// The error of a commit not sent because an earlier one is unanswered (retriable, Timeout).
StateError unanswered_commit_error(const std::string& what);

// Commits `offsets` (the next offsets to consume) as member `rk` of its group, one OffsetCommit
// per try, each answered within `request_timeout`, tried again under `policy` while its error is
// retriable. STALE_MEMBER_EPOCH (Kafka 4's consumer group protocol: a heartbeat moved the member
// epoch on under the commit, as in a commit on revoke) is tried again with the new epoch once
// `require_owned()` has not thrown, i.e. while the member still owns the partitions, as Kafka's
// Java consumer does. `what` names the commit in errors. Throws the last failure as StateError.
// A try given up on is kept in `unanswered`, and each try first waits for those kept (within the
// request timeout).
void commit_offsets(rd_kafka_t* rk, const rd_kafka_topic_partition_list_t* offsets, const std::string& what,
                    std::chrono::milliseconds request_timeout, const RetryPolicy& policy,
                    const std::function<void()>& require_owned, UnansweredCommits& unanswered);

}  // namespace processor::kafka::internal
