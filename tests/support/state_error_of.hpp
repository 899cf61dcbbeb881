#pragma once
// Catching a StateError to look at it: shared by the unit tests of the RocksDB backend and the
// storage-fault tests.

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "processor/error.hpp"

namespace processor::testing {

// Runs `call` and returns the StateError it throws; fails the test when it throws nothing.
template <class Call>
StateError error_of(Call&& call) {
  try {
    call();
  } catch (const StateError& error) {
    return error;
  }
  ADD_FAILURE() << "expected a StateError";
  return StateError(ErrorKind::NotFound, "no error thrown");
}

// Whether the error's message contains `text`, with the message in the failure.
inline ::testing::AssertionResult mentions(const StateError& error, std::string_view text) {
  if (std::string_view(error.what()).find(text) != std::string_view::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << error.what() << "' does not mention '" << text << "'";
}

}  // namespace processor::testing
