#include "processor/kafka/partition_acks.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <limits>
#include <thread>

#include "encoding/base64.hpp"
#include "encoding/varint.hpp"
#include "kafka/acks/ack_metadata.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/error.hpp"

namespace processor::kafka {
namespace {

using encoding::base64_encode;
using encoding::base64_size;
using encoding::put_varint;
using encoding::varint_size;
using internal::kMaxAckOffset;
using processor::detail::MutexLock;
using processor::detail::UniqueLock;

constexpr std::size_t kMinRingWords = 4;  // 256 offsets before the first allocation grows it

// The bits of word `word` (offsets 64 * word .. 64 * word + 63) for offsets in [lo, hi].
std::uint64_t bits_in(std::int64_t word, std::int64_t lo, std::int64_t hi) noexcept {
  const std::int64_t word_first = word * 64;
  lo = std::max(lo, word_first);
  hi = std::min(hi, word_first + 63);
  if (lo > hi) return 0;
  return (~std::uint64_t{0} >> (63 - (hi - word_first))) & (~std::uint64_t{0} << (lo - word_first));
}

// A spin lock: ack() holds it for a few nanoseconds, and one atomic exchange plus a plain
// release store cost less than std::mutex's out-of-line lock and unlock (measured single-
// threaded: 5-7 ns per ack against 8.5-10.5 ns). Waiters yield after a short spin, so a
// preempted holder costs a time slice, not a burnt core.
class PROCESSOR_CAPABILITY("mutex") SpinMutex {
 public:
  void lock() noexcept PROCESSOR_ACQUIRE() {
    // acquire: the holder's writes are visible to the next holder.
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire);) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins >= 100) {
          std::this_thread::yield();
        } else {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        }
      }
    }
  }
  // release: pairs with lock()'s acquire.
  void unlock() noexcept PROCESSOR_RELEASE() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

enum class AckRejection { BelowCommittable, NeverTracked, Gap, AlreadyAcked, RestoredAcked };

[[noreturn]] void reject_ack(std::int64_t offset, AckRejection why, std::int64_t committable) {
  std::string message = "cannot acknowledge offset " + std::to_string(offset) + ": ";
  switch (why) {
    case AckRejection::BelowCommittable:
      message += "it is below the committable offset " + std::to_string(committable) +
                 " (already acknowledged, or never tracked)";
      break;
    case AckRejection::NeverTracked:
      message += "it was never tracked";
      break;
    case AckRejection::Gap:
      message += "it was never tracked (skipped by tracking)";
      break;
    case AckRejection::AlreadyAcked:
      message += "it is already acknowledged";
      break;
    case AckRejection::RestoredAcked:
      message += "it was acknowledged before the restart";
      break;
  }
  throw StateError(ErrorKind::InvalidArgument, message);
}

