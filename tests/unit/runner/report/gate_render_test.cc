// SPDX-License-Identifier: Apache-2.0
// Properties of the `perfwarden gate` renderings beyond the golden files: the text table's
// alignment and colours, Markdown escaping (every table row keeps its cell count whatever the
// names hold), the PR comment's size cap, well-formed JUnit XML (checked by a minimal XML reader
// written here, itself tested on broken documents), and GitLab metric names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "runner/report/verdict_model.h"
#include "runner/report/verdict_render.h"
#include "tests/testing/oracle_csv.h"
#include "wire/verdict.h"

namespace perfwarden::report {
namespace {

using perfwarden::testing::FixturePath;
using perfwarden::testing::ReadFile;
using wire::Attribution;
using wire::DecodeVerdict;
using wire::Interval;
using wire::MetricResult;
using wire::Outcome;
using wire::ResultKind;
using wire::Summary;
using wire::Verdict;

Verdict Load(const std::string& name) {
  auto verdict = DecodeVerdict(ReadFile(FixturePath("verdicts/" + name + ".json")));
  EXPECT_TRUE(verdict.has_value()) << name << ": " << (verdict ? "" : verdict.error().ToString());
  return verdict ? *verdict : Verdict{};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What is wrong with `xml` as an XML 1.0 document ("" when nothing): one root element, tags
// balanced and properly nested, attributes quoted, '<' never raw inside attributes, '&' only as a
// known entity or character reference, no characters XML cannot hold. No DTDs or CDATA (the
// renderer writes neither).
std::string XmlProblem(std::string_view xml) {
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '-' ||
           c == '.';
  };
  auto check_chars = [](std::string_view text, bool attribute) -> std::string {
    for (size_t i = 0; i < text.size(); ++i) {
      const auto u = static_cast<unsigned char>(text[i]);
      if (u < 0x20 && u != '\t' && u != '\n' && u != '\r') return "control character";
      if (u == 0xEF && text.substr(i + 1, 1) == "\xBF" && i + 2 < text.size() &&
          (static_cast<unsigned char>(text[i + 2]) & 0xFE) == 0xBE) {
        return "U+FFFE/U+FFFF";
      }
      if (text[i] == '<') return "raw '<'";
      if (attribute && text[i] == '"') return "raw quote in an attribute";
      if (text[i] == '&') {
        static const std::regex kReference("&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);");
        const size_t end = text.find(';', i);
        if (end == std::string_view::npos ||
            !std::regex_match(std::string(text.substr(i, end - i + 1)), kReference)) {
          return "bad reference";
        }
      }
    }
    return "";
  };
  size_t pos = 0;
  if (xml.starts_with("<?xml")) {
    pos = xml.find("?>");
    if (pos == std::string_view::npos) return "unterminated prolog";
    pos += 2;
  }
  std::vector<std::string> open;
  int roots = 0;
  while (pos < xml.size()) {
    const size_t lt = xml.find('<', pos);
    const std::string_view text = xml.substr(pos, lt == std::string_view::npos ? lt : lt - pos);
    if (open.empty() && text.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      return "text outside the root element";
    }
    if (std::string problem = check_chars(text, false); !problem.empty()) return problem;
    if (lt == std::string_view::npos) break;
    pos = lt + 1;
    const bool closing = pos < xml.size() && xml[pos] == '/';
    if (closing) ++pos;
    const size_t name_start = pos;
    while (pos < xml.size() && is_name_char(xml[pos])) ++pos;
    const std::string name(xml.substr(name_start, pos - name_start));
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return "bad tag name";
    if (closing) {
      if (open.empty() || open.back() != name) return "unbalanced </" + name + ">";
      open.pop_back();
      if (pos >= xml.size() || xml[pos] != '>') return "bad closing tag";
      ++pos;
      continue;
    }
    while (true) {
      while (pos < xml.size() && std::isspace(static_cast<unsigned char>(xml[pos]))) ++pos;
      if (pos >= xml.size()) return "unterminated tag <" + name;
      if (xml[pos] == '>' || xml.substr(pos, 2) == "/>") break;
      const size_t attr_start = pos;
      while (pos < xml.size() && is_name_char(xml[pos])) ++pos;
      if (pos == attr_start || xml.substr(pos, 2) != "=\"") return "bad attribute in <" + name;
      const size_t value_end = xml.find('"', pos + 2);
      if (value_end == std::string_view::npos) return "unterminated attribute";
      if (std::string problem = check_chars(xml.substr(pos + 2, value_end - pos - 2), true);
          !problem.empty()) {
        return problem + " in an attribute of <" + name + ">";
      }
      pos = value_end + 1;
    }
    if (open.empty() && ++roots > 1) return "more than one root element";
    if (xml[pos] == '/') {
      pos += 2;
    } else {
      open.push_back(name);
      ++pos;
    }
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (roots != 1) return "no root element";
  return "";
}

TEST(XmlProblem, AcceptsWellFormedAndRejectsBrokenDocuments) {
  EXPECT_EQ(XmlProblem("<?xml version=\"1.0\"?>\n<a x=\"1 &amp; &#10;\"><b/>t &lt; u</a>\n"), "");
  EXPECT_NE(XmlProblem("<a><b></a></b>"), "");
  EXPECT_NE(XmlProblem("<a>"), "");
  EXPECT_NE(XmlProblem("<a>x & y</a>"), "");
  EXPECT_NE(XmlProblem("<a x=\"<\"/>"), "");
  EXPECT_NE(XmlProblem("<a x=1/>"), "");
  EXPECT_NE(XmlProblem("<a>\x01</a>"), "");
  EXPECT_NE(XmlProblem("<a>\xEF\xBF\xBF</a>"), "");
  EXPECT_NE(XmlProblem("<a/><b/>"), "");
  EXPECT_NE(XmlProblem("<a>1 &bogus; 2</a>"), "");
}

TEST(RenderJUnit, IsWellFormedAndCountsTestsFailuresAndSkips) {
  for (const std::string name : {"regression", "pass", "no_baseline", "special_names",
                                 "gpu_attribution", "noisy_environment", "paired"}) {
    EXPECT_EQ(XmlProblem(RenderJUnit(Load(name))), "") << name;
  }
  const std::string xml = RenderJUnit(Load("regression"));
  EXPECT_NE(xml.find("<testsuite name=\"perfwarden\" tests=\"13\" failures=\"2\" errors=\"0\" "
                     "skipped=\"2\""),
            std::string::npos);
  EXPECT_NE(xml.find("<testcase classname=\"gbench_sample\" name=\"BM_Sort/16384 [real_time]\" "
                     "time=\"0\">\n      <failure message=\"+9.97% (threshold 5%), p=3.4e-4\" "
                     "type=\"REGRESSION\">"),
            std::string::npos);
  // The rule's own 3% threshold, not the project's 5%.
  EXPECT_NE(xml.find("message=\"-12.00% (threshold 3%), p=5.0e-5\""), std::string::npos);
  EXPECT_NE(xml.find("<system-out>INCONCLUSIVE: "), std::string::npos);

  const std::string none = RenderJUnit(Load("no_baseline"));
  EXPECT_NE(none.find("tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\""), std::string::npos);
  EXPECT_NE(none.find("<testcase classname=\"perfwarden\" name=\"baseline\" time=\"0\">\n"
                      "      <skipped message="),
            std::string::npos);
  EXPECT_EQ(none.find("BM_Sort"), std::string::npos);
}

// What moved, the hint and the host's state go where each audience looks first: under the
// regression in the job log and the PR comment, into the failure message of JUnit.
TEST(Render, ShowsAttributionAndEnvironmentWithTheRegression) {
  const Verdict noisy = Load("noisy_environment");
  const std::string text = RenderText(noisy, {.color = true});
  EXPECT_TRUE(
      text.starts_with("perfwarden: \x1b[33mNOISY ENVIRONMENT\x1b[0m \u2014 1 of 3 "
                       "benchmark metrics slower, all on throttled GPUs"))
      << text;
  const auto lines = Lines(RenderText(noisy));
  const auto at = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.starts_with("  REGRESSION mlp [step_time]: ");
  });
  ASSERT_NE(at, lines.end());
  ASSERT_LT(at + 2, lines.end());
  EXPECT_TRUE(
      at[1].starts_with("    moved: gpu_sm_clock -16.0% (inconclusive); hint: the GPU "
                        "clock fell"))
      << at[1];
  EXPECT_TRUE(at[2].starts_with("    environment: the GPUs were throttled in 20% of the samples"))
      << at[2];

