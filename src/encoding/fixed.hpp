#pragma once
// Little-endian fixed-width integers: the field encoding of every stored format (stored offsets in
// kafka/store/stored_offset_format.cpp, checkpoint records in kafka/checkpoint/checkpoint_record.cpp).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "processor/error.hpp"

namespace processor::encoding {

// Writes `value` as sizeof(T) little-endian bytes at `out`; returns the end of what it wrote.
// REQUIRES: `out` has room for sizeof(T) bytes.
template <class T>
char* store_le(char* out, T value) noexcept {
  static_assert(std::is_integral_v<T>);
  auto bits = static_cast<std::make_unsigned_t<T>>(value);
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out, &bits, sizeof bits);
  } else {
    for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  return out + sizeof(T);
}

// Reads sizeof(T) little-endian bytes at `in`. REQUIRES: sizeof(T) readable bytes at `in`.
template <class T>
T load_le(const char* in) noexcept {
  static_assert(std::is_integral_v<T>);
  std::make_unsigned_t<T> bits = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&bits, in, sizeof bits);
  } else {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      bits |= static_cast<std::make_unsigned_t<T>>(static_cast<unsigned char>(in[i])) << (8 * i);
    }
  }
  return static_cast<T>(bits);
}

// Appends `value` to `out` as sizeof(T) little-endian bytes.
template <class T>
void put_le(std::string& out, T value) {
  char bytes[sizeof(T)];
  store_le<T>(bytes, value);
  out.append(bytes, sizeof(T));
}

// Reads little-endian fields of a stored value in order. A read past the end throws
// StateError(Corruption): "corrupt <what> at key '<key>': <what> is truncated".
class LeReader {
 public:
  // `what` names the stored thing ("stored offset", "checkpoint"); it must outlive the reader.
  LeReader(std::string_view bytes, std::string_view key, std::string_view what) noexcept
      : bytes_(bytes), key_(key), what_(what) {}

  template <class T>
  T get() {
    need(sizeof(T));
    const T value = load_le<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return value;
  }

  std::string_view take(std::size_t length) {
    need(length);
    const std::string_view out = bytes_.substr(pos_, length);
    pos_ += length;
    return out;
  }

  std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
  bool at_end() const noexcept { return pos_ == bytes_.size(); }

 private:
  void need(std::size_t length) const {
    if (remaining() < length) {
      throw StateError(ErrorKind::Corruption, "corrupt " + std::string(what_) + " at key '" +
                                                  std::string(key_) + "': " + std::string(what_) +
                                                  " is truncated");
    }
  }

  std::string_view bytes_;
  std::string_view key_;
  std::string_view what_;
  std::size_t pos_ = 0;
};

}  // namespace processor::encoding
