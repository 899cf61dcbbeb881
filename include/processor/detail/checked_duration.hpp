#pragma once
// Duration conversions for the header templates that take any std::chrono::duration: a caller's
// hours::max() must be refused by name, never wrapped into a negative count by duration_cast.

#include <chrono>
#include <optional>
#include <ratio>
#include <string>
#include <type_traits>

namespace processor::detail {

// `d` in To's units, truncated toward zero as duration_cast does; nullopt when it does not fit
// To's range (where duration_cast would overflow) or is NaN.
template <class To, class Rep, class Period>
constexpr std::optional<To> checked_duration_cast(std::chrono::duration<Rep, Period> d) noexcept {
  // x86-64's long double holds every int64 exactly; elsewhere the bound is rounded, which only
  // matters within one unit of To's limits.
  using Wide = std::chrono::duration<long double, typename To::period>;
  const long double value = std::chrono::duration_cast<Wide>(d).count();
  const auto lowest = static_cast<long double>(To::min().count());
  const auto highest = static_cast<long double>(To::max().count());
  if (!(value >= lowest && value <= highest)) return std::nullopt;
  return std::chrono::duration_cast<To>(d);
}

// `d` as the caller wrote it, for a message: "9223372036854775807ms", "5h", "3x(1/30)s".
template <class Rep, class Period>
std::string duration_text(std::chrono::duration<Rep, Period> d) {
  std::string count = std::to_string(d.count());
  if constexpr (std::is_same_v<Period, std::nano>)
    return count + "ns";
  else if constexpr (std::is_same_v<Period, std::micro>)
    return count + "us";
  else if constexpr (std::is_same_v<Period, std::milli>)
    return count + "ms";
  else if constexpr (std::is_same_v<Period, std::ratio<1>>)
    return count + "s";
  else if constexpr (std::is_same_v<Period, std::ratio<60>>)
    return count + "min";
  else if constexpr (std::is_same_v<Period, std::ratio<3600>>)
    return count + "h";
  else
    return count + "x(" + std::to_string(Period::num) + "/" + std::to_string(Period::den) + ")s";
}

}  // namespace processor::detail
