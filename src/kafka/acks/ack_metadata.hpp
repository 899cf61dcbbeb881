#pragma once
// The acknowledgement metadata format: what PartitionAcks writes into an offset commit's metadata
// so that a restarted consumer skips the records that were already done.
//
// ASCII, base64 (encoding/base64.hpp) of:
//   u8     version (1)
//   varint committable offset (the committed offset the metadata belongs to)
//   u8     encoding, then its payload; the writer picks whichever of the two is smaller, a reader
//          accepts either (see decode_ack_metadata):
//     'R'  run lengths: pairs of varints (unacknowledged count, acknowledged count), from the
//          committable offset up; both counts > 0
//     'B'  bitset: varint bit count, then ceil(count / 8) bytes, bit i (LSB first) set when
//          committable + i is acknowledged; bit 0 clear, the last bit set, no bits past the count
// Varints are LEB128 (encoding/varint.hpp), in their shortest form.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "encoding/varint.hpp"
#include "processor/kafka/partition_acks.hpp"

namespace processor::kafka::internal {

// Offsets go up to kMaxAckOffset so that "one past the highest offset" is representable.
inline constexpr std::int64_t kMaxAckOffset = std::numeric_limits<std::int64_t>::max() - 1;

inline constexpr std::uint8_t kAckMetadataVersion = 1;
inline constexpr char kAckRunLengths = 'R';
inline constexpr char kAckBitset = 'B';

// The size of the header (version, committable, encoding byte) before the payload.
inline std::size_t ack_metadata_header_size(std::int64_t committable) noexcept {
  return 1 + encoding::varint_size(static_cast<std::uint64_t>(committable)) + 1;
}

// Appends the header for `committable` and `payload_encoding` (kAckRunLengths or kAckBitset).
inline void put_ack_metadata_header(std::string& out, std::int64_t committable, char payload_encoding) {
  out.push_back(static_cast<char>(kAckMetadataVersion));
  encoding::put_varint(out, static_cast<std::uint64_t>(committable));
  out.push_back(payload_encoding);
}

// Throws StateError(Corruption) "corrupt acknowledgement metadata: <why>" for anything that is not
// exactly the format above: every field canonical (shortest varints, no empty run, no bit past
// the count). The one freedom is the payload encoding: a valid bitset where run lengths would
// have been smaller, or the reverse, is accepted, since which is smaller is the writer's size
// heuristic, and a later writer that tunes it (or another tool writing this format) must not
// make its acknowledgements unreadable. Either way the set decodes to the same AckedSet.
AckedSet decode_ack_metadata(std::string_view metadata);

// The same for the bytes before base64 (as a checkpoint record stores them).
AckedSet decode_ack_metadata_binary(std::string_view binary);

// The format above for `set`, as PartitionAcks writes it (whichever payload is smaller), before
// base64. REQUIRES: `set` is sane (ranges ascending, disjoint, not adjacent, above committable,
// at most kMaxAckOffset), as decode_ack_metadata() returns it.
std::string encode_ack_metadata_binary(const AckedSet& set);
// base64 of encode_ack_metadata_binary(): the commit metadata of `set`. O(window) for a bitset.
std::string encode_ack_metadata(const AckedSet& set);

}  // namespace processor::kafka::internal
