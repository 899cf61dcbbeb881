#pragma once
// Every call into a user-supplied component (an OffsetStore, a StateBackend, a BrokerMetadata)
// goes through call_wrapped(), so that the library throws nothing but StateError: a StateError
// passes through with its own kind, anything else becomes `kind`, naming what failed.

#include <exception>
#include <string>
#include <utility>

#include "processor/error.hpp"

namespace processor::kafka::internal {

template <class Fn>
decltype(auto) call_wrapped(ErrorKind kind, const std::string& what, Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const StateError&) {
    throw;
  } catch (const std::exception& error) {
    throw StateError(kind, what + " failed: " + error.what());
  } catch (...) {
    throw StateError(kind, what + " failed: unknown exception");
  }
}

// A call into a StateBackend or an OffsetStore outside a commit: failures are Storage errors.
template <class Fn>
decltype(auto) call_backend(const std::string& what, Fn&& fn) {
  return call_wrapped(ErrorKind::Storage, what, std::forward<Fn>(fn));
}

}  // namespace processor::kafka::internal
