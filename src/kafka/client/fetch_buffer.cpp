#include "kafka/client/fetch_buffer.hpp"

#include <algorithm>

namespace processor::kafka::internal {

FetchBuffer::FetchBuffer(rd_kafka_t* rk) : queue_(rd_kafka_queue_get_consumer(rk)), messages_(kMaxBatch) {}

FetchBuffer::~FetchBuffer() { clear(); }

void FetchBuffer::clear() noexcept {
  for (std::size_t i = next_; i < end_; ++i) rd_kafka_message_destroy(messages_[i]);
  next_ = end_ = 0;
}

void FetchBuffer::fill(int timeout_ms) {
  if (!queue_) return;
  if (!empty()) return top_up();
  next_ = end_ = 0;
  if (last_fill_ > 0) {
    // The last batch's rate (records handed out and handled, with whatever the caller did
    // between its polls) sizes the next batch to the budget: shrinking at once, growing at most
    // twofold per batch.
    const double took = std::chrono::duration<double>(Clock::now() - last_filled_at_).count();
    const double budget = std::chrono::duration<double>(kBatchBudget).count();
    const std::size_t most = std::min(kMaxBatch, 2 * batch_);
    batch_ = took <= 0 ? most
                       : static_cast<std::size_t>(std::clamp(static_cast<double>(last_fill_) * budget / took,
                                                             1.0, static_cast<double>(most)));
  }
  // A batch call returns once its batch is full or its timeout is up, and a poll must return as
  // soon as a record is there: a wait is for the first record only.
  const std::size_t size = timeout_ms > 0 ? 1 : batch_;
  open_room(0, size);
  const ssize_t taken = rd_kafka_consume_batch_queue(queue_.get(), timeout_ms, messages_.data(), size);
  fill_end_ = 0;
  end_ = taken > 0 ? static_cast<std::size_t>(taken) : 0;
  filled_at_ = 0;
  last_fill_ = end_;
  last_filled_at_ = last_heard_ = Clock::now();
}

void FetchBuffer::top_up() {
  // The records left move to the front, and the call takes at most one record into the room
  // behind them: the callbacks queued are served on the way to it (librdkafka pauses the
  // partitions for a rebalance, and the records queued before it are skipped as outdated), and
  // the handler is slower than the batch foresaw. A callback inside may drop() records left:
  // the one taken then moves down to close the gap.
  filled_at_ = end_;
  if (end_ - next_ == messages_.size()) return;
  std::move(messages_.begin() + static_cast<std::ptrdiff_t>(next_),
            messages_.begin() + static_cast<std::ptrdiff_t>(end_), messages_.begin());
  end_ -= next_;
  next_ = 0;
  const std::size_t room_at = end_;
  open_room(room_at, 1);
  const bool took = rd_kafka_consume_batch_queue(queue_.get(), 0, messages_.data() + room_at, 1) == 1;
  fill_end_ = 0;
  filled_at_ = end_;
  if (took) {
    messages_[end_++] = messages_[room_at];
    ++last_fill_;
  }
  last_heard_ = Clock::now();
}

void FetchBuffer::open_room(std::size_t at, std::size_t size) noexcept {
  std::fill_n(messages_.begin() + static_cast<std::ptrdiff_t>(at), size, nullptr);
  fill_at_ = at;
  fill_end_ = at + size;
}

}  // namespace processor::kafka::internal