  const std::string md = RenderMarkdown(noisy, {.comment = true});
  EXPECT_NE(md.find("### perfwarden: **Noisy environment**\n"), std::string::npos);
  EXPECT_NE(md.find("\n  - moved: gpu\\_sm\\_clock -16.0% (inconclusive); hint: "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("\n  - environment: the GPUs were throttled in 20% of the samples"),
            std::string::npos);

  const std::string xml = RenderJUnit(noisy);
  EXPECT_NE(xml.find("<property name=\"outcome\" value=\"noisy_environment\"/>"),
            std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"+19.80% (threshold 5%), p=1.0e-15; environment: the "
                     "GPUs were throttled in 20% of the samples (power or thermal caps): this run "
                     "measures the host, not the code; moved: gpu_sm_clock -16.0% (inconclusive)"
                     "; hint: "),
            std::string::npos)
      << xml;

  // A regression with neither a reason nor anything moved still shows its hint.
  const std::string gpu = RenderText(Load("gpu_attribution"));
  EXPECT_NE(gpu.find("  REGRESSION BM_Gather/4096 [real_time]\n    hint: real time rose but CPU "
                     "time did not"),
            std::string::npos)
      << gpu;
  EXPECT_NE(gpu.find("roofline: memory-bound (42.5 FLOP/byte, ridge 295)"), std::string::npos);
}

TEST(RenderText, AlignsTheTableAndColoursOnlyWhenAsked) {
  const Verdict v = Load("regression");
  const std::string plain = RenderText(v);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_TRUE(
      plain.starts_with("perfwarden: REGRESSION \u2014 2 of 11 benchmark metrics slower "
                        "than their thresholds\n"));
  const auto lines = Lines(plain);
  size_t header = 0;
  while (header < lines.size() && !lines[header].starts_with("Benchmark ")) ++header;
  ASSERT_LT(header, lines.size());
  const size_t verdict_column = lines[header].find("Verdict");
  for (size_t i = header + 1; i < header + 1 + v.results.size(); ++i) {
    ASSERT_LT(i, lines.size());
    EXPECT_GT(lines[i].size(), verdict_column) << lines[i];
    EXPECT_NE(lines[i][verdict_column], ' ') << lines[i];
    EXPECT_EQ(lines[i][verdict_column - 1], ' ') << lines[i];
  }
  const std::string colour = RenderText(v, {.color = true});
  EXPECT_NE(colour.find("\x1b[31mREGRESSION\x1b[0m"), std::string::npos);
  EXPECT_NE(colour.find("\x1b[32mIMPROVEMENT\x1b[0m"), std::string::npos);
  EXPECT_NE(colour.find("\x1b[33mINCONCLUSIVE\x1b[0m"), std::string::npos);
  EXPECT_EQ(colour.find("\x1b[32mEQUIVALENT"), std::string::npos);

  const std::string capped = RenderText(v, {.max_rows = 3});
  EXPECT_NE(capped.find("... 10 more benchmark metrics not shown (row limit 3)"),
            std::string::npos);
  EXPECT_EQ(capped.find("BM_Sort/512"), std::string::npos);
  // A benchmark name cannot write escape sequences or line breaks into the job log.
  EXPECT_EQ(RenderText(Load("special_names")).find('\x1b'), std::string::npos);
}

// Cells of a Markdown table row: '|' not escaped by a backslash, minus the outer two.
size_t CellCount(const std::string& row) {
  size_t pipes = 0;
  for (size_t i = 0; i < row.size(); ++i) pipes += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
  return pipes - 1;
}

TEST(RenderMarkdown, EscapesNamesSoEveryRowKeepsItsCells) {
  const Verdict v = Load("special_names");
  const std::string md = RenderMarkdown(v, {.comment = true, .project = "proj -->x"});
  EXPECT_TRUE(
      md.starts_with("<!-- perfwarden:gate project=proj%20--%3Ex testbed=ci%20x86%20--%3E%21 "
                     "-->\n"));
  EXPECT_EQ(md.find("-->", 5), md.find(" -->\n") + 1);  // the marker's end is the only "-->"
  // Names are code spans, where HTML and Markdown are literal text (hostile_markdown_test.cc
  // has the rest); sentences are escaped, HTML's specials as entities.
  EXPECT_NE(md.find("| `BM_Pipe`\\|``Star*_Tick`<script>alert('x')</script>`` |"),
            std::string::npos);
  EXPECT_NE(md.find("| `[link](http://evil) #h ~s~ \\back` |"), std::string::npos);
  EXPECT_NE(md.find("- \\*\\*bold\\*\\* &lt;img src=x&gt; &amp; \\`code\\` \\| pipe"),
            std::string::npos);
  EXPECT_EQ(md.find("<img"), std::string::npos);
  int rows = 0;
  for (const std::string& line : Lines(md)) {
    if (!line.starts_with("|")) continue;
    ++rows;
    EXPECT_EQ(CellCount(line), 9u) << line;  // suites differ: Suite + the 8 usual columns
  }
  EXPECT_EQ(rows, 2 * 2 + 5);  // two tables with header and separator, five results
  EXPECT_NE(md.find("(<https://perf.example.com/p/r?a=1&b=%3C2%3E%20x)>)"), std::string::npos);

  const std::string summary = RenderMarkdown(v);
  EXPECT_TRUE(summary.starts_with("### perfwarden: **Regression**\n"));
  EXPECT_TRUE(RenderMarkdown(Load("pass")).starts_with("### perfwarden: **Pass**\n"));
  EXPECT_TRUE(RenderMarkdown(Load("no_baseline")).starts_with("### perfwarden: **No baseline**\n"));
}

Verdict Many(size_t count, size_t regressions, size_t name_length) {
  Verdict v;
  v.outcome = regressions > 0 ? Outcome::kRegression : Outcome::kPass;
  v.testbed = "ci-x86-1";
  v.report_url = "https://perf.example.com/projects/p/runs/r/compare";
  for (size_t i = 0; i < count; ++i) {
    MetricResult r;
    r.key.suite = "gbench_sample";
    r.key.benchmark = "BM_Bench/" + std::to_string(i);
    r.key.benchmark += std::string(
        name_length > r.key.benchmark.size() ? name_length - r.key.benchmark.size() : 0, 'x');
    r.key.metric = "real_time";
    r.unit = "ns";
    r.kind = i < regressions ? ResultKind::kRegression : ResultKind::kEquivalent;
    r.base = Summary{20, 1000.0 + static_cast<double>(i), 0.01};
    r.current = Summary{10, 1100.0 + static_cast<double>(i), 0.01};
    r.change = i < regressions ? 0.1 : 0.001;
    r.change_ci = Interval{-0.01, 0.012};
    r.p_adjusted = i < regressions ? 1e-5 : 0.9;
    r.reason = "because";
    v.results.push_back(r);
  }
  v.counts.regression = static_cast<int64_t>(regressions);
  v.counts.equivalent = static_cast<int64_t>(count - regressions);
  return v;
}

// Result rows in a rendering: table lines other than the header and separator lines.
size_t ResultRows(const std::string& md) {
  size_t rows = 0;
  for (const std::string& line : Lines(md)) {
    rows +=
        line.starts_with("| ") && !line.starts_with("| Benchmark") && !line.starts_with("| :--");
  }
  return rows;
}

TEST(RenderMarkdown, KeepsACommentUnder60000CharactersAndCountsWhatIsLeftOut) {
  const Verdict v = Many(5000, 20, 0);
  const std::string by_rows = RenderMarkdown(v, {.comment = true});
  EXPECT_LT(by_rows.size(), 60000u);
  EXPECT_EQ(ResultRows(by_rows), 300u);
  EXPECT_NE(by_rows.find("_4700 of 5000 benchmark metrics not shown: the limit is 300 rows; the "
                         "full report has them all._"),
            std::string::npos);
  EXPECT_NE(by_rows.find("<summary>4980 other benchmark metrics</summary>"), std::string::npos);

  const std::string by_size =
      RenderMarkdown(v, {.comment = true, .max_rows = std::numeric_limits<size_t>::max()});
  EXPECT_LT(by_size.size(), 60000u);
  const size_t shown = ResultRows(by_size);
  EXPECT_GT(shown, 300u);  // the size, not a row count, was the limit
  EXPECT_NE(by_size.find("_" + std::to_string(5000 - shown) +
                         " of 5000 benchmark metrics not shown: a comment must stay under 60000 "
                         "characters"),
            std::string::npos);
  EXPECT_NE(by_size.find("`BM_Bench/19`"), std::string::npos);  // every regression is shown

  // Long names and regressions only: the regressions table itself is cut.
  const std::string long_names = RenderMarkdown(Many(400, 400, 5000), {.comment = true});
  EXPECT_LT(long_names.size(), 60000u);
  EXPECT_NE(long_names.find(" of 400 benchmark metrics not shown"), std::string::npos);
  EXPECT_EQ(long_names.find("<details>"), std::string::npos);

  // Long attributions and environment notes are cut like reasons, and counted in the budget.
  Verdict explained = Many(400, 400, 0);
  for (MetricResult& r : explained.results) {
    Attribution a;
    for (int i = 0; i < 100; ++i)
      a.moved.push_back({"metric_" + std::to_string(i), "IMPROVEMENT", -0.5});
    a.hint = std::string(2000, 'h');
    r.attribution = a;
    r.environment = std::string(2000, 'e');
  }
  const std::string cut = RenderMarkdown(explained, {.comment = true});
  EXPECT_LT(cut.size(), 60000u);
  EXPECT_NE(cut.find(" of 400 benchmark metrics not shown"), std::string::npos);

  // A step summary may be far longer: nothing is left out here.
  const std::string summary =
      RenderMarkdown(v, {.comment = false, .max_rows = std::numeric_limits<size_t>::max()});
  EXPECT_LT(summary.size(), kMaxSummaryChars);
  EXPECT_EQ(ResultRows(summary), 5000u);
  EXPECT_EQ(summary.find("not shown"), std::string::npos);
}

TEST(RenderGitLabMetrics, OneNameValueLinePerMetricWithAllowedNames) {
  const std::string text = RenderGitLabMetrics(Load("regression"));
  EXPECT_NE(text.find("\nperfwarden_gbench_sample_BM_Sort_16384_real_time 1123.4\n"),
            std::string::npos);
  EXPECT_NE(text.find("\nperfwarden_gbench_sample_BM_Sort_16384_real_time_change_percent 9.97\n"),
            std::string::npos);
  EXPECT_NE(text.find("\nperfwarden_gbench_sample_BM_Copy_4096_bytes_per_second 2200000000\n"),
            std::string::npos);
  EXPECT_EQ(text.find("BM_Sort_65536_real_time_change_percent"), std::string::npos);  // NEW
  const std::regex kLine("[a-zA-Z_:][a-zA-Z0-9_:]* -?[0-9.e+-]+");
  for (const std::string name : {"regression", "pass", "no_baseline", "special_names",
                                 "gpu_attribution", "noisy_environment", "paired"}) {
    for (const std::string& line : Lines(RenderGitLabMetrics(Load(name)))) {
      EXPECT_TRUE(std::regex_match(line, kLine)) << name << ": " << line;
    }
  }
  // Names that sanitise alike do not overwrite each other.
  Verdict clash = Many(2, 0, 0);
  clash.results[0].key.benchmark = "a/b";
  clash.results[1].key.benchmark = "a_b";
  EXPECT_EQ(RenderGitLabMetrics(clash),
            "perfwarden_gbench_sample_a_b_real_time 1100\n"
            "perfwarden_gbench_sample_a_b_real_time_change_percent 0.1\n"
            "perfwarden_gbench_sample_a_b_real_time_2 1101\n"
            "perfwarden_gbench_sample_a_b_real_time_2_change_percent 0.1\n");
}

}  // namespace
}  // namespace perfwarden::report
