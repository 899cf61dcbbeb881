#include "kafka/group/rebalance.hpp"

#include <cstring>
#include <exception>
#include <new>

#include "common/log_internal.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"

namespace processor::kafka::internal {

bool incremental_rebalance(rd_kafka_t* rk) noexcept {
  // librdkafka answers "COOPERATIVE" for the consumer group protocol too.
  const char* protocol = rd_kafka_rebalance_protocol(rk);
  return protocol != nullptr && std::strcmp(protocol, "COOPERATIVE") == 0;
}

bool assignment_lost(rd_kafka_t* rk) noexcept {
  if (rd_kafka_assignment_lost(rk) != 0) return true;
  try {
    return member_id(rk).empty();
  } catch (const std::bad_alloc&) {
    return false;  // librdkafka's own flag decides
  }
}

std::string member_id(rd_kafka_t* rk) {
  char* id = rd_kafka_memberid(rk);
  if (id == nullptr) return {};
  std::string member = id;
  rd_kafka_mem_free(rk, id);
  return member;
}

void apply_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t event, rd_kafka_topic_partition_list_t* partitions) {
  const bool assigning = event == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS;
  const char* what = assigning ? "assigning partitions" : "revoking partitions";
  if (incremental_rebalance(rk)) {
    throw_if_error(RdPtr<rd_kafka_error_t>(assigning ? rd_kafka_incremental_assign(rk, partitions)
                                                     : rd_kafka_incremental_unassign(rk, partitions)),
                   what);
    return;
  }
  const rd_kafka_resp_err_t error = rd_kafka_assign(rk, assigning ? partitions : nullptr);
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw kafka_error(error, what);
}

void apply_rebalance_noexcept(rd_kafka_t* rk, rd_kafka_resp_err_t event,
                              rd_kafka_topic_partition_list_t* partitions) noexcept {
  try {
    apply_rebalance(rk, event, partitions);
  } catch (const std::exception& error) {
    processor::internal::log(LogLevel::Warning, "consumer", error.what());
  }
}

void move_partitions(
    rd_kafka_t* rk, rd_kafka_topic_partition_list_t* positions, int timeout_ms, const char* what,
    const std::function<std::int64_t(const char* topic, std::int32_t partition)>& unconsumed_position) {
  throw_if_error(RdPtr<rd_kafka_error_t>(rd_kafka_seek_partitions(rk, positions, timeout_ms)), what);
  PartitionListPtr stopped = make_partition_list(static_cast<std::size_t>(positions->cnt));
  for (int i = 0; i < positions->cnt; ++i) {
    const rd_kafka_topic_partition_t& entry = positions->elems[i];
    if (entry.err == RD_KAFKA_RESP_ERR__STATE) {
      rd_kafka_topic_partition_list_add(stopped.get(), entry.topic, entry.partition)->offset = entry.offset;
    } else if (entry.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw kafka_error(entry.err,
                        std::string(what) + " (" + partition_key(entry.topic, entry.partition) + ")");
    }
  }
  if (stopped->cnt == 0) return;
  if (incremental_rebalance(rk)) {
    throw_if_error(RdPtr<rd_kafka_error_t>(rd_kafka_incremental_unassign(rk, stopped.get())), what);
    throw_if_error(RdPtr<rd_kafka_error_t>(rd_kafka_incremental_assign(rk, stopped.get())), what);
    return;
  }
  rd_kafka_topic_partition_list_t* raw = nullptr;
  rd_kafka_resp_err_t error = rd_kafka_assignment(rk, &raw);
  PartitionListPtr assignment(raw);
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw kafka_error(error, what);
  rd_kafka_position(rk, assignment.get());
  for (int i = 0; i < assignment->cnt; ++i) {
    rd_kafka_topic_partition_t& entry = assignment->elems[i];
    if (entry.offset == RD_KAFKA_OFFSET_INVALID)
      entry.offset = unconsumed_position(entry.topic, entry.partition);
  }
  for (int i = 0; i < stopped->cnt; ++i) {
    rd_kafka_topic_partition_t* entry = rd_kafka_topic_partition_list_find(
        assignment.get(), stopped->elems[i].topic, stopped->elems[i].partition);
    if (entry != nullptr) entry->offset = stopped->elems[i].offset;
  }
  error = rd_kafka_assign(rk, assignment.get());
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw kafka_error(error, what);
}

}  // namespace processor::kafka::internal
