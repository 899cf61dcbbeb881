#pragma once
// Kafka protocol API keys, for the mock cluster's fault injection (rd_kafka_mock_push_request_errors
// and friends): librdkafka does not install rdkafka_protocol.h.

#include <cstdint>

namespace processor::testing {

constexpr std::int16_t kProduceApiKey = 0;
constexpr std::int16_t kFetchApiKey = 1;
constexpr std::int16_t kListOffsetsApiKey = 2;
constexpr std::int16_t kOffsetCommitApiKey = 8;
constexpr std::int16_t kOffsetFetchApiKey = 9;
constexpr std::int16_t kFindCoordinatorApiKey = 10;
constexpr std::int16_t kJoinGroupApiKey = 11;
constexpr std::int16_t kHeartbeatApiKey = 12;
constexpr std::int16_t kSyncGroupApiKey = 14;
constexpr std::int16_t kInitProducerIdApiKey = 22;
constexpr std::int16_t kAddPartitionsToTxnApiKey = 24;
constexpr std::int16_t kAddOffsetsToTxnApiKey = 25;
constexpr std::int16_t kEndTxnApiKey = 26;
constexpr std::int16_t kTxnOffsetCommitApiKey = 28;

}  // namespace processor::testing
