#include "kafka/config/java_properties.hpp"

#include "processor/error.hpp"

namespace processor::kafka::internal {
namespace {

bool is_blank(char16_t c) { return c == u' ' || c == u'\t' || c == u'\f'; }

// UTF-16 code units as UTF-8, a lone surrogate as '?' (what Java's String.getBytes(UTF_8) writes).
std::string to_utf8(const std::u16string& units) {
  std::string out;
  out.reserve(units.size());
  const auto put = [&out](char32_t c) {
    if (c < 0x80) {
      out += char(c);
    } else if (c < 0x800) {
      out += char(0xC0 | (c >> 6));
      out += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += char(0xE0 | (c >> 12));
      out += char(0x80 | ((c >> 6) & 0x3F));
      out += char(0x80 | (c & 0x3F));
    } else {
      out += char(0xF0 | (c >> 18));
      out += char(0x80 | ((c >> 12) & 0x3F));
      out += char(0x80 | ((c >> 6) & 0x3F));
      out += char(0x80 | (c & 0x3F));
    }
  };
  for (std::size_t i = 0; i < units.size(); ++i) {
    const char16_t c = units[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < units.size() && units[i + 1] >= 0xDC00 &&
        units[i + 1] <= 0xDFFF) {
      put(0x10000 + ((char32_t(c) - 0xD800) << 10) + (char32_t(units[i + 1]) - 0xDC00));
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      out += '?';
    } else {
      put(c);
    }
  }
  return out;
}

int hex_digit(char16_t c) {
  if (c >= u'0' && c <= u'9') return c - u'0';
  if (c >= u'a' && c <= u'f') return c - u'a' + 10;
  if (c >= u'A' && c <= u'F') return c - u'A' + 10;
  return -1;
}

// Properties.loadConvert: the escapes of a key or a value.
std::string unescape(const std::u16string& text, std::size_t begin, std::size_t end, int line) {
  std::u16string out;
  out.reserve(end - begin);
  for (std::size_t i = begin; i < end;) {
    char16_t c = text[i++];
    if (c != u'\\') {
      out += c;
      continue;
    }
    if (i == end) break;  // a lone backslash at the very end of the input: Java drops it
    c = text[i++];
    if (c == u'u') {
      char16_t unit = 0;
      for (int d = 0; d < 4; ++d) {
        const int digit = i < end ? hex_digit(text[i]) : -1;
        if (digit < 0) {
          throw StateError(ErrorKind::InvalidArgument,
                           "line " + std::to_string(line) + ": malformed \\uxxxx escape");
        }
        unit = char16_t(unit * 16 + digit);
        ++i;
      }
      out += unit;
    } else if (c == u't') {
      out += u'\t';
    } else if (c == u'r') {
      out += u'\r';
    } else if (c == u'n') {
      out += u'\n';
    } else if (c == u'f') {
      out += u'\f';
    } else {
      out += c;
    }
  }
  return to_utf8(out);
}

// Properties.LineReader: the next logical line, as Java reads it: blanks at the start of each
// natural line dropped, blank lines and comment lines (# or ! where a logical line starts)
// skipped, a line ending in an odd number of backslashes joined with the next. False at the end.
class LineReader {
 public:
  explicit LineReader(std::string_view bytes) : bytes_(bytes) {}

  bool next(std::u16string& line, int& first_line) {
    line.clear();
    bool skip_blank = true;
    bool appended = false;  // at the start of a continuation line
    bool preceding_backslash = false;
    while (true) {
      if (pos_ >= bytes_.size()) {
        if (line.empty()) return false;
        if (preceding_backslash) line.pop_back();
        return true;
      }
      const char16_t c = take();
      if (skip_blank) {
        if (is_blank(c)) continue;
        if (!appended && (c == u'\r' || c == u'\n')) continue;
        skip_blank = false;
        appended = false;
      }
      if (line.empty()) {
        first_line = line_;
        if (c == u'#' || c == u'!') {
          while (pos_ < bytes_.size()) {
            const char16_t rest = take();
            if (rest == u'\r' || rest == u'\n') break;
          }
          skip_blank = true;
          continue;
        }
      }
      if (c != u'\n' && c != u'\r') {
        line += c;
        preceding_backslash = c == u'\\' ? !preceding_backslash : false;
        continue;
      }
      if (line.empty()) {
        skip_blank = true;
        continue;
      }
      if (!preceding_backslash) return true;
      line.pop_back();  // the backslash that joins the next line
      skip_blank = true;
      appended = true;
      preceding_backslash = false;
      if (c == u'\r' && pos_ < bytes_.size() && bytes_[pos_] == '\n') take();
    }
  }

 private:
  // The next byte as its ISO-8859-1 code unit, counting lines ("\r\n" is one line break).
  char16_t take() {
    const char16_t c = char16_t(static_cast<unsigned char>(bytes_[pos_++]));
    if (c == u'\r' || (c == u'\n' && (pos_ < 2 || bytes_[pos_ - 2] != '\r'))) ++line_;
    return c;
  }

  std::string_view bytes_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

std::vector<JavaProperty> parse_java_properties(std::string_view bytes) {
  std::vector<JavaProperty> entries;
  LineReader reader(bytes);
  std::u16string line;
  int first_line = 1;
  while (reader.next(line, first_line)) {
    // Properties.load0: the key ends at the first unescaped '=', ':' or blank; blanks and one
    // separator after it are skipped.
    const std::size_t limit = line.size();
    std::size_t key_end = 0;
    std::size_t value_start = limit;
    bool has_separator = false;
    bool preceding_backslash = false;
    while (key_end < limit) {
      const char16_t c = line[key_end];
      if ((c == u'=' || c == u':') && !preceding_backslash) {
        value_start = key_end + 1;
        has_separator = true;
        break;
      }
      if (is_blank(c) && !preceding_backslash) {
        value_start = key_end + 1;
        break;
      }
      preceding_backslash = c == u'\\' ? !preceding_backslash : false;
      ++key_end;
    }
    while (value_start < limit) {
      const char16_t c = line[value_start];
      if (!is_blank(c)) {
        if (has_separator || (c != u'=' && c != u':')) break;
        has_separator = true;
      }
      ++value_start;
    }
    entries.push_back(
        {unescape(line, 0, key_end, first_line), unescape(line, value_start, limit, first_line), first_line});
  }
  return entries;
}

}  // namespace processor::kafka::internal