void validate(const PartitionAcksOptions& options) {
  if (options.max_outstanding == 0) {
    throw StateError(ErrorKind::InvalidArgument, "invalid max_outstanding 0: it must be at least 1");
  }
  if (options.max_window_offsets == 0) {
    throw StateError(ErrorKind::InvalidArgument, "invalid max_window_offsets 0: it must be at least 1");
  }
  if (options.metadata_budget_bytes < PartitionAcksOptions::kMinMetadataBudgetBytes) {
    throw StateError(ErrorKind::InvalidArgument,
                     "metadata_budget_bytes " + std::to_string(options.metadata_budget_bytes) +
                         " is below the minimum " +
                         std::to_string(PartitionAcksOptions::kMinMetadataBudgetBytes));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// AckedSet

bool AckedSet::contains(std::int64_t offset) const noexcept {
  const auto it =
      std::upper_bound(acked.begin(), acked.end(), offset,
                       [](std::int64_t value, const Range& range) { return value < range.first; });
  return it != acked.begin() && offset <= std::prev(it)->last;
}

std::uint64_t AckedSet::size() const noexcept {
  std::uint64_t total = 0;
  for (const auto& range : acked) total += static_cast<std::uint64_t>(range.last - range.first) + 1;
  return total;
}

// ---------------------------------------------------------------------------------------------
// PartitionAcks::State
//
// Offsets are bits in a ring of words, indexed by absolute word number (offset / 64) modulo the
// ring size. The live words are those from committable's to the end offset's; every other word
// is zero. Bits below committable in its word are stale and always masked off.
//
// Per offset: tracked and acked. At or below last_tracked: tracked && !acked is an outstanding
// record, !tracked a gap. Above last_tracked (only after a restore): tracked && acked is a
// restored acknowledgement, neither is a record not yet re-consumed, which holds committable.

struct PartitionAcks::State {
  struct Word {
    std::uint64_t tracked = 0;
    std::uint64_t acked = 0;
  };

  State(std::int64_t base, PartitionAcksOptions opts)
      : options(opts), base_offset(base), committable(base), last_tracked(base - 1), restored_end(base - 1) {
    ring.resize(kMinRingWords);
  }

  const PartitionAcksOptions options;
  const std::int64_t base_offset;

  mutable SpinMutex mutex;
  std::vector<Word> ring PROCESSOR_GUARDED_BY(mutex);  // size is a power of two
  std::int64_t committable PROCESSOR_GUARDED_BY(mutex);
  std::int64_t last_tracked PROCESSOR_GUARDED_BY(mutex);  // base - 1 before the first track
  std::int64_t restored_end PROCESSOR_GUARDED_BY(mutex);  // the highest restored ack, else base - 1
  std::size_t outstanding PROCESSOR_GUARDED_BY(mutex) = 0;
  // An upper bound on the acknowledged runs above committable in every state that acks alone
  // can reach: the current runs, plus one per outstanding record except the lowest (acking a
  // record adds at most one run; acking the lowest only removes runs).
  std::uint64_t acked_runs_bound PROCESSOR_GUARDED_BY(mutex) = 0;
  // The offset try_track() last refused after counting runs exactly; reset by every ack, so that
  // a caller retrying while paused does not rescan an unchanged window.
  std::int64_t refused_offset PROCESSOR_GUARDED_BY(mutex) = -1;
  bool is_revoked PROCESSOR_GUARDED_BY(mutex) = false;

  std::int64_t end_offset() const noexcept PROCESSOR_REQUIRES(mutex) {
    return std::max(last_tracked, restored_end);
  }

  Word& at(std::int64_t word) noexcept PROCESSOR_REQUIRES(mutex) {
    return ring[static_cast<std::size_t>(word) & (ring.size() - 1)];
  }
  const Word& at(std::int64_t word) const noexcept PROCESSOR_REQUIRES(mutex) {
    return ring[static_cast<std::size_t>(word) & (ring.size() - 1)];
  }

  // Offsets that hold committable in word `word`, from `from` up to the end offset.
  std::uint64_t blockers(std::int64_t word, std::int64_t from, std::int64_t end) const noexcept
      PROCESSOR_REQUIRES(mutex) {
    const Word& w = at(word);
    return ((w.tracked & ~w.acked) | (~w.acked & bits_in(word, last_tracked + 1, end))) &
           bits_in(word, from, end);
  }

  // Moves committable to the lowest blocker at or above it, zeroing the words it leaves.
  void advance_committable() noexcept PROCESSOR_REQUIRES(mutex) {
    const std::int64_t end = end_offset();
    std::int64_t next = end + 1;
    if (committable <= end) {
      for (std::int64_t word = committable >> 6, last_word = end >> 6; word <= last_word; ++word) {
        if (const std::uint64_t found = blockers(word, committable, end); found != 0) {
          next = word * 64 + std::countr_zero(found);
          break;
        }
      }
    }
    move_committable(next);
  }

  // Sets committable to `next` (>= committable), zeroing the live words below its word.
  void move_committable(std::int64_t next) noexcept PROCESSOR_REQUIRES(mutex) {
    const std::int64_t first_word = committable >> 6;
    const std::int64_t last_live_word = std::max(first_word, end_offset() >> 6);
    const std::int64_t stop = std::min(next >> 6, last_live_word + 1);
    for (std::int64_t word = first_word; word < stop; ++word) at(word) = Word{};
    committable = next;
  }

  // Makes the ring hold the words of [committable, new_end]: grows it, or shrinks it when a
  // quarter would do (amortized O(1) per offset).
  void fit_ring(std::int64_t new_end) PROCESSOR_REQUIRES(mutex) {
    const std::int64_t first_word = committable >> 6;
    const auto needed = static_cast<std::size_t>(std::max(first_word, new_end >> 6) - first_word + 1);
    std::size_t size = ring.size();
    if (needed > size) {
      size = std::bit_ceil(needed);
    } else if (needed * 4 <= size && size > kMinRingWords) {
      size = std::max(kMinRingWords, std::bit_ceil(needed * 2));
    } else {
      return;
    }
    std::vector<Word> resized(size);
    const std::int64_t old_last_word = std::max(first_word, end_offset() >> 6);
    for (std::int64_t word = first_word; word <= old_last_word; ++word) {
      resized[static_cast<std::size_t>(word) & (size - 1)] = at(word);
    }
    ring.swap(resized);
  }

  // The first offset in [from, to] whose acked bit is `acked`, else to + 1.
  std::int64_t find_acked(std::int64_t from, std::int64_t to, bool acked) const noexcept
      PROCESSOR_REQUIRES(mutex) {
    if (from > to) return to + 1;
    for (std::int64_t word = from >> 6, last_word = to >> 6; word <= last_word; ++word) {
      const std::uint64_t bits = (acked ? at(word).acked : ~at(word).acked) & bits_in(word, from, to);
      if (bits != 0) return word * 64 + std::countr_zero(bits);
    }
    return to + 1;
  }

  // The maximal runs of acknowledged offsets in [from, to]; `from` is not acknowledged.
  std::uint64_t count_acked_runs(std::int64_t from, std::int64_t to) const noexcept
      PROCESSOR_REQUIRES(mutex) {
    std::uint64_t runs = 0;
    bool previous_acked = false;
    for (std::int64_t word = from >> 6, last_word = to >> 6; from <= to && word <= last_word; ++word) {
      const std::uint64_t acked = at(word).acked & bits_in(word, from, to);
      runs +=
          static_cast<std::uint64_t>(std::popcount(acked & ~(acked << 1 | std::uint64_t{previous_acked})));
      previous_acked = (acked >> 63) != 0;
    }
    return runs;
  }

  // The size of the base64 metadata that can encode any state reachable from the current one
  // by acknowledgements, given committable `from`, end offset `end` and a bound on runs.
  // Every run length and bitset length is at most the window; committable at most end + 1.
  static std::size_t worst_metadata_size(std::int64_t from, std::int64_t end,
                                         std::uint64_t runs_bound) noexcept {
    const std::uint64_t window = end >= from ? static_cast<std::uint64_t>(end - from) + 1 : 0;
    const std::size_t header = internal::ack_metadata_header_size(end + 1);
    const std::uint64_t bitset = varint_size(window) + (window + 7) / 8;
    const std::uint64_t run_lengths = 2 * runs_bound * varint_size(window);
    return base64_size(header + static_cast<std::size_t>(std::min(bitset, run_lengths)));
  }

  // The binary metadata of the current state (before base64); with `out` null, only its size.
  std::size_t encode_binary(std::string* out) const PROCESSOR_REQUIRES(mutex) {
    const std::int64_t end = end_offset();
    std::size_t run_lengths = 0;
    std::int64_t highest_acked = committable - 1;
    for (std::int64_t pos = committable;;) {
      const std::int64_t acked_from = find_acked(pos, end, true);
      if (acked_from > end) break;
      const std::int64_t acked_to = find_acked(acked_from, end, false);
      run_lengths += varint_size(static_cast<std::uint64_t>(acked_from - pos)) +
                     varint_size(static_cast<std::uint64_t>(acked_to - acked_from));
      highest_acked = acked_to - 1;
      pos = acked_to;
    }
    const auto bit_count = static_cast<std::uint64_t>(highest_acked - committable + 1);
    const std::size_t bitset = varint_size(bit_count) + static_cast<std::size_t>((bit_count + 7) / 8);
    const bool use_bitset = bitset < run_lengths;
    const std::size_t size =
        internal::ack_metadata_header_size(committable) + (use_bitset ? bitset : run_lengths);
    if (out == nullptr) return size;

    out->reserve(size);
    internal::put_ack_metadata_header(*out, committable,
                                      use_bitset ? internal::kAckBitset : internal::kAckRunLengths);
    if (use_bitset) {
      put_varint(*out, bit_count);
      for (std::uint64_t bit = 0; bit < bit_count; bit += 8) {
        const std::int64_t offset = committable + static_cast<std::int64_t>(bit);
        const std::int64_t word = offset >> 6;
        const int shift = static_cast<int>(offset & 63);
        std::uint64_t bits = at(word).acked >> shift;
        if (shift > 56 && word < (highest_acked >> 6)) bits |= at(word + 1).acked << (64 - shift);
        bits &= bits_in(0, 0, std::min<std::int64_t>(7, highest_acked - offset));
        out->push_back(static_cast<char>(bits & 0xff));
      }
    } else {
      for (std::int64_t pos = committable;;) {
        const std::int64_t acked_from = find_acked(pos, end, true);
        if (acked_from > end) break;
        const std::int64_t acked_to = find_acked(acked_from, end, false);
        put_varint(*out, static_cast<std::uint64_t>(acked_from - pos));
        put_varint(*out, static_cast<std::uint64_t>(acked_to - acked_from));
        pos = acked_to;
      }
    }
    assert(out->size() == size);
    return size;
  }
};

// ---------------------------------------------------------------------------------------------
// PartitionAcks

PartitionAcks::PartitionAcks(std::int64_t base, PartitionAcksOptions options) {
  validate(options);
  if (base < 0 || base > kMaxAckOffset) {
    throw StateError(ErrorKind::InvalidArgument, "base offset " + std::to_string(base) + " is out of range");
  }
  state_ = std::make_unique<State>(base, options);
}

PartitionAcks::PartitionAcks(const AckedSet& restored, PartitionAcksOptions options)
    : PartitionAcks(restored.committable, options) {
  std::int64_t previous_last = restored.committable;
  for (const auto& range : restored.acked) {
    if (range.first <= previous_last || range.last < range.first || range.last > kMaxAckOffset) {
      throw StateError(ErrorKind::InvalidArgument,
                       "restored acknowledgements [" + std::to_string(range.first) + ", " +
                           std::to_string(range.last) + "] are not ascending, disjoint and above " +
                           std::to_string(restored.committable));
    }
    previous_last = range.last;
  }
  if (restored.acked.empty()) return;

  State& s = *state_;
  const std::int64_t end = restored.acked.back().last;
  const auto window = static_cast<std::uint64_t>(end - restored.committable) + 1;
  if (window > options.max_window_offsets) {
    throw StateError(ErrorKind::InvalidArgument, "restored acknowledgements span " + std::to_string(window) +
                                                     " offsets, more than max_window_offsets " +
                                                     std::to_string(options.max_window_offsets));
  }
  s.fit_ring(end);
  s.restored_end = end;
  for (const auto& range : restored.acked) {
    for (std::int64_t word = range.first >> 6, last_word = range.last >> 6; word <= last_word; ++word) {
      const std::uint64_t bits = bits_in(word, range.first, range.last);
      s.at(word).tracked |= bits;
      s.at(word).acked |= bits;
    }
  }
  s.acked_runs_bound = s.count_acked_runs(s.committable, end);
  if (options.unbounded_metadata) return;
  if (const std::size_t worst = State::worst_metadata_size(s.committable, end, s.acked_runs_bound);
      worst > options.metadata_budget_bytes) {
    throw StateError(ErrorKind::InvalidArgument, "restored acknowledgements need up to " +
                                                     std::to_string(worst) +
                                                     " bytes of metadata, more than metadata_budget_bytes " +
                                                     std::to_string(options.metadata_budget_bytes));
  }
}

PartitionAcks::~PartitionAcks() = default;
PartitionAcks::PartitionAcks(PartitionAcks&& other) noexcept = default;
PartitionAcks& PartitionAcks::operator=(PartitionAcks&& other) noexcept = default;

bool PartitionAcks::try_track(std::int64_t offset) {
  State& s = *state_;
  UniqueLock lock(s.mutex);
  if (s.is_revoked) {
    lock.unlock();
    throw StateError(ErrorKind::InvalidArgument,
                     "cannot track offset " + std::to_string(offset) + ": revoked");
  }
  if (offset < s.base_offset || offset <= s.last_tracked || offset > kMaxAckOffset) {
    const std::int64_t base = s.base_offset;
    const std::int64_t last = s.last_tracked;
    lock.unlock();
    std::string why = offset < base ? "it is below the base offset " + std::to_string(base)
                      : offset > kMaxAckOffset
                          ? std::string("it is out of range")
                          : "it is not above the last tracked offset " + std::to_string(last);
    throw StateError(ErrorKind::InvalidArgument,
                     "cannot track offset " + std::to_string(offset) + ": " + why);
  }
  // Between last_tracked and committable lie only restored acknowledgements (a record not yet
  // re-consumed would be committable); at or above committable the bits say.
  if (offset <= s.restored_end &&
      (offset < s.committable || (s.at(offset >> 6).acked & (std::uint64_t{1} << (offset & 63))) != 0)) {
    lock.unlock();
    throw StateError(ErrorKind::InvalidArgument, "cannot track offset " + std::to_string(offset) +
                                                     ": it was acknowledged before the restart");
  }

  // With nothing outstanding the new record becomes committable: what lay below it was acked,
  // a gap, or a restored record that tracking skipped (now a gap).
  const std::int64_t new_committable = s.outstanding == 0 ? offset : s.committable;
  const std::int64_t new_end = std::max(offset, s.restored_end);
  if (static_cast<std::uint64_t>(new_end - new_committable) + 1 > s.options.max_window_offsets) return false;
  if (s.outstanding >= s.options.max_outstanding) return false;
  const std::uint64_t reservation = new_committable == offset ? 0 : 1;
  std::uint64_t runs_bound = s.acked_runs_bound;
  if (!s.options.unbounded_metadata &&
      State::worst_metadata_size(new_committable, new_end, runs_bound + reservation) >
          s.options.metadata_budget_bytes) {
    if (s.refused_offset == offset) return false;
    // The bound only grows between exact counts; count the runs now and check once more.
    const std::uint64_t others = s.outstanding > 0 ? s.outstanding - 1 : 0;
    runs_bound = s.count_acked_runs(new_committable, s.end_offset()) + others;
    if (new_committable == s.committable) s.acked_runs_bound = runs_bound;
    if (State::worst_metadata_size(new_committable, new_end, runs_bound + reservation) >
        s.options.metadata_budget_bytes) {
      s.refused_offset = offset;
      return false;
    }
  }

  s.move_committable(new_committable);
  s.fit_ring(new_end);
  s.at(offset >> 6).tracked |= std::uint64_t{1} << (offset & 63);
  s.last_tracked = offset;
  ++s.outstanding;
  s.acked_runs_bound = runs_bound + reservation;
  s.refused_offset = -1;
  return true;
}

bool PartitionAcks::ack(std::int64_t offset) {
  State& s = *state_;
  UniqueLock lock(s.mutex);
  AckRejection why = AckRejection::NeverTracked;
  if (offset < s.committable) {
    why = AckRejection::BelowCommittable;
  } else if (offset > s.last_tracked) {
    why = offset <= s.restored_end && (s.at(offset >> 6).acked & (std::uint64_t{1} << (offset & 63))) != 0
              ? AckRejection::RestoredAcked
              : AckRejection::NeverTracked;
  } else {
    State::Word& word = s.at(offset >> 6);
    const std::uint64_t bit = std::uint64_t{1} << (offset & 63);
    if ((word.tracked & bit) != 0 && (word.acked & bit) == 0) {
      if (s.is_revoked) return false;
      word.acked |= bit;
      --s.outstanding;
      s.refused_offset = -1;
      if (offset == s.committable) s.advance_committable();
      return true;
    }
    why = (word.tracked & bit) == 0 ? AckRejection::Gap : AckRejection::AlreadyAcked;
  }
  const std::int64_t committable = s.committable;
  lock.unlock();
  reject_ack(offset, why, committable);
}

std::int64_t PartitionAcks::committable() const {
  MutexLock lock(state_->mutex);
  return state_->committable;
}

std::size_t PartitionAcks::outstanding() const {
  MutexLock lock(state_->mutex);
  return state_->outstanding;
}

std::string PartitionAcks::encode_metadata() const {
  std::string binary;
  {
    MutexLock lock(state_->mutex);
    state_->encode_binary(&binary);
  }
  std::string metadata = base64_encode(binary);
  // The invariant try_track() keeps; the tests check it in release builds too.
  assert(state_->options.unbounded_metadata || metadata.size() <= state_->options.metadata_budget_bytes);
  return metadata;
}

std::size_t PartitionAcks::encoded_size() const {
  MutexLock lock(state_->mutex);
  return base64_size(state_->encode_binary(nullptr));
}

PartitionAcks::Snapshot PartitionAcks::snapshot() const {
  Snapshot snapshot;
  std::string binary;
  {
    MutexLock lock(state_->mutex);
    snapshot.committable = state_->committable;
    snapshot.acked_above =
        state_->find_acked(state_->committable, state_->end_offset(), true) <= state_->end_offset();
    state_->encode_binary(&binary);
  }
  snapshot.metadata = base64_encode(binary);
  assert(state_->options.unbounded_metadata ||
         snapshot.metadata.size() <= state_->options.metadata_budget_bytes);
  return snapshot;
}

AckedSet PartitionAcks::acked_set() const {
  AckedSet set;
  const State& s = *state_;
  MutexLock lock(s.mutex);
  set.committable = s.committable;
  const std::int64_t end = s.end_offset();
  for (std::int64_t pos = s.committable;;) {
    const std::int64_t acked_from = s.find_acked(pos, end, true);
    if (acked_from > end) break;
    const std::int64_t acked_to = s.find_acked(acked_from, end, false);
    set.acked.push_back({acked_from, acked_to - 1});
    pos = acked_to;
  }
  return set;
}

void PartitionAcks::revoke() {
  MutexLock lock(state_->mutex);
  state_->is_revoked = true;
}

bool PartitionAcks::revoked() const {
  MutexLock lock(state_->mutex);
  return state_->is_revoked;
}

const PartitionAcksOptions& PartitionAcks::options() const noexcept { return state_->options; }

AckedSet PartitionAcks::decode_metadata(std::string_view metadata) {
  return internal::decode_ack_metadata(metadata);
}

}  // namespace processor::kafka
