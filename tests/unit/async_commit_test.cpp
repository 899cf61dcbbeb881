// Automatic commits through a store that answers later (OffsetStore::begin_store_offsets, as
// KafkaOffsetStore does): the caller never waits, at most one is in flight, its answer is taken by
// the next trigger, poll() or commit(), and a failed one keeps its offsets pending.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "processor/kafka.hpp"

namespace processor::kafka {
namespace {

// An in-memory store whose begin_store_offsets() stores nothing until the test answers.
class AnswersLaterStore : public InMemoryOffsetStore {
 public:
  struct Sent {
    std::vector<PartitionOffset> offsets;
    bool answered = false;
    std::optional<StateError> error;
  };

  std::unique_ptr<PendingStore> begin_store_offsets(std::string_view group,
                                                    std::span<const PartitionOffset> offsets) override {
    sent_.push_back(std::make_shared<Sent>());
    sent_.back()->offsets.assign(offsets.begin(), offsets.end());
    return std::make_unique<Pending>(*this, std::string(group), sent_.back());
  }

  // Answers the commit sent `index`-th: stores its offsets, or fails with `error`.
  void answer(std::size_t index, std::optional<StateError> error = std::nullopt) {
    Sent& sent = *sent_.at(index);
    sent.answered = true;
    sent.error = std::move(error);
  }
  // Makes a wait with a timeout answer the commit under way successfully, as a store whose
  // answer arrives within the timeout.
  void answer_when_waited() { answer_when_waited_ = true; }

  std::size_t sent() const { return sent_.size(); }
  const std::vector<PartitionOffset>& offsets_of(std::size_t index) const { return sent_.at(index)->offsets; }

 private:
  class Pending : public PendingStore {
   public:
    Pending(AnswersLaterStore& store, std::string group, std::shared_ptr<Sent> sent)
        : store_(store), group_(std::move(group)), sent_(std::move(sent)) {}
    bool wait(std::chrono::milliseconds timeout) override {
      if (!sent_->answered && timeout.count() > 0 && store_.answer_when_waited_) sent_->answered = true;
      return sent_->answered;
    }
    void get() override {
      if (sent_->error) throw *sent_->error;
      store_.store_offsets(group_, sent_->offsets);
    }

   private:
    AnswersLaterStore& store_;
    std::string group_;
    std::shared_ptr<Sent> sent_;
  };

  std::vector<std::shared_ptr<Sent>> sent_;
  bool answer_when_waited_ = false;
};

StateError fenced() {
  return StateError(ErrorKind::Kafka,
                    "OffsetCommit refused: Broker: Specified group generation id is not valid");
}

class AsyncCommit : public ::testing::Test {
 protected:
  OffsetManagerOptions no_backoff() {
    OffsetManagerOptions options;
    options.auto_commit_retry_backoff = std::chrono::milliseconds(0);
    return options;
  }

