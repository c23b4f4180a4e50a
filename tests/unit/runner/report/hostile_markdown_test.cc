// SPDX-License-Identifier: Apache-2.0
// The PR comment against hostile names: every name and sentence that comes from the suite, the
// pull request or the server (benchmark, metric, suite, unit, branch, testbed, reasons, warnings)
// holds mentions, links, HTML, a fake marker, backticks, pipes and a heading, and the rendered
// Markdown must hold none of them live, while still showing each name as it is. "Live" is
// defined by a small CommonMark reading written here (code spans, backslash escapes, entities):
// the oracle, kept apart from the renderer's own code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "runner/report/text_format.h"
#include "runner/report/verdict_render.h"
#include "wire/verdict.h"

namespace perfwarden::report {
namespace {

using wire::Attribution;
using wire::Baseline;
using wire::MetricResult;
using wire::MovedMetric;
using wire::Outcome;
using wire::ResultKind;
using wire::Summary;
using wire::Verdict;

constexpr std::string_view kJoiner = "\u2060";

// Where a backtick run starting at `at` ends.
size_t RunEnd(const std::string& md, size_t at) {
  while (at < md.size() && md[at] == '`') ++at;
  return at;
}

// Three readings of `md` as CommonMark inlines. kSeen: the text a reader sees (code spans'
// contents with their one-space padding stripped, backslash escapes and the three entities
// resolved, word joiners dropped). kText: the text outside code spans (each span "C"), where
// GitHub and GitLab look for mentions, references and bare links after Markdown is parsed, so
// escapes are resolved and word joiners kept. kMarkup: what the Markdown parser itself still
// interprets: code spans "C", escaped characters "E", entities as written.
enum class Reading { kSeen, kText, kMarkup };

std::string Read(const std::string& md, Reading reading) {
  const bool seen = reading == Reading::kSeen;
  std::string out;
  for (size_t i = 0; i < md.size();) {
    const char c = md[i];
    if (c == '\\' && i + 1 < md.size() && std::ispunct(static_cast<unsigned char>(md[i + 1]))) {
      out += reading == Reading::kMarkup ? 'E' : md[i + 1];
      i += 2;
    } else if (c == '`') {
      const size_t open_end = RunEnd(md, i), length = open_end - i;
      size_t close = open_end;
      for (; (close = md.find('`', close)) != std::string::npos; close = RunEnd(md, close)) {
        if (RunEnd(md, close) - close == length) break;
      }
      if (close == std::string::npos) {  // no closer: literal backticks
        out += md.substr(i, length);
        i = open_end;
        continue;
      }
      std::string content = md.substr(open_end, close - open_end);
      if (content.size() >= 2 && content.front() == ' ' && content.back() == ' ' &&
          content.find_first_not_of(' ') != std::string::npos) {
        content = content.substr(1, content.size() - 2);
      }
      out += seen ? content : "C";
      i = close + length;
    } else if (reading != Reading::kMarkup && md.compare(i, 4, "&lt;") == 0) {
      out += '<', i += 4;
    } else if (reading != Reading::kMarkup && md.compare(i, 4, "&gt;") == 0) {
      out += '>', i += 4;
    } else if (reading != Reading::kMarkup && md.compare(i, 5, "&amp;") == 0) {
      out += '&', i += 5;
    } else if (seen && md.compare(i, kJoiner.size(), kJoiner) == 0) {
      i += kJoiner.size();
    } else {
      out += c, ++i;
    }
  }
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What in one line of `md` GitHub or GitLab would turn into a mention, reference, link, image
// or HTML: "" when nothing, else what and where.
std::string LiveProblem(const std::string& line) {
  struct Live {
    Reading reading;
    std::regex pattern;
    std::string what;
  };
  static const std::vector<Live> kLive = {
      {Reading::kText, std::regex("@[A-Za-z0-9_]"), "a mention or e-mail address"},
      {Reading::kText, std::regex("[#!][0-9]"), "an issue or merge request reference"},
      {Reading::kText, std::regex("://"), "a link with a scheme"},
      {Reading::kText, std::regex("www\\.", std::regex::icase), "a www. link"},
      {Reading::kMarkup, std::regex("[<>\\[\\]]"), "HTML, an autolink or link syntax"},
  };
  for (const Live& live : kLive) {
    const std::string text = Read(line, live.reading);
    std::smatch m;
    if (std::regex_search(text, m, live.pattern)) {
      return live.what + " at \"" + text.substr(m.position()) + "\"";
    }
  }
  return "";
}

const std::vector<std::string>& HostileNames() {
  static const std::vector<std::string> names = {
      "@org/team",
      "ping @user please",
      "http://evil.example/x",
      "see https://evil.example",
      "www.evil.example",
      "WWW.Evil.Example",
      "<img src=x onerror=alert(1)>",
      "<!-- perfwarden:gate project=x testbed=y -->",
      "a`b``c",
      "`edge`",
      "pipe|in\\|name\\",
      "[click](http://x)",
      "![img](http://x/i.png)",
      "x\n# heading",
      "mail me@evil.example",
      "fixes #12 and !34",
  };
  return names;
}

// A verdict whose every name and sentence is hostile; report_url is the one trusted link.
Verdict HostileVerdict() {
  const auto& names = HostileNames();
  Verdict v;
  v.outcome = Outcome::kRegression;
  v.commit = "fedcba9876543210fedcba9876543210fedcba98";
  v.branch = "@org/team http://evil.example";
  v.testbed = "<!-- perfwarden:gate project=x -->";
  v.report_url = "https://perf.example.com/r";
  v.warnings = names;  // every name as a sentence too
  v.warnings.push_back("see @user at www.evil.example <b>x</b>");
  v.baseline = Baseline{.commit = "0123456789abcdef0123456789abcdef01234567",
                        .branch = "@user",
                        .testbed = "www.evil.example|x",
                        .run_ids = {"r1"},
                        .selection = "picked by @user at http://evil.example",
                        .distance = 1};
  for (size_t i = 0; i < names.size(); ++i) {
    MetricResult r;
    r.key.suite = i % 2 ? names[i] : "@suite";
    r.key.benchmark = names[i];
    r.key.metric = names[(i + 3) % names.size()];
    r.unit = "@ns http://u";
    r.kind = i < 8 ? ResultKind::kRegression : ResultKind::kEquivalent;
    r.base = Summary{10, 100.0, 0.01};
    r.current = Summary{10, 120.0, 0.01};
    r.change = 0.2;
    r.reason = names[(i + 5) % names.size()];
    r.environment = i == 0 ? "throttled by @ops, see http://status.example" : "";
    if (i == 1) {
      r.attribution = Attribution{
          .moved = {MovedMetric{.metric = "@gpu www.x.example", .verdict = "<i>", .change = 0.1}},
          .roofline = std::nullopt,
          .hint = "ask @admin at https://evil.example"};
    }
    v.results.push_back(r);
  }
  v.counts = wire::CountResults(v.results);
  return v;
}

TEST(HostileMarkdown, NoNameOrSentenceMentionsLinksOrMarksUp) {
  const Verdict v = HostileVerdict();
  for (const bool comment : {true, false}) {
    const std::string md = RenderMarkdown(v, {.comment = comment, .project = "@org/team"});
    const std::vector<std::string> lines = Lines(md);
    ASSERT_FALSE(lines.empty());
    int headings = 0, rows = 0;
    for (size_t n = 0; n < lines.size(); ++n) {
      std::string line = lines[n];
      if (comment && n == 0) {
        // The marker: an HTML comment, shown to no one (an '@' there mentions nobody); its names
        // percent-encoded, so its "-->" is the only one and no name can end it early.
        EXPECT_TRUE(std::regex_match(line, std::regex("<!-- perfwarden:gate project=@org/team "
                                                      "testbed=[A-Za-z0-9%._~:@+/=-]+ -->")))
            << line;
        EXPECT_EQ(line.find("-->"), line.size() - 3) << line;
        continue;
      }
      // The renderer's own markup: the fold and the one trusted link.
      for (const std::string fixed : {"<details><summary>", "</summary>", "</details>",
                                      "[Full report](<https://perf.example.com/r>)"}) {
        for (size_t at; (at = line.find(fixed)) != std::string::npos;) line.erase(at, fixed.size());
      }
      EXPECT_EQ(LiveProblem(line), "") << "line " << n << ": " << lines[n];
      headings += line.starts_with("#");
      if (line.starts_with("|")) {
        ++rows;
        const std::string markup = Read(line, Reading::kMarkup);
        EXPECT_EQ(std::count(markup.begin(), markup.end(), '|'), 10) << lines[n];  // 9 cells
      }
    }
    EXPECT_EQ(headings, 1) << md;  // "### perfwarden: ..." only
    EXPECT_EQ(rows, 2 * 2 + static_cast<int>(HostileNames().size())) << md;

    // Every name is still shown as it is (control characters as '?').
    const std::string seen = Read(md, Reading::kSeen);
    for (std::string name : HostileNames()) {
      std::replace(name.begin(), name.end(), '\n', '?');
      EXPECT_NE(seen.find("| " + name + " |"), std::string::npos) << name << "\nin:\n" << seen;
    }
    EXPECT_NE(seen.find("see @user at www.evil.example <b>x</b>"), std::string::npos) << seen;
    EXPECT_NE(seen.find(" \u2014 @org/team http://evil.example at fedcba9 on "
                        "<!-- perfwarden:gate project=x -->."),
              std::string::npos)
        << seen;
    EXPECT_NE(seen.find("Baseline: 0123456 on @user, selected as picked by @user at "
                        "http://evil.example (distance 1), 1 run on www.evil.example|x."),
              std::string::npos)
        << seen;
  }
}

TEST(MdCode, FencesAnyNameAndKeepsPipesOutOfTheSpans) {
  struct Case {
    std::string name, code;
  };
  const std::vector<Case> cases = {
      {"BM_Sort/8", "`BM_Sort/8`"},
      {"", ""},
      {"a`b", "``a`b``"},
      {"a`b``c", "```a`b``c```"},
      {"`edge`", "`` `edge` ``"},
      {" spaced ", "`  spaced  `"},
      {"a|b", "`a`\\|`b`"},
      {"|a\\|", "\\|`a\\`\\|"},  // a backslash never stands before a pipe
      {"x\ny", "`x?y`"},
      {"@user <b>", "`@user <b>`"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(text::MdCode(c.name), c.code) << c.name;
    std::string shown = c.name;
    std::replace(shown.begin(), shown.end(), '\n', '?');
    EXPECT_EQ(Read(text::MdCode(c.name), Reading::kSeen), shown) << c.name;
  }
}

TEST(DefuseMd, BreaksMentionsReferencesAndBareLinksInvisibly) {
  const std::string j(kJoiner);
  struct Case {
    std::string in, out;
  };
  const std::vector<Case> cases = {
      {"@org/team and a@b.example", "@" + j + "org/team and a@" + j + "b.example"},
      {"http://x https://y HTTP://z", "http:" + j + "//x https:" + j + "//y HTTP:" + j + "//z"},
      {"www.x WwW.y awww.z ww.w", "www" + j + ".x WwW" + j + ".y awww" + j + ".z ww.w"},
      {"#12 !3 # a ! b a:b", "#" + j + "12 !" + j + "3 # a ! b a:b"},
      {"plain text", "plain text"},
  };
  for (const Case& c : cases) EXPECT_EQ(text::DefuseMd(c.in), c.out) << c.in;
}

}  // namespace
}  // namespace perfwarden::report
