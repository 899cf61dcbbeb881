// Fuzz target: the byte encodings under the stored formats (encoding/base64.hpp,
// encoding/varint.hpp).
//
// Input: arbitrary bytes, read three ways: as base64 text, as binary to encode, and as a run of
// varints.
// Contract: base64_decode() accepts only canonical text (decoding then encoding gives the text
// back) and otherwise throws StateError(Corruption); encoding then decoding any bytes gives them
// back; get_varint() accepts only shortest encodings (put_varint() of the value gives the bytes
// read back).

#include <cstdint>
#include <string>

#include "encoding/base64.hpp"
#include "encoding/varint.hpp"
#include "fuzz_contract.hpp"

using namespace processor;
using fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  std::string decoded;
  if (fuzz::returns_or_corruption("base64_decode",
                                  [&] { decoded = encoding::base64_decode(bytes, "fuzz input"); })) {
    require(encoding::base64_encode(decoded) == bytes, "base64_decode() accepted a non-canonical encoding");
  }
  const std::string encoded = encoding::base64_encode(bytes);
  require(encoded.size() == encoding::base64_size(size), "base64_size() differs from the encoding's size");
  require(encoding::base64_decode(encoded, "fuzz input") == bytes, "base64 does not round-trip");

  for (std::size_t pos = 0; pos < bytes.size();) {
    const std::size_t start = pos;
    std::uint64_t value = 0;
    if (encoding::get_varint(bytes, &pos, &value) != encoding::VarintStatus::Ok) break;
    std::string again;
    encoding::put_varint(again, value);
    require(again == bytes.substr(start, pos - start),
            "get_varint() accepted a varint that is not its value's shortest encoding");
    require(again.size() == encoding::varint_size(value), "varint_size() differs from put_varint()");
  }
  return 0;
}
