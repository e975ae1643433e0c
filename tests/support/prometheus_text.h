#pragma once

// A scrape of /metrics read back: the families its # TYPE lines declare
// and every sample with its labels, for tests that look for one series.
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace gpuplacement::testing {

struct PrometheusSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct PrometheusScrape {
  std::map<std::string, std::string> types;  // family -> counter, gauge, histogram...
  std::vector<PrometheusSample> samples;
  std::vector<std::string> unreadable;  // lines that are neither

  // The samples of `name` whose labels include every pair of `labels`.
  std::vector<PrometheusSample> find(const std::string& name,
                                     const std::map<std::string, std::string>& labels = {}) const {
    std::vector<PrometheusSample> found;
    for (const auto& sample : samples) {
      if (sample.name != name) {
        continue;
      }
      bool matches = true;
      for (const auto& [key, value] : labels) {
        const auto it = sample.labels.find(key);
        matches = matches && it != sample.labels.end() && it->second == value;
      }
      if (matches) {
        found.push_back(sample);
      }
    }
    return found;
  }
};

// The text exposition format (0.0.4) as the operator writes it.
inline PrometheusScrape parsePrometheusText(const std::string& text) {
  PrometheusScrape scrape;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) {
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream fields(line.substr(7));
      std::string name, type;
      fields >> name >> type;
      scrape.types[name] = type;
      continue;
    }
    if (line[0] == '#') {
      continue;
    }
    PrometheusSample sample;
    std::size_t at = line.find_first_of("{ ");
    if (at == std::string::npos) {
      scrape.unreadable.push_back(line);
      continue;
    }
    sample.name = line.substr(0, at);
    bool ok = true;
    if (line[at] == '{') {
      ++at;
      while (ok && at < line.size() && line[at] != '}') {
        const auto equals = line.find("=\"", at);
        ok = equals != std::string::npos;
        if (!ok) {
          break;
        }
        const std::string key = line.substr(at, equals - at);
        std::string value;
        at = equals + 2;
        while (at < line.size() && line[at] != '"') {
          if (line[at] == '\\' && at + 1 < line.size()) {
            ++at;
            value.push_back(line[at] == 'n' ? '\n' : line[at]);
          } else {
            value.push_back(line[at]);
          }
          ++at;
        }
        ok = at < line.size();
        ++at;  // closing quote
        if (at < line.size() && line[at] == ',') {
          ++at;
        }
        sample.labels[key] = value;
      }
      ok = ok && at < line.size();
      ++at;  // }
    }
    ok = ok && at < line.size() && line[at] == ' ';
    if (!ok) {
      scrape.unreadable.push_back(line);
      continue;
    }
    const std::string number = line.substr(at + 1);
    sample.value = number == "+Inf"   ? HUGE_VAL
                   : number == "-Inf" ? -HUGE_VAL
                                      : std::strtod(number.c_str(), nullptr);
    scrape.samples.push_back(std::move(sample));
  }
  return scrape;
}

}  // namespace gpuplacement::testing
