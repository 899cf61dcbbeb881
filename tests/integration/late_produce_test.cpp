// KIP-890's case on the real broker: a produce request of a transaction that reaches the
// partition leader only after the transaction was aborted (held up in the network after its
// client gave up on it). librdkafka 2.14.2 has no transactions v2 (#5423), so no per-transaction
// epoch bump; what keeps the late record out is librdkafka's epoch bump after a timed-out record
// and the broker's verification of a transaction's first write (README, "Transactions v2
// (KIP-890) and librdkafka"). The producer is the library's transactions module
// (src/kafka/producer/transactions) on a client behind HoldingProxy, which holds the request back.
//
// Each case: transaction 1 produces one record, whose request the proxy holds; the record times
// out (message.timeout.ms 3 s), the commit fails as abortable, and the transaction is aborted.
// The held request then reaches the broker: between transactions, or while transaction 2 is
// open on the same partition. The broker must refuse it, and a read_committed reader must see
// transaction 2's record only and reach the partition's end (no transaction left open).

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "holding_proxy.hpp"
#include "kafka/producer/transactions.hpp"
#include "kafka_test_support.hpp"
#include "topic_reader.hpp"

namespace processor::testing {
namespace {

using namespace std::chrono_literals;
namespace txn = kafka::internal;

class LateProduce : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = real_broker();
    if (bootstrap_.empty())
      GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
    if (bootstrap_.find(',') != std::string::npos) GTEST_SKIP() << "the proxy stands in front of one broker";
    proxy_ = std::make_unique<HoldingProxy>(std::stoi(bootstrap_.substr(bootstrap_.rfind(':') + 1)));
    topic_ = unique_name("late-produce");
    create_topic(bootstrap_, topic_, 1);

    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char error[512];
    const std::pair<const char*, std::string> settings[] = {
        {"bootstrap.servers", bootstrap_},
        {"transactional.id", unique_name("late-produce")},
        {"message.timeout.ms", "3000"},  // the held record fails after 3 s
        {"transaction.timeout.ms", "60000"},
        {"linger.ms", "0"},
        {"log_level", "3"},
    };
    for (const auto& [name, value] : settings) {
      ASSERT_EQ(rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof error), RD_KAFKA_CONF_OK) << error;
    }
    proxy_->redirect_to(conf);
    producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    ASSERT_NE(producer_, nullptr) << error;
    txn::init_transactions(producer_, 30s, "initialising transactions");
  }

  void TearDown() override {
    if (producer_ != nullptr) rd_kafka_destroy(producer_);
    proxy_.reset();
  }

  void produce(const std::string& value) {
    ASSERT_EQ(rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_PARTITION(0),
                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  // Transaction 1: its one record's request held by the proxy; the commit fails as abortable
  // (the record timed out) and the transaction is aborted.
  void abort_with_a_held_request() {
    txn::begin_transaction(producer_);
    proxy_->hold_next_produce();
    produce("aborted");
    bool abortable = false;
    try {
      txn::commit_transaction(producer_, 30s);
    } catch (const txn::AbortableTransactionError& failure) {
      abortable = true;
      std::printf("transaction 1: %s\n", failure.error.what());
    }
    ASSERT_TRUE(abortable) << "the commit of a transaction whose record timed out did not fail as abortable";
    ASSERT_TRUE(proxy_->holding()) << "the proxy holds no produce request";
    txn::abort_transaction(producer_, 30s);
  }

  // The held request goes to the broker; its answer.
  std::int16_t release_late_request() {
    proxy_->release();
    const std::optional<std::int16_t> answer = proxy_->answer(15s);
    if (!answer) {
      ADD_FAILURE() << "the broker did not answer the late produce request in 15 s";
      return -1;
    }
    std::printf("the late produce request: %s\n",
                rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(*answer)));
    return *answer;
  }

  // What a read_committed reader sees; it fails unless the partition's end is reached, that is
  // unless every transaction there was decided.
  std::vector<std::string> committed_values() {
    std::vector<std::string> values;
    for (const auto& record : read_topic(bootstrap_, topic_, true, 30s))
      values.push_back(record.value.value_or(""));
    return values;
  }

  std::string bootstrap_;
  std::string topic_;
  std::unique_ptr<HoldingProxy> proxy_;
  rd_kafka_t* producer_ = nullptr;
};

TEST_F(LateProduce, AfterTheAbortItOpensNoTransaction) {
  abort_with_a_held_request();
  EXPECT_NE(release_late_request(), RD_KAFKA_RESP_ERR_NO_ERROR) << "the broker appended the late record";
  txn::begin_transaction(producer_);
  produce("committed");
  txn::commit_transaction(producer_, 30s);
  EXPECT_EQ(committed_values(), std::vector<std::string>{"committed"});
}

TEST_F(LateProduce, WhileTheNextTransactionWritesThePartitionItDoesNotJoinIt) {
  abort_with_a_held_request();
  txn::begin_transaction(producer_);
  produce("committed");
  ASSERT_EQ(rd_kafka_flush(producer_, 10'000),
            RD_KAFKA_RESP_ERR_NO_ERROR);  // the partition is in transaction 2
  EXPECT_NE(release_late_request(), RD_KAFKA_RESP_ERR_NO_ERROR) << "the broker appended the late record";
  txn::commit_transaction(producer_, 30s);
  EXPECT_EQ(committed_values(), std::vector<std::string>{"committed"});
}

}  // namespace
}  // namespace processor::testing
