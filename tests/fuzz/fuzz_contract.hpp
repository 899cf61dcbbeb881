#pragma once
// What every fuzz target asserts, and the framing of its input.
//
// A target either gets a sane value out of the library or a StateError of kind Corruption; any
// other exception, kind or insane value is a contract violation, which aborts with a message on
// stderr (so that libFuzzer keeps the input as a crash artifact and the replay test fails).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "encoding/crc32c.hpp"
#include "encoding/fixed.hpp"
#include "processor/error.hpp"
#include "processor/log.hpp"

namespace processor::fuzz {

[[noreturn]] inline void violation(std::string_view what) {
  std::fprintf(stderr, "fuzz contract violation: %.*s\n", static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

// The library's warnings (e.g. ignored acknowledgement metadata) are expected here: dropped, so
// that a run's output is libFuzzer's.
inline void silence_library_log() {
  static const bool silenced = [] {
    set_log_sink([](LogLevel, std::string_view, std::string_view) {});
    return true;
  }();
  (void)silenced;
}

inline void require(bool holds, std::string_view what) {
  if (!holds) violation(what);
}

// Runs `call`: true when it returned, false when it threw StateError(Corruption) (or one of the
// `also_allowed` kinds). Anything else thrown is a violation.
template <class Call>
bool returns_or_corruption(std::string_view what, Call&& call,
                           std::initializer_list<ErrorKind> also_allowed = {}) {
  try {
    call();
    return true;
  } catch (const StateError& error) {
    if (error.kind() == ErrorKind::Corruption) return false;
    for (const ErrorKind kind : also_allowed) {
      if (error.kind() == kind) return false;
    }
    violation(std::string(what) + " threw StateError(" + std::string(to_string(error.kind())) +
              "): " + error.what());
  } catch (const std::exception& error) {
    violation(std::string(what) + " threw a non-StateError exception: " + error.what());
  } catch (...) {
    violation(std::string(what) + " threw something that is not a std::exception");
  }
}

// The kind of the StateError `call` throws; violation when it returns or throws anything else.
template <class Call>
ErrorKind thrown_kind(std::string_view what, Call&& call) {
  try {
    call();
  } catch (const StateError& error) {
    return error.kind();
  } catch (...) {
    violation(std::string(what) + " threw a non-StateError exception");
  }
  violation(std::string(what) + " returned, an error was expected");
}

// Input framing shared by the targets and the seed generator (make_seed_corpus.cpp).
//
// The stored formats end in a CRC32C, which random mutation almost never gets right: with
// kSeal set in a target's flags byte, the harness appends the checksum of the bytes it was
// given, so that the fuzzer explores the structure behind it. Without kSeal the bytes are used
// as they are (checksum mismatches, truncated trailers).
inline constexpr std::uint8_t kSeal = 1 << 0;

inline std::string seal(std::string_view body) {
  std::string out(body);
  encoding::put_le<std::uint32_t>(out, encoding::crc32c(body));
  return out;
}

// Reads an input front to back; every read succeeds (short inputs read as zeros/empty).
class InputReader {
 public:
  InputReader(const std::uint8_t* data, std::size_t size)
      : bytes_(reinterpret_cast<const char*>(data), size) {}

  std::uint8_t byte() {
    if (bytes_.empty()) return 0;
    const auto out = static_cast<std::uint8_t>(bytes_.front());
    bytes_.remove_prefix(1);
    return out;
  }
  std::string_view take(std::size_t length) {
    const std::string_view out = bytes_.substr(0, length);
    bytes_.remove_prefix(out.size());
    return out;
  }
  std::string_view rest() {
    const std::string_view out = bytes_;
    bytes_ = {};
    return out;
  }

 private:
  std::string_view bytes_;
};

}  // namespace processor::fuzz
