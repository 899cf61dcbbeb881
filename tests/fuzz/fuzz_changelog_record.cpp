// Fuzz target: the two byte formats of the streams state (src/streams/changelog_format.hpp), a
// changelog record's value (read back from Kafka on restore) and a store partition's changelog
// position (read back from RocksDB when the store partition opens).
//
// Input: u8 flags, u8 length of `where`, `where` (the topic:partition@offset or position key the
// error must name), then the bytes to decode.
//   bit 0 kSeal      append the CRC32C of the bytes (positions end in one; see fuzz_contract.hpp)
//   bit 1 kPosition  the bytes are a position, else a changelog value
//
// Contract, changelog value: decode_changelog_value() returns the bytes after the version byte,
// exactly when there is one and it is kChangelogVersion, and append_changelog_value() of what it
// returned gives the bytes back; else it throws StateError(Corruption) naming `where`. Restoring
// the value into a StorePartition (add_restored, commit_restored) reads back the same value.
// Contract, position: decode_position() returns a position ≥ 0 that encode_position() turns back
// into the same bytes, exactly when some position ≥ 0 encodes to them; else it throws
// StateError(Corruption) naming the key. A StorePartition opened over a backend holding the
// bytes as its position agrees: the same position(), or Corruption naming the position key.
// Naming means: the message shows the bytes with those below 0x20 or from 0x7f, '\\' and '\''
// as \xNN, and goes on to say why.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "encoding/fixed.hpp"
#include "fuzz_contract.hpp"
#include "processor/error.hpp"
#include "processor/state/memory_state_backend.hpp"
#include "processor/state/write_batch.hpp"
#include "streams/changelog_format.hpp"
#include "streams/state_keys.hpp"
#include "streams/store_partition.hpp"

namespace {

using namespace processor;
using namespace processor::streams;
using fuzz::require;

constexpr std::uint8_t kPosition = 1 << 1;

const std::string kStore = "counts";
constexpr std::int32_t kPartition = 3;

// `bytes` as an error message shows them: bytes below 0x20 or from 0x7f, '\\' and '\'' as \xNN.
std::string escaped(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '\\' || c == '\'') {
      out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xf]};
    } else {
      out += c;
    }
  }
  return out;
}

// The message names `named` (escaped) and goes on after it, to the reason: a raw 0x00 would end
// what() there.
bool names(const StateError& error, std::string_view named) {
  const std::string_view message = error.what();
  const std::string shown = escaped(named);
  const std::size_t at = message.find(shown);
  return at != std::string_view::npos && message.find(": ", at + shown.size()) != std::string_view::npos;
}

// Runs `call`: true when it returned, false when it threw StateError(Corruption) naming `named`
// (the `where` or key it was given). Anything else thrown is a violation.
template <class Call>
bool decodes(std::string_view what, std::string_view named, Call&& call) {
  try {
    call();
    return true;
  } catch (const StateError& error) {
    if (error.kind() != ErrorKind::Corruption) {
      fuzz::violation(std::string(what) + " threw StateError(" + std::string(to_string(error.kind())) +
                      "): " + error.what());
    }
    require(names(error, named),
            std::string(what) + " threw Corruption without naming what it read, then why: " + error.what());
    return false;
  } catch (const std::exception& error) {
    fuzz::violation(std::string(what) + " threw a non-StateError exception: " + error.what());
  } catch (...) {
    fuzz::violation(std::string(what) + " threw something that is not a std::exception");
  }
}

void check_changelog_value(std::string_view where, std::string_view bytes) {
  std::string_view value;
  const bool ok = decodes("decode_changelog_value", where,
                          [&] { value = internal::decode_changelog_value(bytes, where); });
  const bool well_formed =
      !bytes.empty() && static_cast<std::uint8_t>(bytes[0]) == internal::kChangelogVersion;
  require(ok == well_formed, ok ? "decode_changelog_value accepted a value without its version byte"
                                : "decode_changelog_value refused a value with its version byte");
  // The restorer's form, which names the record only for the error, decides alike.
  std::string_view lazily;
  const bool lazy_ok = decodes("decode_changelog_value (where on error)", where, [&] {
    lazily = internal::decode_changelog_value(bytes, [&] { return std::string(where); });
  });
  require(lazy_ok == ok && (!ok || (lazily.data() == value.data() && lazily.size() == value.size())),
          "decode_changelog_value with a lazy where decided otherwise than with a where");
  if (!ok) return;
  require(value.data() == bytes.data() + 1 && value.size() == bytes.size() - 1,
          "decode_changelog_value returned other bytes than those after the version byte");
  std::string again = "prefix";
  internal::append_changelog_value(again, value);
  require(again == "prefix" + std::string(bytes), "a decoded changelog value re-encodes to other bytes");

  // Restored into a store partition, the value reads back as it was.
  state::MemoryStateBackend backend;
  internal::StorePartition store(backend, kStore, kPartition);
  const std::string key(where);
  store.add_restored(key, value);
  store.commit_restored(1);
  require(store.position() == 1, "commit_restored() did not set the position");
  require(store.get(key) == std::string(value), "a restored changelog value reads back as another value");
}

void check_position(std::string_view key, std::string_view bytes) {
  std::int64_t position = -1;
  const bool ok = decodes("decode_position", key, [&] { position = internal::decode_position(bytes, key); });
  // An oracle of its own: the bytes are well formed when the position they hold encodes to them.
  const bool well_formed =
      bytes.size() == 13 && encoding::load_le<std::int64_t>(bytes.data() + 1) >= 0 &&
      internal::encode_position(encoding::load_le<std::int64_t>(bytes.data() + 1)) == bytes;
  require(ok == well_formed, ok ? "decode_position accepted bytes that no position encodes to"
                                : "decode_position refused a well-formed position");
  if (ok) {
    require(position >= 0, "decode_position returned a negative position");
    require(internal::encode_position(position) == bytes, "a decoded position re-encodes to other bytes");
  }

  // The store partition reads the same bytes as its position when it opens.
  state::MemoryStateBackend backend;
  const std::string position_key = internal::position_key(kStore, kPartition);
  backend.put(position_key, bytes);
  std::optional<std::int64_t> opened;
  const bool opens = decodes("StorePartition()", position_key, [&] {
    opened = internal::StorePartition(backend, kStore, kPartition).position();
  });
  require(opens == ok, "StorePartition() and decode_position disagree on whether a position reads");
  if (opens)
    require(opened == position, "StorePartition() opened at another position than decode_position reads");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::silence_library_log();
  fuzz::InputReader input(data, size);
  const std::uint8_t flags = input.byte();
  const std::string where(input.take(input.byte()));
  const std::string_view raw = input.rest();
  const std::string bytes = (flags & fuzz::kSeal) ? fuzz::seal(raw) : std::string(raw);
  if (flags & kPosition) {
    check_position(where, bytes);
  } else {
    check_changelog_value(where, bytes);
  }
  return 0;
}
