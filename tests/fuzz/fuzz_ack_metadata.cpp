// Fuzz target: acknowledgement metadata (commit metadata written by PartitionAcks).
//
// Input: u8 flags, then the metadata. flags bit 0 (kBinary): the harness base64-encodes the
// rest, so that the fuzzer mutates the binary layout behind the text; otherwise the rest is the
// metadata text as it is. flags bit 1 (kOtherOffset): the stored offset is not the metadata's
// committable offset. flags bit 2 (kAdopt): the offset reaches the manager through
// adopt_start_position() instead of the store and restore().
// Contract: PartitionAcks::decode_metadata() returns a sane AckedSet (ranges ascending, disjoint,
// not adjacent, above committable, at most INT64_MAX - 1) that PartitionAcks re-encodes to
// metadata decoding to the same set, or throws StateError(Corruption); and
// OffsetManager::acked_after_restart() never throws: it returns that set, or nullopt (counted in
// OffsetStats::ack_metadata_ignored) exactly when the decoder throws or the metadata is of
// another offset. encode_ack_metadata() of the set decodes to it too.

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "encoding/base64.hpp"
#include "fuzz_contract.hpp"
#include "kafka/acks/ack_metadata.hpp"
#include "processor/kafka/offset_manager.hpp"
#include "processor/kafka/partition_acks.hpp"
#include "processor/kafka/state_backend_offset_store.hpp"
#include "processor/state/memory_state_backend.hpp"

namespace {

using namespace processor;
using namespace processor::kafka;
using fuzz::require;
using fuzz::returns_or_corruption;

constexpr std::uint8_t kBinary = 1 << 0;
constexpr std::uint8_t kOtherOffset = 1 << 1;
constexpr std::uint8_t kAdopt = 1 << 2;

constexpr std::int64_t kMaxAckOffset = std::numeric_limits<std::int64_t>::max() - 1;
// Restored windows up to this many offsets are re-encoded (the tracker holds 2 bits per offset).
constexpr std::uint64_t kMaxReencodedWindow = std::uint64_t{1} << 24;

void require_sane(const AckedSet& set) {
  require(set.committable >= 0 && set.committable <= kMaxAckOffset,
          "decoded a committable offset out of range");
  std::int64_t previous_last = set.committable;
  bool first_range = true;
  for (const auto& range : set.acked) {
    require(range.first <= range.last, "decoded an empty or reversed range");
    require(range.last <= kMaxAckOffset, "decoded an offset above INT64_MAX - 1");
    // The committable offset itself is never acknowledged; ranges are disjoint and not adjacent.
    require(range.first > previous_last + (first_range ? 0 : 1),
            "decoded ranges that overlap, touch or descend");
    previous_last = range.last;
    first_range = false;
  }
}

void require_round_trip(const AckedSet& set) {
  if (set.acked.empty() ||
      static_cast<std::uint64_t>(set.acked.back().last - set.committable) + 1 <= kMaxReencodedWindow) {
    PartitionAcksOptions options;
    options.max_window_offsets = kMaxReencodedWindow;
    options.metadata_budget_bytes = std::size_t{1} << 30;
    std::string metadata;
    try {
      metadata = PartitionAcks(set, options).encode_metadata();
    } catch (const std::exception& error) {
      fuzz::violation(std::string("PartitionAcks refused a decoded set: ") + error.what());
    }
    AckedSet again;
    require(returns_or_corruption("decoding re-encoded metadata",
                                  [&] { again = PartitionAcks::decode_metadata(metadata); }),
            "metadata re-encoded by PartitionAcks does not decode");
    require(again == set, "metadata re-encoded by PartitionAcks decodes to another set");
    require(internal::encode_ack_metadata(set) == metadata,
            "encode_ack_metadata() and PartitionAcks encode a set differently");
  } else {
    // Too wide for the default limits: the restoring constructor refuses it as an argument.
    try {
      PartitionAcks acks(set);
      fuzz::violation("PartitionAcks accepted a restored window wider than max_window_offsets");
    } catch (const StateError& error) {
      require(error.kind() == ErrorKind::InvalidArgument,
              "PartitionAcks refused a wide window with a kind other than InvalidArgument");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::silence_library_log();
  fuzz::InputReader input(data, size);
  const std::uint8_t flags = input.byte();
  const std::string_view rest = input.rest();
  const std::string metadata = (flags & kBinary) ? encoding::base64_encode(rest) : std::string(rest);

  AckedSet set;
  const bool decoded =
      returns_or_corruption("decode_metadata", [&] { set = PartitionAcks::decode_metadata(metadata); });
  if (decoded) {
    require_sane(set);
    require_round_trip(set);
  }

  // The metadata committed with an offset, as a restarted consumer finds it.
  OffsetInfo stored(decoded ? set.committable : 0);
  if (decoded && (flags & kOtherOffset)) stored.offset = set.committable == 0 ? 1 : set.committable - 1;
  stored.metadata = metadata;
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<StateBackendOffsetStore>(backend);
  OffsetManager manager("g", backend, store, OffsetCommitStrategy::manual());
  if (flags & kAdopt) {
    manager.adopt_start_position("orders", 0, stored.offset, stored);
  } else {
    store->store_offset("g", TopicPartition("orders", 0), stored);
    manager.restore();
  }
  std::optional<AckedSet> acked;
  try {
    acked = manager.acked_after_restart("orders", 0);
  } catch (const std::exception& error) {
    fuzz::violation(std::string("acked_after_restart() threw for what the metadata holds: ") + error.what());
  }
  const bool trusted = decoded && !metadata.empty() && stored.offset == set.committable;
  require(acked.has_value() == trusted,
          "acked_after_restart() trusts metadata that is corrupt or of another offset, or ignores its own");
  if (acked) require(*acked == set, "acked_after_restart() returns another set than decode_metadata()");
  require(manager.stats().ack_metadata_ignored == (!metadata.empty() && !trusted ? 1u : 0u),
          "ack_metadata_ignored does not count this one ignore");
  return 0;
}
