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
  if (!empty() || !queue_) return;
  next_ = end_ = 0;
  if (last_fill_ > 0) {
    // The last batch's rate (records handed out and handled, with whatever the caller did
    // between its polls) sizes the next batch to the budget: shrinking at once, growing at most
    // twofold per batch.
    const double took = std::chrono::duration<double>(Clock::now() - last_filled_at_).count();
    const double budget = std::chrono::duration<double>(kBatchBudget).count();
    const std::size_t most = std::min(kMaxBatch, 2 * batch_);
    batch_ = took <= 0 ? most
                       : static_cast<std::size_t>(std::clamp(static_cast<double>(last_fill_) * budget / took, 1.0,
                                                             static_cast<double>(most)));
  }
  // A batch call returns once its batch is full or its timeout is up, and a poll must return as
  // soon as a record is there: a wait is for the first record only.
  const ssize_t taken = rd_kafka_consume_batch_queue(queue_.get(), timeout_ms, messages_.data(), timeout_ms > 0 ? 1 : batch_);
  end_ = taken > 0 ? static_cast<std::size_t>(taken) : 0;
  last_fill_ = end_;
  last_filled_at_ = last_heard_ = Clock::now();
}

void FetchBuffer::keep_alive() noexcept {
  const Clock::time_point now = Clock::now();
  if (now - last_heard_ < kKeepAlive) return;
  // No record is taken and no callback served: rd_kafka_app_polled() only.
  rd_kafka_consume_batch_queue(queue_.get(), 0, messages_.data(), 0);
  last_heard_ = now;
}

}  // namespace processor::kafka::internal
