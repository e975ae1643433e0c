#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

namespace gpuplacement::app {

// Left-aligned columns, two spaces apart, like kubectl get.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.size() == 1; }

  void print(std::ostream& out) const {
    std::vector<std::size_t> widths;
    for (const auto& row : rows_) {
      widths.resize(std::max(widths.size(), row.size()));
      for (std::size_t i = 0; i < row.size(); ++i) {
        widths[i] = std::max(widths[i], row[i].size());
      }
    }
    for (const auto& row : rows_) {
      std::string line;
      for (std::size_t i = 0; i < row.size(); ++i) {
        line += row[i];
        if (i + 1 < row.size()) {
          line.append(widths[i] - row[i].size() + 2, ' ');
        }
      }
      out << line << "\n";
    }
  }

  // The same rows as a Markdown table, '|' in cells escaped.
  void printMarkdown(std::ostream& out) const {
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      std::string line = "|";
      for (const auto& cell : rows_[r]) {
        line += " ";
        for (char c : cell) {
          line += c == '|' ? std::string("\\|") : std::string(1, c);
        }
        line += " |";
      }
      out << line << "\n";
      if (r == 0) {
        out << "|";
        for (std::size_t i = 0; i < rows_[0].size(); ++i) {
          out << "---|";
        }
        out << "\n";
      }
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace gpuplacement::app
