#pragma once

// What a PromQL expression (as a Grafana panel writes it) selects: the
// metric names and the labels each selector matches on, for checking a
// dashboard against what /metrics exposes. Not a PromQL parser: it walks
// the tokens, skipping strings, label matchers, ranges and Grafana
// variables, and takes every other identifier that is not a function, an
// aggregation or a keyword for a metric name. Anything it cannot read is a
// problem, so a query it misreads fails the test rather than passing it.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace gpuplacement::testing {

struct PromqlSelector {
  std::string metric;
  std::vector<std::string> labels;  // the label names of its matchers
};

struct PromqlSelection {
  std::vector<PromqlSelector> selectors;
  std::vector<std::string> problems;

  std::set<std::string> metrics() const {
    std::set<std::string> names;
    for (const auto& selector : selectors) {
      names.insert(selector.metric);
    }
    return names;
  }
};

namespace promql_detail {

// Functions and aggregation operators (Prometheus 3.x): an identifier
// followed by "(" must be one of these.
inline const std::set<std::string>& functions() {
  static const std::set<std::string> names = {
      // aggregation operators
      "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk",
      "topk", "quantile", "limitk", "limit_ratio",
      // functions
      "abs", "absent", "absent_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh",
      "avg_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min", "cos", "cosh",
      "count_over_time", "day_of_month", "day_of_week", "day_of_year", "days_in_month", "deg",
      "delta", "deriv", "exp", "floor", "histogram_avg", "histogram_count", "histogram_fraction",
      "histogram_quantile", "histogram_stddev", "histogram_stdvar", "histogram_sum", "holt_winters",
      "double_exponential_smoothing", "hour", "idelta", "increase", "irate", "label_join",
      "label_replace", "last_over_time", "ln", "log10", "log2", "mad_over_time", "max_over_time",
      "min_over_time", "minute", "month", "pi", "predict_linear", "present_over_time",
      "quantile_over_time", "rad", "rate", "resets", "round", "scalar", "sgn", "sin", "sinh",
      "sort", "sort_by_label", "sort_by_label_desc", "sort_desc", "sqrt", "stddev_over_time",
      "stdvar_over_time", "sum_over_time", "tan", "tanh", "time", "timestamp", "vector", "year"};
  return names;
}

// Keywords followed by a parenthesised list of label names.
inline bool takesLabelList(const std::string& word) {
  return word == "by" || word == "without" || word == "on" || word == "ignoring" ||
         word == "group_left" || word == "group_right";
}

inline bool isKeyword(const std::string& word) {
  static const std::set<std::string> words = {"bool",  "and",   "or",  "unless", "offset",
                                              "atan2", "start", "end", "inf",    "nan"};
  std::string lower = word;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return words.count(lower) > 0 || takesLabelList(word);
}

inline bool identifierStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
inline bool identifierPart(char c) {
  return identifierStart(c) || std::isdigit(static_cast<unsigned char>(c));
}

class Walker {
 public:
  explicit Walker(const std::string& expr) : text_(expr) {}

