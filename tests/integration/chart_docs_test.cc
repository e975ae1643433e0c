// The chart's documentation: its README is what helm-docs writes from
// values.yaml (scripts/chart-docs), it has a described row for every value
// values.schema.json allows, and NOTES.txt and the README's template link
// only to docs pages and sections that exist. No control plane: these read
// files and run helm-docs.
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "support/command.h"
#include "support/control_plane.h"
#include "support/temp_dir.h"

namespace gpuplacement {
namespace {

using json = nlohmann::json;

const std::string kChartDir = testing::repoRoot() + "/charts/gpu-placement-operator";

std::string readText(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rows of the README's values table: key -> description.
std::map<std::string, std::string> valueRows(const std::string& readme) {
  std::map<std::string, std::string> rows;
  std::istringstream lines(readme);
  std::string line;
  bool inTable = false;
  while (std::getline(lines, line)) {
    if (line.rfind("| Key | Type | Default | Description |", 0) == 0) {
      inTable = true;
      continue;
    }
    if (!inTable || line.rfind("|-", 0) == 0) {
      continue;
    }
    if (line.rfind("| ", 0) != 0) {
      break;
    }
    const auto keyEnd = line.find(" | ");
    const auto descriptionStart = line.rfind(" | ", line.size() - 3);
    REQUIRE_MESSAGE(keyEnd != std::string::npos, "not a table row: " << line);
    rows[line.substr(2, keyEnd - 2)] =
        line.substr(descriptionStart + 3, line.size() - descriptionStart - 5);
  }
  return rows;
}

// The properties of a JSON schema object, as dotted paths under prefix.
void schemaPaths(const json& schema, const std::string& prefix,
                 std::vector<std::pair<std::string, const json*>>& out) {
  if (!schema.contains("properties")) {
    return;
  }
  for (const auto& [name, property] : schema["properties"].items()) {
    out.emplace_back(prefix + name, &property);
  }
}

// GitHub's anchor for a Markdown heading: lower case, punctuation dropped,
// spaces to hyphens.
std::string githubAnchor(const std::string& heading) {
  std::string anchor;
  for (const unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_') {
      anchor += static_cast<char>(std::tolower(c));
    } else if (c == ' ') {
      anchor += '-';
    }
  }
  return anchor;
}

struct Headings {
  std::set<std::string> titles;
  std::set<std::string> anchors;
};

Headings headingsOf(const std::string& markdown) {
  Headings headings;
  std::istringstream lines(markdown);
  std::string line;
  bool inCode = false;
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) {
      inCode = !inCode;
    }
    if (inCode || line.empty() || line[0] != '#') {
      continue;
    }
    const auto title = line.substr(line.find_first_not_of('#') + 1);
    headings.titles.insert(title);
    headings.anchors.insert(githubAnchor(title));
  }
  return headings;
}

}  // namespace

TEST_CASE("the chart's README is what scripts/chart-docs writes from values.yaml") {
  testing::TempDir dir;
  const auto result =
      testing::runCommand(testing::repoRoot() + "/scripts/chart-docs --output-dir " + dir.path());
  REQUIRE_MESSAGE(result.exitCode == 0, result.err);
  const auto generated = readText(dir.path() + "/README.md");
  const auto committed = readText(kChartDir + "/README.md");
  // Where they part, rather than both files in full.
  std::istringstream generatedLines(generated), committedLines(committed);
  std::string wanted, found;
  int line = 0;
  bool same = true;
  while (same) {
    ++line;
    const bool moreWanted = static_cast<bool>(std::getline(generatedLines, wanted));
    const bool moreFound = static_cast<bool>(std::getline(committedLines, found));
    same = moreWanted == moreFound && (!moreWanted || wanted == found);
    if (!moreWanted && !moreFound) {
      break;
    }
  }
  same = same && generated == committed;  // and the last line's newline
  CHECK_MESSAGE(same,
                "charts/gpu-placement-operator/README.md differs from what helm-docs "
                "writes from values.yaml and README.md.gotmpl at line "
                    << line << " (committed: '" << found << "', written: '" << wanted
                    << "'): run scripts/chart-docs and commit the result");
}

TEST_CASE("every value values.schema.json allows has a described row in the chart's README") {
  const auto rows = valueRows(readText(kChartDir + "/README.md"));
  REQUIRE(rows.size() > 30);
  for (const auto& [key, description] : rows) {
    CAPTURE(key);
    CHECK_MESSAGE(!description.empty(), "give it a '# --' comment in values.yaml");
  }
  // A schema property is documented by its own row, by a row of an object
  // holding it (e.g. `resources`), or by rows of what it holds (e.g. the
  // fields of `placementPolicy.spec`, which the schema leaves to the CRD).
  const auto schema = json::parse(readText(kChartDir + "/values.schema.json"));
  std::vector<std::pair<std::string, const json*>> pending;
  schemaPaths(schema, "", pending);
  std::size_t checked = 0;
  while (!pending.empty()) {
    const auto [path, property] = pending.back();
    pending.pop_back();
    ++checked;
    bool documented = false;
    bool documentedAsWhole = false;
    for (const auto& [key, description] : rows) {
      documentedAsWhole |= key == path || path.rfind(key + ".", 0) == 0;
      documented |= key == path || path.rfind(key + ".", 0) == 0 || key.rfind(path + ".", 0) == 0;
    }
    CAPTURE(path);
    CHECK_MESSAGE(documented,
                  "no row in charts/gpu-placement-operator/README.md: add the value "
                  "to values.yaml with a '# --' comment and run scripts/chart-docs");
    if (!documentedAsWhole) {
      schemaPaths(*property, path + ".", pending);
    }
  }
  CHECK(checked > 30);
}

TEST_CASE("NOTES.txt and the chart's README link to docs pages and sections that exist") {
  int references = 0;
  for (const std::string file : {"templates/NOTES.txt", "README.md.gotmpl"}) {
    const auto text = readText(kChartDir + "/" + file);
    // {{ .Chart.Home }}/blob/main/PATH[#anchor] (NOTES.txt) or the same with
    // {{ .Home }} (helm-docs' template): a file of this repository, and a
    // section of it by GitHub's slug.
    const std::regex link(
        R"(\{\{ \.(?:Chart\.)?Home \}\}/blob/main/([A-Za-z0-9_./-]*[A-Za-z0-9_/-])(?:#([A-Za-z0-9_-]+))?)");
    for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) {
      ++references;
      const std::string path = (*it)[1];
      CAPTURE(file);
      CAPTURE(path);
      const auto target = testing::repoRoot() + "/" + path;
      REQUIRE_MESSAGE(std::ifstream(target).good(), "no file " << path << " in the repository");
      if ((*it)[2].matched) {
        const std::string anchor = (*it)[2];
        CHECK_MESSAGE(headingsOf(readText(target)).anchors.count(anchor) == 1,
                      path << " has no section with the anchor #" << anchor);
      }
    }
    // No link may point at the repository's front page for a section: the
    // README is the front door, the manual is docs/.
    const std::regex bare(R"(\{\{ \.(?:Chart\.)?Home \}\}#)");
    CHECK_MESSAGE(!std::regex_search(text, bare), file << " links to a README section");
  }
  CHECK(references >= 5);
}

}  // namespace gpuplacement
