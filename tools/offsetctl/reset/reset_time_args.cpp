#include "reset/reset_time_args.hpp"

#include <array>
#include <cctype>
#include <optional>
#include <tuple>

#include "processor/error.hpp"

namespace processor::offsetctl {
namespace {

// Durations are summed in nanoseconds, which overflow int64 for a few hundred years.
__extension__ typedef __int128 Wide;

// A cursor over the text, with SimpleDateFormat's field rules.
class DateCursor {
 public:
  explicit DateCursor(std::string_view text) : text_(text) {}

  // A numeric field: spaces/tabs skipped, an optional '-', then one or more digits (greedy).
  std::optional<std::int64_t> number() {
    skip_blanks();
    bool negative = false;
    if (at_ < text_.size() && text_[at_] == '-') {
      negative = true;
      ++at_;
    }
    const std::size_t start = at_;
    std::int64_t value = 0;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_])) != 0) {
      if (value < 1'000'000'000'000LL)
        value = value * 10 + (text_[at_] - '0');  // larger fails range checks anyway
      ++at_;
    }
    if (at_ == start) return std::nullopt;
    return negative ? -value : value;
  }

  bool literal(char c) {
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }

  // The ISO-8601 zone of pattern 'X' (colon=false: "+hh") or 'XXX' (colon=true: "+hh:mm");
  // returns the offset in minutes.
  std::optional<std::int64_t> zone(bool colon) {
    skip_blanks();
    if (at_ >= text_.size()) return std::nullopt;
    const char c = text_[at_++];
    if (c == 'Z') return 0;
    if (c != '+' && c != '-') return std::nullopt;
    const std::int64_t sign = c == '-' ? -1 : 1;
    const auto hours = two_digits();
    if (!hours || *hours > 23) return std::nullopt;
    std::int64_t minutes = 0;
    if (colon) {
      if (!literal(':')) return std::nullopt;
      const auto parsed = two_digits();
      if (!parsed || *parsed > 59) return std::nullopt;
      minutes = *parsed;
    }
    return sign * (*hours * 60 + minutes);
  }

 private:
  void skip_blanks() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  std::optional<std::int64_t> two_digits() {
    if (at_ + 2 > text_.size()) return std::nullopt;
    const char a = text_[at_], b = text_[at_ + 1];
    if (std::isdigit(static_cast<unsigned char>(a)) == 0 ||
        std::isdigit(static_cast<unsigned char>(b)) == 0) {
      return std::nullopt;
    }
    at_ += 2;
    return (a - '0') * 10 + (b - '0');
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

bool is_leap(std::int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

// Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Days from 1970-01-01 to a date of the Julian calendar (its Julian Day Number, less 1970's).
std::int64_t days_from_julian(std::int64_t y, std::int64_t m, std::int64_t d) {
  const std::int64_t a = (14 - m) / 12;
  const std::int64_t yy = y + 4800 - a;
  const std::int64_t mm = m + 12 * a - 3;
  const std::int64_t julian_day = d + (153 * mm + 2) / 5 + 365 * yy + yy / 4 - 32083;
  return julian_day - 2440588;
}

// One attempt with "yyyy-MM-dd'T'HH:mm:ss.SSS" and a zone of pattern X (colon=false) or XXX.
std::optional<std::int64_t> parse_with_pattern(std::string_view text, bool colon) {
  DateCursor cursor(text);
  std::array<std::int64_t, 7> f{};  // year, month, day, hour, minute, second, millisecond
  const std::array<char, 7> after{'-', '-', 'T', ':', ':', '.', '\0'};
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto value = cursor.number();
    if (!value) return std::nullopt;
    f[i] = *value;
    if (after[i] != '\0' && !cursor.literal(after[i])) return std::nullopt;
  }
  const auto zone_minutes = cursor.zone(colon);
  if (!zone_minutes) return std::nullopt;
  const auto [year, month, day, hour, minute, second, millis] = f;
  // Strict (non-lenient) calendar: every field in its range. Years before 1 are era BC in Java.
  if (year < 1 || year > 292278994 || month < 1 || month > 12 || hour > 23 || hour < 0 || minute < 0 ||
      minute > 59 || second < 0 || second > 59 || millis < 0 || millis > 999 || day < 1) {
    return std::nullopt;
  }
  static constexpr std::array<int, 12> kDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  // Java's calendar is Julian before 1582-10-15 (leap every 4th year), and 1582-10-05..14 never
  // happened.
  const bool julian = std::make_tuple(year, month, day) <
                      std::make_tuple(std::int64_t{1582}, std::int64_t{10}, std::int64_t{15});
  if (julian && std::make_tuple(year, month, day) >=
                    std::make_tuple(std::int64_t{1582}, std::int64_t{10}, std::int64_t{5})) {
    return std::nullopt;
  }
  const bool leap = julian ? year % 4 == 0 : is_leap(year);
  const std::int64_t month_days = kDays[month - 1] + (month == 2 && leap ? 1 : 0);
  if (day > month_days) return std::nullopt;
  const std::int64_t days = julian ? days_from_julian(year, month, day) : days_from_civil(year, month, day);
  const std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - *zone_minutes * 60;
  return seconds * 1000 + millis;
}

[[noreturn]] void bad_duration() {
  throw StateError(ErrorKind::InvalidArgument, "Text cannot be parsed to a Duration");
}

// [-+]?[0-9]+ at `at`, case of Java's Duration pattern; returns the value, nullopt when absent.
std::optional<Wide> signed_number(std::string_view text, std::size_t& at) {
  std::size_t i = at;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  const std::size_t digits = i;
  Wide value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
    value = value * 10 + (text[i++] - '0');
    if (value > (static_cast<Wide>(1) << 100)) bad_duration();
  }
  if (i == digits) return std::nullopt;
  at = i;
  return negative ? -value : value;
}

}  // namespace

