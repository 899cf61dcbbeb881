#pragma once
// Rebalances as librdkafka expects them, for every group protocol: the one place that tells an
// incremental rebalance (classic cooperative-sticky, and Kafka 4's consumer group protocol,
// KIP-848) from an eager one, and applies an assignment or a revocation accordingly. Used by
// KafkaConsumer (and so ParallelConsumer) and StreamProcessor. Internal.

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <functional>
#include <string>

namespace processor::kafka::internal {

// Whether partitions come and go incrementally (rd_kafka_incremental_(un)assign) instead of
// replacing the whole assignment: the classic protocol with a cooperative assignor, and the
// consumer group protocol, whose rebalances are always incremental. False for a client without a
// group or already closing (librdkafka then answers NULL).
bool incremental_rebalance(rd_kafka_t* rk) noexcept;

// Whether this member's assignment is lost: the group may have given its partitions to others,
// so it must commit nothing of them. librdkafka's lost flag, or a member without a member id:
// librdkafka 2.14.2 (#5604, #5585) forgets a classic member's id when it times out its session
// or poll interval, but drops the lost flag when a rebalance was in flight then. A commit without
// an id is refused (UNKNOWN_MEMBER_ID), and a static member's (group.instance.id) is fenced for
// good (FENCED_INSTANCE_ID, fatal to the client). The one place the library asks.
bool assignment_lost(rd_kafka_t* rk) noexcept;

// This member's id in its group ("" before it joined, and after librdkafka forgot it).
std::string member_id(rd_kafka_t* rk);

// Applies an assignment (RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) or a revocation of `partitions`
// as the protocol wants. Throws StateError(Kafka) when librdkafka refuses it.
void apply_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t event, rd_kafka_topic_partition_list_t* partitions);

// The same, for a callback's last resort: librdkafka must see every rebalance applied, or the
// member stalls and the group with it. Never throws; a refusal is logged.
void apply_rebalance_noexcept(rd_kafka_t* rk, rd_kafka_resp_err_t event,
                              rd_kafka_topic_partition_list_t* partitions) noexcept;

// Moves each assigned partition of `positions` to its offset: a seek, or, for a partition whose
// fetcher librdkafka stopped (after an offset reset it was told not to make, with
// auto.offset.reset=error, it refuses seeks with _STATE), a new assignment of it at that offset:
// incrementally where the protocol allows, else the whole assignment again, every other
// partition at its current position: where its last record left it, or, for a partition none
// came from since it was assigned or sought, `unconsumed_position(topic, partition)` (librdkafka
// knows no position then, and would assign it at none). Throws StateError when librdkafka refuses.
void move_partitions(
    rd_kafka_t* rk, rd_kafka_topic_partition_list_t* positions, int timeout_ms, const char* what,
    const std::function<std::int64_t(const char* topic, std::int32_t partition)>& unconsumed_position);

}  // namespace processor::kafka::internal
