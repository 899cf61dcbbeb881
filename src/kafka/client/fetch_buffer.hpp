#pragma once
// The records a consumer took from librdkafka's consumer queue in one call and has not handed out
// yet. Internal.
//
// rd_kafka_consumer_poll() returns one record per call and pays, per record, a clock read,
// librdkafka's max.poll.interval bookkeeping and the application position under the partition's
// lock. rd_kafka_consume_batch_queue() pays those once per call: the buffer takes up to a batch
// at a time and hands the records out one by one, in the queue's order.
//
// What the buffer holds librdkafka counts as consumed (its application position is past them),
// so nothing in it may be lost: a record is handed out, or dropped only where its partition is
// sought elsewhere or leaves this member (drop()).
//
// The batch adapts to how fast its records are handled: each batch is sized to what the last
// one's rate handles within kBatchBudget (at least 1, at most twice the last size and kMaxBatch).
// And a batch handed out slower than that is topped up (fill() while not empty) once kBatchBudget
// has passed since librdkafka last heard from the consumer, looked at every kLookEvery records:
// librdkafka serves its callbacks there (a rebalance, an error) and counts the consumer as polling
// (max.poll.interval.ms). So a handler that turns slow inside a batch neither makes the member
// leave its group nor holds a rebalance back until the batch is handed out. One thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kafka/rdkafka/handles.hpp"

namespace processor::kafka::internal {

class FetchBuffer {
 public:
  static constexpr std::size_t kFirstBatch = 16;
  static constexpr std::size_t kMaxBatch = 500;
  static constexpr std::chrono::milliseconds kBatchBudget{500};
  static constexpr std::size_t kLookEvery = 4;  // records between two looks at the clock

  // Reads `rk`'s consumer queue (rd_kafka_queue_get_consumer); `rk` must outlive the buffer.
  explicit FetchBuffer(rd_kafka_t* rk);
  ~FetchBuffer();
  FetchBuffer(const FetchBuffer&) = delete;
  FetchBuffer& operator=(const FetchBuffer&) = delete;

  bool empty() const noexcept { return next_ == end_; }

  // One call of librdkafka. When empty: with a timeout of 0, takes what the queue holds, up to a
  // batch; else waits up to `timeout_ms` for one record (a batch call would wait for a whole
  // batch). When not empty, a top-up: takes at most one record, behind the records left,
  // without waiting (top_up()). librdkafka serves callbacks (rebalances, errors) inside; a
  // callback may drop() records left, and learn how many records the call took before it
  // (taken_in_fill()).
  void fill(int timeout_ms);

  // From a callback inside fill(): its wait ends once the callback returns, instead of at its
  // timeout (rd_kafka_queue_yield: a flag on the queue, which the wait reads). Outside a wait,
  // the next wait on the queue returns at once, with nothing.
  void end_wait() noexcept {
    if (queue_) rd_kafka_queue_yield(queue_.get());
  }

  // From a callback inside fill(): the records that fill()'s call has taken so far. A call that
  // takes one record (a wait, a top-up) takes it after every callback it serves: 0 there. In a
  // batch, exact unless librdkafka purged outdated records from it earlier in the call (a seek,
  // a pause): then it counts them too.
  std::size_t taken_in_fill() const noexcept {
    std::size_t taken = 0;
    while (fill_at_ + taken < fill_end_ && messages_[fill_at_ + taken] != nullptr) ++taken;
    return taken;
  }

  // After fill(): destroys the records (and consumer errors) its call took that
  // `drop(index, topic, partition)` selects, `index` counting them in the order they were taken;
  // the others keep their order.
  template <class Predicate>
  void drop_filled(Predicate&& drop) {
    std::size_t index = 0;
    drop_in(filled_at_,
            [&](std::string_view topic, std::int32_t partition) { return drop(index++, topic, partition); });
  }

  // Whether librdkafka should hear from the consumer (a top-up) before the next record is handed
  // out: kBatchBudget has passed since it last did. Looks at the clock every kLookEvery calls.
  bool due() noexcept {
    if (++calls_ % kLookEvery != 0) return false;
    return Clock::now() - last_heard_ >= kBatchBudget;
  }

  // The next record, or null when empty.
  RdPtr<rd_kafka_message_t> pop() noexcept {
    if (next_ == end_) return nullptr;
    return RdPtr<rd_kafka_message_t>(messages_[next_++]);
  }

  // Destroys the buffered records (and consumer errors) that `drop(topic, partition)` selects;
  // the others keep their order.
  template <class Predicate>
  void drop(Predicate&& drop) {
    drop_in(next_, drop);
  }

  // Destroys every buffered record.
  void clear() noexcept;

 private:
  using Clock = std::chrono::steady_clock;

  // fill() while records are left.
  void top_up();
  // Nulls the room of one librdkafka call, [at, at + size), for taken_in_fill(): librdkafka
  // writes the records there in the order it takes them.
  void open_room(std::size_t at, std::size_t size) noexcept;
  // drop() over the buffered records from `first` on.
  template <class Predicate>
  void drop_in(std::size_t first, Predicate&& drop) {
    if (first >= end_) return;
    std::size_t kept = first;
    for (std::size_t i = first; i < end_; ++i) {
      rd_kafka_message_t* message = messages_[i];
      if (message->rkt != nullptr &&
          drop(std::string_view(rd_kafka_topic_name(message->rkt)), message->partition)) {
        rd_kafka_message_destroy(message);
      } else {
        messages_[kept++] = message;
      }
    }
    end_ = kept;
  }

  RdPtr<rd_kafka_queue_t> queue_;
  std::vector<rd_kafka_message_t*> messages_;
  std::size_t next_ = 0;
  std::size_t end_ = 0;
  std::size_t fill_at_ = 0;  // the room of the librdkafka call under way: [fill_at_, fill_end_)
  std::size_t fill_end_ = 0;
  std::size_t filled_at_ = 0;  // where the records of the last fill() begin; they end at end_
  std::size_t batch_ = kFirstBatch;
  std::size_t last_fill_ = 0;           // records taken by the last batch and its top-ups; 0: none to time
  std::size_t calls_ = 0;               // of due()
  Clock::time_point last_filled_at_{};  // when the last fill() returned
  Clock::time_point last_heard_{};      // librdkafka's last poll through this buffer
};

}  // namespace processor::kafka::internal