std::int64_t parse_reset_datetime(std::string_view text) {
  // Kafka splits on 'T' and looks at the second piece (Java's split drops trailing empty pieces).
  std::string_view rest = text;
  while (!rest.empty() && rest.back() == 'T') rest.remove_suffix(1);
  const std::size_t t = rest.find('T');
  if (t == std::string_view::npos) {
    throw StateError(ErrorKind::InvalidArgument,
                     "Error parsing timestamp. It does not contain a 'T' according to ISO8601 format");
  }
  const std::string_view after_t = rest.substr(t + 1);
  const std::string_view second_part = after_t.substr(0, after_t.find('T'));
  std::string timestamp(text);
  if (second_part.find_first_of("+-Z") == std::string_view::npos) timestamp += 'Z';
  if (auto ms = parse_with_pattern(timestamp, true)) return *ms;
  if (auto ms = parse_with_pattern(timestamp, false)) return *ms;
  throw StateError(ErrorKind::InvalidArgument, "Unparseable date: \"" + timestamp + "\"");
}

std::int64_t parse_reset_duration_ms(std::string_view text) {
  std::size_t at = 0;
  bool negative = false;
  if (at < text.size() && (text[at] == '-' || text[at] == '+')) negative = text[at++] == '-';
  if (at >= text.size() || (text[at] != 'P' && text[at] != 'p')) bad_duration();
  ++at;
  const auto unit_is = [&](char unit) {
    if (at < text.size() && std::toupper(static_cast<unsigned char>(text[at])) == unit) {
      ++at;
      return true;
    }
    return false;
  };
  constexpr Wide kNanosPerSecond = 1'000'000'000;
  Wide nanos = 0;
  bool any = false;
  // Days.
  {
    std::size_t probe = at;
    if (auto days = signed_number(text, probe);
        days && probe < text.size() && std::toupper(text[probe]) == 'D') {
      at = probe + 1;
      nanos += *days * 86400 * kNanosPerSecond;
      any = true;
    }
  }
  if (at < text.size()) {
    if (!unit_is('T') || at >= text.size()) bad_duration();  // a 'T' must be followed by something
    constexpr std::array<std::pair<char, std::int64_t>, 2> kUnits{{{'H', 3600}, {'M', 60}}};
    for (const auto& [unit, seconds] : kUnits) {
      std::size_t probe = at;
      if (auto n = signed_number(text, probe);
          n && probe < text.size() && std::toupper(text[probe]) == unit) {
        at = probe + 1;
        nanos += *n * seconds * kNanosPerSecond;
        any = true;
      }
    }
    std::size_t probe = at;
    if (auto n = signed_number(text, probe)) {
      Wide fraction = 0;
      if (probe < text.size() && (text[probe] == '.' || text[probe] == ',')) {
        ++probe;
        int digits = 0;
        while (probe < text.size() && std::isdigit(static_cast<unsigned char>(text[probe])) != 0 &&
               digits < 9) {
          fraction = fraction * 10 + (text[probe++] - '0');
          ++digits;
        }
        for (; digits < 9; ++digits) fraction *= 10;
        // The fraction takes the sign of the seconds ("-0.5" is minus half a second).
        if (text.substr(at, 1) == "-") fraction = -fraction;
      }
      if (probe >= text.size() || std::toupper(text[probe]) != 'S') bad_duration();
      at = probe + 1;
      nanos += *n * kNanosPerSecond + fraction;
      any = true;
    }
  }
  if (!any || at != text.size()) bad_duration();
  if (negative) nanos = -nanos;
  // Java's Duration holds seconds in a long; toEpochMilli of now - duration must fit too.
  constexpr Wide kNanosPerMilli = 1'000'000;
  Wide millis = nanos / kNanosPerMilli;
  if (nanos % kNanosPerMilli != 0 && nanos < 0) millis -= 1;
  if (millis > INT64_MAX / 2 || millis < INT64_MIN / 2) bad_duration();
  return static_cast<std::int64_t>(millis);
}

}  // namespace processor::offsetctl
