#pragma once
// processor::kafka: Kafka consumer offset tracking, commit strategies, offset stores and lag.

#include "processor/error.hpp"
#include "processor/kafka/broker_metadata.hpp"
#include "processor/kafka/commit_strategy.hpp"
#include "processor/kafka/kafka_broker_metadata.hpp"
#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/kafka_consumer.hpp"
#include "processor/kafka/kafka_offset_store.hpp"
#include "processor/kafka/offset_info.hpp"
#include "processor/kafka/offset_manager.hpp"
#include "processor/kafka/offset_store.hpp"
#include "processor/kafka/reset_strategy.hpp"
#include "processor/kafka/state_backend_offset_store.hpp"
#include "processor/kafka/topic_partition.hpp"
#include "processor/kafka/transactional_producer.hpp"
#include "processor/log.hpp"
#include "processor/watermark.hpp"
