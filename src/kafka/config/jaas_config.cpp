#include "kafka/config/jaas_config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <span>
#include <vector>

#include "processor/error.hpp"

namespace processor::kafka::internal {
namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw StateError(ErrorKind::InvalidArgument, "sasl.jaas.config: " + why);
}

// A token of java.io.StreamTokenizer as Kafka's JaasConfig sets it up: a word (letters, digits,
// '.', '-', '_', '$' and bytes over 127; one that starts with a digit, '.' or '-' is a number,
// which has no text), a quoted string, or one other character.
struct Token {
  enum Type { Word, Number, Quoted, Char, End } type = End;
  std::string text;       // Word, Quoted
  char c = 0;             // Char
  std::size_t begin = 0;  // where it starts in the text
  bool has_text() const { return type == Word || type == Quoted; }
};

class Tokenizer {
 public:
  explicit Tokenizer(std::string_view text) : text_(text) {}

  Token next() {
    skip_blanks_and_comments();
    Token token;
    token.begin = pos_;
    if (pos_ >= text_.size()) return token;
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"' || c == '\'') return quoted(char(c));
    if (is_number_start(c) || is_word_char(c)) {
      token.type = is_number_start(c) ? Token::Number : Token::Word;
      const std::size_t begin = pos_;
      while (pos_ < text_.size() && (is_word_char(static_cast<unsigned char>(text_[pos_])) ||
                                     is_number_start(static_cast<unsigned char>(text_[pos_])))) {
        ++pos_;
      }
      if (token.type == Token::Word) token.text = std::string(text_.substr(begin, pos_ - begin));
      return token;
    }
    ++pos_;
    token.type = Token::Char;
    token.c = char(c);
    return token;
  }

 private:
  static bool is_number_start(unsigned char c) { return std::isdigit(c) || c == '.' || c == '-'; }
  static bool is_word_char(unsigned char c) { return std::isalpha(c) || c == '_' || c == '$' || c >= 128; }

  void skip_blanks_and_comments() {
    while (pos_ < text_.size()) {
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c <= ' ') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
        const auto end = text_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? text_.size() : end + 2;
      } else if (c == '/') {  // "//" and a lone '/' (StreamTokenizer's comment character) alike
        const auto end = text_.find_first_of("\r\n", pos_);
        pos_ = end == std::string_view::npos ? text_.size() : end;
      } else {
        return;
      }
    }
  }

  // StreamTokenizer's quoted string: up to the same quote or the end of the line, with C escapes
  // (\a \b \f \n \r \t \v, octal \ooo) and any other escaped character as itself.
  Token quoted(char quote) {
    Token token;
    token.type = Token::Quoted;
    token.begin = pos_;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote && text_[pos_] != '\n' && text_[pos_] != '\r') {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        c = text_[pos_++];
        switch (c) {
          case 'a':
            c = '\a';
            break;
          case 'b':
            c = '\b';
            break;
          case 'f':
            c = '\f';
            break;
          case 'n':
            c = '\n';
            break;
          case 'r':
            c = '\r';
            break;
          case 't':
            c = '\t';
            break;
          case 'v':
            c = '\v';
            break;
          default:
            if (c >= '0' && c <= '7') {
              int value = c - '0';
              const int max_digits = c <= '3' ? 3 : 2;
              for (int d = 1;
                   d < max_digits && pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7'; ++d) {
                value = value * 8 + (text_[pos_++] - '0');
              }
              c = char(value);
            }
        }
      }
      token.text += c;
    }
    if (pos_ < text_.size() && text_[pos_] == quote) ++pos_;
    return token;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

// How a refusal points at a word of the text. The text is a secret, and a word of broken
// quoting can be a piece of a password: a word is quoted only when it is a name the refusal
// expects (an option of the login modules Kafka ships) or a misspelling of one (a control flag);
// any other word is named by where it starts.
std::string word_at(const Token& token, bool quotable) {
  return quotable ? "'" + token.text + "'" : "at character " + std::to_string(token.begin + 1);
}

bool misspells_a_flag(const Token& token) {
  constexpr std::array<std::string_view, 4> kFlags = {"required", "requisite", "sufficient", "optional"};
  return token.type == Token::Word && close_to_one_of(lowercase(token.text), kFlags, 2);
}

bool an_option_name(const std::string& word) {
  constexpr std::array<std::string_view, 13> kNames = {
      "username", "password",       "tokenauth", "serviceName", "useKeyTab",    "keyTab", "principal",
      "storeKey", "useTicketCache", "debug",     "clientId",    "clientSecret", "scope"};
  return std::find(kNames.begin(), kNames.end(), word) != kNames.end() ||
         word.rfind("unsecuredLogin", 0) == 0 || word.rfind("extension_", 0) == 0;
}

// One "<module> <flag> key=value ... ;" entry, the module's token already read.
JaasEntry parse_entry(Tokenizer& tokens, const Token& module) {
  JaasEntry entry;
  if (!module.has_text()) refuse("a login module class was expected");
  entry.login_module = module.text;
  const Token flag = tokens.next();
  if (flag.type == Token::End) refuse("login module control flag not specified");
  const std::string name = flag.has_text() ? lowercase(flag.text) : std::string();
  if (name != "required" && name != "requisite" && name != "sufficient" && name != "optional") {
    refuse("invalid login module control flag " + word_at(flag, misspells_a_flag(flag)) +
           " (required, requisite, sufficient or optional)");
  }
  entry.flag = name;
  Token token = tokens.next();
  while (token.type != Token::End && !(token.type == Token::Char && token.c == ';')) {
    if (!token.has_text()) refuse("an option name was expected");
    const std::string key = token.text;
    const Token equals = tokens.next();
    const Token value = equals.type == Token::Char && equals.c == '=' ? tokens.next() : Token{};
    if (!value.has_text()) refuse("value not specified for key " + word_at(token, an_option_name(key)));
    entry.options.insert_or_assign(key, value.text);
    token = tokens.next();
  }
  if (token.type == Token::End) refuse("JAAS config entry not terminated by semi-colon");
  return entry;
}

// The number of single-character edits that turn `a` into `b` (Levenshtein).
std::size_t edits_between(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

bool close_to_one_of(std::string_view word, std::span<const std::string_view> names, std::size_t max_edits) {
  return std::any_of(names.begin(), names.end(),
                     [&](std::string_view name) { return edits_between(word, name) <= max_edits; });
}

JaasEntry parse_jaas_config(std::string_view text) {
  Tokenizer tokens(text);
  std::vector<JaasEntry> entries;
  for (Token token = tokens.next(); token.type != Token::End; token = tokens.next()) {
    entries.push_back(parse_entry(tokens, token));
  }
  if (entries.size() != 1) {
    refuse("the property holds " + std::to_string(entries.size()) + " login modules, should be 1 module");
  }
  return std::move(entries.front());
}

}  // namespace processor::kafka::internal
