#pragma once
// A static member (group.instance.id) of a consumer-protocol group (KIP-848) restarted at once
// after a crash: one policy for KafkaConsumer (and the ParallelConsumer on it) and StreamProcessor.
// Internal.

#include <chrono>

#include "processor/kafka/kafka_client.hpp"

namespace processor::kafka::internal {

// The properties of an admin client made from a consumer's: without the group's own settings,
// which an admin client refuses or ignores.
KafkaProperties admin_properties_of(const KafkaProperties& consumer);

// Before such a member subscribes: while its group lists a member with the same group.instance.id
// (the killed incarnation, until the coordinator expires its session: group.consumer.session.
// timeout.ms, 45 s by default), waits up to `limit`, logging what it waits for every 5 s. The
// coordinator would refuse the new member with UNRELEASED_INSTANCE_ID, which librdkafka, as Kafka's
// Java consumer, treats as fatal: the restarted member failed for good instead of starting once
// the old session ended. Does nothing for a dynamic member or a classic group (there a static
// member replaces its previous incarnation at once). Never throws: when the group cannot be
// described, or the member is still listed at `limit`, the subscription goes ahead and its
// answer tells.
void await_static_member_release(const KafkaProperties& consumer, std::chrono::milliseconds limit);

// How long a consumer waits there: the broker's default session timeout and a margin.
inline constexpr std::chrono::seconds kStaticMemberReleaseLimit{60};

}  // namespace processor::kafka::internal