  PromqlSelection run() {
    while (skipSpace(), at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '"' || c == '\'' || c == '`') {
        skipString();
      } else if (c == '{') {
        problem("a selector without a metric name at offset " + std::to_string(at_));
        readMatchers();
      } else if (c == '[') {
        skipPast(']');  // a range or subquery: durations and Grafana variables
      } else if (c == '$') {
        skipVariable();  // a Grafana variable standing for a literal
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && at_ + 1 < text_.size() &&
                  std::isdigit(static_cast<unsigned char>(text_[at_ + 1])))) {
        skipNumber();
      } else if (identifierStart(c)) {
        identifier();
      } else {
        ++at_;  // operators, parentheses, commas
      }
    }
    return std::move(result_);
  }

 private:
  void problem(std::string message) { result_.problems.push_back(std::move(message)); }

  void skipSpace() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) {
      ++at_;
    }
  }

  // From an opening quote to past the closing one (backslash escapes,
  // except in raw `...` strings).
  std::string skipString() {
    const char quote = text_[at_++];
    std::string value;
    while (at_ < text_.size() && text_[at_] != quote) {
      if (text_[at_] == '\\' && quote != '`' && at_ + 1 < text_.size()) {
        ++at_;
      }
      value.push_back(text_[at_++]);
    }
    if (at_ >= text_.size()) {
      problem("an unterminated string");
    }
    ++at_;
    return value;
  }

  void skipPast(char close) {
    const auto end = text_.find(close, at_);
    if (end == std::string::npos) {
      problem(std::string("no closing '") + close + "'");
      at_ = text_.size();
      return;
    }
    at_ = end + 1;
  }

  void skipVariable() {
    ++at_;
    if (at_ < text_.size() && text_[at_] == '{') {
      skipPast('}');
      return;
    }
    while (at_ < text_.size() && identifierPart(text_[at_])) {
      ++at_;
    }
  }

  void skipNumber() {
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.' ||
            ((text_[at_] == '+' || text_[at_] == '-') && at_ > 0 &&
             (text_[at_ - 1] == 'e' || text_[at_ - 1] == 'E')))) {
      ++at_;
    }
  }

  std::string readIdentifier() {
    const auto start = at_;
    while (at_ < text_.size() && identifierPart(text_[at_])) {
      ++at_;
    }
    return text_.substr(start, at_ - start);
  }

  void identifier() {
    const std::string word = readIdentifier();
    skipSpace();
    const char next = at_ < text_.size() ? text_[at_] : '\0';
    if (takesLabelList(word)) {
      if (next == '(') {
        skipPast(')');
      }
      return;
    }
    if (isKeyword(word)) {
      return;
    }
    if (functions().count(word) && identifierStart(next)) {
      // "sum by (le) (...)": an aggregation with its grouping first.
      const auto start = at_;
      const bool grouping = takesLabelList(readIdentifier());
      at_ = start;
      if (grouping) {
        return;
      }
    }
    if (next == '(') {
      if (!functions().count(word)) {
        problem("unknown function " + word);
      }
      return;
    }
    PromqlSelector selector{word, {}};
    if (next == '{') {
      selector.labels = readMatchers();
    }
    result_.selectors.push_back(std::move(selector));
  }

  // {name op "value", ...}: the names.
  std::vector<std::string> readMatchers() {
    std::vector<std::string> names;
    ++at_;  // {
    while (skipSpace(), at_ < text_.size() && text_[at_] != '}') {
      if (!identifierStart(text_[at_])) {
        problem("cannot read the label matchers at offset " + std::to_string(at_));
        skipPast('}');
        return names;
      }
      const std::string name = readIdentifier();
      if (name == "__name__") {
        problem("a selector by __name__ names no metric the test can check");
      }
      names.push_back(name);
      skipSpace();
      while (at_ < text_.size() && (text_[at_] == '=' || text_[at_] == '!' || text_[at_] == '~')) {
        ++at_;
      }
      skipSpace();
      if (at_ >= text_.size() || (text_[at_] != '"' && text_[at_] != '\'' && text_[at_] != '`')) {
        problem("label " + name + " is not matched against a string");
        skipPast('}');
        return names;
      }
      skipString();
      skipSpace();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
      }
    }
    if (at_ >= text_.size()) {
      problem("no closing '}'");
    }
    ++at_;  // }
    return names;
  }

  const std::string& text_;
  std::size_t at_ = 0;
  PromqlSelection result_;
};

}  // namespace promql_detail

inline PromqlSelection promqlSelection(const std::string& expr) {
  return promql_detail::Walker(expr).run();
}

// Grafana's label_values(selector, label) variable query: the selector's.
inline PromqlSelection labelValuesSelection(const std::string& query) {
  const std::string prefix = "label_values(";
  const auto comma = query.rfind(',');
  if (query.rfind(prefix, 0) != 0 || comma == std::string::npos || query.back() != ')') {
    PromqlSelection selection;
    selection.problems.push_back("not a label_values(selector, label) query: " + query);
    return selection;
  }
  return promqlSelection(query.substr(prefix.size(), comma - prefix.size()));
}

}  // namespace gpuplacement::testing