  std::shared_ptr<AnswersLaterStore> store_ = std::make_shared<AnswersLaterStore>();
  OffsetManager manager_{"group", nullptr, store_, OffsetCommitStrategy::every_n_events(2), no_backoff()};
};

TEST_F(AsyncCommit, AnAutomaticCommitIsSentAndAppliedWhenAnswered) {
  manager_.update_offset("t", 0, 5);
  manager_.update_offset("t", 0, 6);  // the second event triggers
  ASSERT_EQ(store_->sent(), 1u);
  EXPECT_EQ(store_->offsets_of(0).at(0).second.offset, 6);
  EXPECT_FALSE(store_->get_offset("group", {"t", 0})) << "nothing stored before the answer";
  EXPECT_EQ(manager_.get_all_pending().at({"t", 0}).offset, 6) << "sent, not yet committed: still pending";
  EXPECT_EQ(manager_.stats().total_commits, 0u);

  store_->answer(0);
  EXPECT_EQ(manager_.poll(), 0u) << "poll() takes the answer; under every_n_events it commits nothing itself";
  EXPECT_EQ(manager_.get_all_committed().at({"t", 0}).offset, 6);
  EXPECT_TRUE(manager_.get_all_pending().empty());
  EXPECT_EQ(store_->get_offset("group", {"t", 0})->offset, 6);
  EXPECT_EQ(manager_.stats().successful_commits, 1u);
}

TEST_F(AsyncCommit, AtMostOneIsInFlightAndTheNextTakesWhatCameMeanwhile) {
  manager_.update_offset("t", 0, 1);
  manager_.update_offset("t", 0, 2);
  for (std::int64_t offset = 3; offset <= 10; ++offset) manager_.update_offset("t", 0, offset);
  EXPECT_EQ(store_->sent(), 1u) << "every trigger while one is in flight waits for its answer";
  store_->answer(0);
  manager_.update_offset("t", 0, 11);  // a trigger takes the answer, then sends what is pending
  ASSERT_EQ(store_->sent(), 2u);
  EXPECT_EQ(store_->offsets_of(1).at(0).second.offset, 11);
  EXPECT_EQ(manager_.get_all_committed().at({"t", 0}).offset, 2);
}

TEST_F(AsyncCommit, AFailedAnswerKeepsTheOffsetsPendingAndTheNextTriggerSendsThemAgain) {
  manager_.update_offset("t", 0, 1);
  manager_.update_offset("t", 0, 2);
  store_->answer(0, fenced());
  EXPECT_NO_THROW(manager_.poll()) << "a failed automatic commit is counted and logged, not thrown";
  EXPECT_EQ(manager_.stats().failed_commits, 1u);
  EXPECT_EQ(manager_.get_all_pending().at({"t", 0}).offset, 2);
  EXPECT_TRUE(manager_.get_all_committed().empty());

  manager_.update_offset("t", 1, 8);  // the events before the failure still count: this one triggers
  ASSERT_EQ(store_->sent(), 2u);
  std::map<std::string, std::int64_t> resent;
  for (const auto& [tp, info] : store_->offsets_of(1)) resent[tp.to_key()] = info.offset;
  EXPECT_EQ(resent, (std::map<std::string, std::int64_t>{{"t:0", 2}, {"t:1", 8}}));
  store_->answer(1);
  manager_.poll();
  EXPECT_EQ(store_->get_offset("group", {"t", 0})->offset, 2);
  EXPECT_EQ(store_->get_offset("group", {"t", 1})->offset, 8);
}

TEST_F(AsyncCommit, CommitWaitsForTheOneInFlightAndLeavesNone) {
  manager_.update_offset("t", 0, 1);
  manager_.update_offset("t", 0, 2);
  manager_.update_offset("t", 0, 3);
  store_->answer_when_waited();
  EXPECT_EQ(manager_.commit(), 1u) << "offset 3 is committed after the in-flight 2";
  EXPECT_EQ(store_->get_offset("group", {"t", 0})->offset, 3);
  EXPECT_EQ(manager_.get_all_committed().at({"t", 0}).offset, 3);
  EXPECT_EQ(manager_.stats().successful_commits, 2u);
}

TEST_F(AsyncCommit, AResetWhileACommitIsInFlightWins) {
  manager_.update_offset("t", 0, 1);
  manager_.update_offset("t", 0, 20);
  ASSERT_EQ(store_->sent(), 1u);
  EXPECT_EQ(manager_.reset_offset("t", 0, OffsetResetStrategy::specific(4)), 4);
  store_->answer(0);
  manager_.poll();
  EXPECT_EQ(manager_.get_all_committed().at({"t", 0}).offset, 4)
      << "the answer of the older commit does not undo it";
  EXPECT_EQ(manager_.get_offset("t", 0), 4);
}

TEST_F(AsyncCommit, WhatTheStoreRefusesBeforeSendingIsThrownAsBefore) {
  class RefusingStore : public InMemoryOffsetStore {
   public:
    std::unique_ptr<PendingStore> begin_store_offsets(std::string_view,
                                                      std::span<const PartitionOffset>) override {
      throw StateError(ErrorKind::Kafka, "refusing to commit: the partition is not assigned to this member");
    }
  };
  OffsetManager manager("group", nullptr, std::make_shared<RefusingStore>(),
                        OffsetCommitStrategy::every_n_events(1), no_backoff());
  EXPECT_THROW(manager.update_offset("t", 0, 1), StateError);
  EXPECT_EQ(manager.stats().failed_commits, 1u);
  EXPECT_EQ(manager.get_all_pending().at({"t", 0}).offset, 1);
}

}  // namespace
}  // namespace processor::kafka
