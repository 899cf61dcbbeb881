#include "kafka/acks/ack_metadata.hpp"

#include "encoding/base64.hpp"
#include "processor/error.hpp"

namespace processor::kafka::internal {
namespace {

[[noreturn]] void corrupt(const std::string& why) {
  throw StateError(ErrorKind::Corruption, "corrupt acknowledgement metadata: " + why);
}

class MetadataReader {
 public:
  explicit MetadataReader(std::string_view bytes) : bytes_(bytes) {}

  std::uint8_t byte(const char* what) {
    if (pos_ >= bytes_.size()) corrupt(std::string("truncated before the ") + what);
    return static_cast<std::uint8_t>(bytes_[pos_++]);
  }
  std::uint64_t varint(const char* what) {
    std::uint64_t value = 0;
    switch (encoding::get_varint(bytes_, &pos_, &value)) {
      case encoding::VarintStatus::Ok:
        return value;
      case encoding::VarintStatus::Truncated:
        corrupt(std::string("truncated before the ") + what);
      case encoding::VarintStatus::Overflow:
        corrupt(std::string("the ") + what + " overflows 64 bits");
      case encoding::VarintStatus::OverLong:
        corrupt(std::string("the ") + what + " is an over-long varint");
    }
    corrupt(std::string("the ") + what + " is unreadable");
  }
  std::string_view take(std::size_t length, const char* what) {
    if (remaining() < length) corrupt(std::string("truncated in the ") + what);
    auto out = bytes_.substr(pos_, length);
    pos_ += length;
    return out;
  }
  std::size_t remaining() const noexcept { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

// first + length, if that stays at or below kMaxAckOffset + 1 (one past the highest offset).
std::int64_t advance_offset(std::int64_t first, std::uint64_t length) {
  if (length > static_cast<std::uint64_t>(kMaxAckOffset + 1 - first)) corrupt("offsets overflow");
  return first + static_cast<std::int64_t>(length);
}

}  // namespace

AckedSet decode_ack_metadata(std::string_view metadata) {
  if (metadata.empty()) corrupt("empty");
  return decode_ack_metadata_binary(encoding::base64_decode(metadata, "acknowledgement metadata"));
}

AckedSet decode_ack_metadata_binary(std::string_view binary) {
  MetadataReader reader(binary);
  if (const std::uint8_t version = reader.byte("version"); version != kAckMetadataVersion) {
    corrupt("unknown version " + std::to_string(version));
  }
  AckedSet set;
  const std::uint64_t committable = reader.varint("committable offset");
  if (committable > static_cast<std::uint64_t>(kMaxAckOffset)) corrupt("committable offset out of range");
  set.committable = static_cast<std::int64_t>(committable);

  const char payload_encoding = static_cast<char>(reader.byte("encoding"));
  if (payload_encoding == kAckRunLengths) {
    std::int64_t pos = set.committable;
    while (reader.remaining() > 0) {
      const std::uint64_t unacked = reader.varint("run length");
      const std::uint64_t acked = reader.varint("run length");
      if (unacked == 0 || acked == 0) corrupt("empty run");
      const std::int64_t first = advance_offset(pos, unacked);
      pos = advance_offset(first, acked);
      set.acked.push_back({first, pos - 1});
    }
  } else if (payload_encoding == kAckBitset) {
    const std::uint64_t bit_count = reader.varint("bit count");
    if (bit_count > static_cast<std::uint64_t>(reader.remaining()) * 8) corrupt("truncated in the bitset");
    const std::string_view bytes = reader.take(static_cast<std::size_t>((bit_count + 7) / 8), "bitset");
    if (reader.remaining() > 0) corrupt("trailing bytes after the bitset");
    if (bit_count > 0) {
      advance_offset(set.committable, bit_count);
      auto bit = [&](std::uint64_t i) { return (static_cast<unsigned char>(bytes[i / 8]) >> (i % 8)) & 1; };
      if (bit(0) != 0) corrupt("the committable offset is marked acknowledged");
      if (bit(bit_count - 1) == 0) corrupt("the bitset ends with an unacknowledged offset");
      if (bit_count % 8 != 0 && (static_cast<unsigned char>(bytes.back()) >> (bit_count % 8)) != 0) {
        corrupt("bits set past the bit count");
      }
      for (std::uint64_t i = 1; i < bit_count; ++i) {
        if (bit(i) == 0) continue;
        const std::int64_t offset = set.committable + static_cast<std::int64_t>(i);
        if (!set.acked.empty() && set.acked.back().last == offset - 1) {
          set.acked.back().last = offset;
        } else {
          set.acked.push_back({offset, offset});
        }
      }
    }
  } else {
    corrupt("unknown encoding " + std::to_string(static_cast<unsigned char>(payload_encoding)));
  }
  return set;
}

std::string encode_ack_metadata_binary(const AckedSet& set) {
  std::size_t run_lengths = 0;
  std::int64_t pos = set.committable;
  for (const auto& range : set.acked) {
    run_lengths += encoding::varint_size(static_cast<std::uint64_t>(range.first - pos)) +
                   encoding::varint_size(static_cast<std::uint64_t>(range.last - range.first) + 1);
    pos = range.last + 1;
  }
  const auto bit_count = set.acked.empty()
                             ? std::uint64_t{0}
                             : static_cast<std::uint64_t>(set.acked.back().last - set.committable) + 1;
  const std::size_t bitset = encoding::varint_size(bit_count) + static_cast<std::size_t>((bit_count + 7) / 8);
  const bool use_bitset = bitset < run_lengths;

  std::string out;
  out.reserve(ack_metadata_header_size(set.committable) + (use_bitset ? bitset : run_lengths));
  put_ack_metadata_header(out, set.committable, use_bitset ? kAckBitset : kAckRunLengths);
  if (use_bitset) {
    encoding::put_varint(out, bit_count);
    const std::size_t first_byte = out.size();
    out.resize(first_byte + static_cast<std::size_t>((bit_count + 7) / 8), '\0');
    for (const auto& range : set.acked) {
      for (std::int64_t offset = range.first; offset <= range.last; ++offset) {
        const auto bit = static_cast<std::uint64_t>(offset - set.committable);
        out[first_byte + bit / 8] =
            static_cast<char>(static_cast<unsigned char>(out[first_byte + bit / 8]) | (1u << (bit % 8)));
      }
    }
  } else {
    pos = set.committable;
    for (const auto& range : set.acked) {
      encoding::put_varint(out, static_cast<std::uint64_t>(range.first - pos));
      encoding::put_varint(out, static_cast<std::uint64_t>(range.last - range.first) + 1);
      pos = range.last + 1;
    }
  }
  return out;
}

std::string encode_ack_metadata(const AckedSet& set) {
  return encoding::base64_encode(encode_ack_metadata_binary(set));
}

}  // namespace processor::kafka::internal
