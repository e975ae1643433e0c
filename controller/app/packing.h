#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuplacement::app {

// Words that recur in every cached object (field names, enum values, label
// keys, condition reasons): packed as their index, one byte for the first
// 64. A word not in it is packed as itself, so it need not be complete.
class Vocabulary {
 public:
  Vocabulary() = default;
  // The words must outlive the vocabulary (string literals).
  Vocabulary(std::initializer_list<std::string_view> words);

  // The index of `word`, or -1.
  std::int64_t indexOf(std::string_view word) const;
  // The word at `index`; empty when there is none.
  std::string_view at(std::int64_t index) const;

 private:
  std::vector<std::string_view> words_;
  std::unordered_map<std::string_view, std::int64_t> index_;
};

// A compact byte encoding for what the caches keep: variable-length
// integers and length-prefixed strings, written and read in the same
// order. Tens of thousands of cached objects cost a few hundred bytes each
// this way instead of a tree of small allocations.
//
// word(), timestamp() and uid() pack their value in a shorter form when it
// has one (an index, seconds, 16 bytes) and as the text otherwise; either
// way the Unpacker gives back exactly the text.
class Packer {
 public:
  explicit Packer(const Vocabulary& vocabulary = kNoWords) : vocabulary_(vocabulary) {}

  void integer(std::int64_t value);
  void string(std::string_view value);
  void boolean(bool value) { integer(value ? 1 : 0); }
  void word(std::string_view value);
  void timestamp(std::string_view rfc3339);
  void uid(std::string_view value);
  void real(double value);  // the 8 bytes as they are
  std::string take() { return std::move(bytes_); }

 private:
  static const Vocabulary kNoWords;
  // A negative tag, then the bytes: what every short form falls back to.
  void literal(std::string_view value);

  const Vocabulary& vocabulary_;
  std::string bytes_;
};

// Reads what a Packer with the same vocabulary wrote. Past the end (never,
// for bytes we packed) it yields zeros, empty strings and nulls rather than
// reading out of bounds.
class Unpacker {
 public:
  explicit Unpacker(std::string_view bytes, const Vocabulary& vocabulary = kNoWords)
      : bytes_(bytes), vocabulary_(vocabulary) {}

  std::int64_t integer();
  std::string string();
  bool boolean() { return integer() != 0; }
  std::string word();
  std::string timestamp();
  std::string uid();
  double real();

 private:
  static const Vocabulary kNoWords;
  std::string_view take(std::int64_t size);
  std::string literalOf(std::int64_t tag);

  std::string_view bytes_;
  const Vocabulary& vocabulary_;
};

}  // namespace gpuplacement::app
