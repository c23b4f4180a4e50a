// The alert pieces both renderings share, and the one-line summaries alerts_render.h exports
// (change, kind, range key, bisect command).
#include "runner/report/alert_pieces.h"

#include <cmath>
#include <optional>
#include <string_view>

#include "runner/report/alerts_render.h"
#include "runner/report/text_format.h"

namespace perfgate::report {
namespace {

using alerts_internal::FirstBad;
using alerts_internal::LastGood;
using alerts_internal::ShortSha;
using nlohmann::json;
using text::AnyText;
using text::Clean;
using text::Get;
using text::Join;
using text::Md;
using text::MdCode;
using text::Num;
using text::Obj;
using text::OrDash;
using text::Percent;
using text::Str;
using text::Strings;

// Quoted for a POSIX shell when it holds anything but [A-Za-z0-9_@%+=:,./-].
std::string ShellWord(const std::string& word) {
  static constexpr std::string_view kSafe =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-";
  if (!word.empty() && word.find_first_not_of(kSafe) == std::string::npos) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

namespace alerts_internal {

std::string IdText(const json& alert) {
  const json* id = Get(alert, "id");
  if (id == nullptr) return "?";
  return Clean(AnyText(*id));
}

std::string ShortSha(const std::string& sha, size_t n) {
  return sha.size() > n ? sha.substr(0, n) : sha;
}

const json& LastGood(const json& alert) { return Obj(Obj(alert, "range"), "last_good"); }
const json& FirstBad(const json& alert) { return Obj(Obj(alert, "range"), "first_bad"); }

std::string BenchmarkName(const json& alert) {
  const json& series = Obj(alert, "series");
  const std::string suite = Str(series, "suite");
  const std::string benchmark = Str(series, "benchmark");
  if (suite.empty()) return OrDash(benchmark);
  return suite + "/" + OrDash(benchmark);
}

std::string CommitLine(const json& commit, bool markdown) {
  const std::string sha = Str(commit, "sha");
  if (sha.empty()) return "";
  std::string out = markdown ? MdCode(ShortSha(sha, 7)) : ShortSha(sha, 7);
  const std::string subject = Str(commit, "subject");
  if (!subject.empty()) out += " " + (markdown ? Md(subject) : Clean(subject));
  std::vector<std::string> by;
  if (std::string author = Str(commit, "author"); !author.empty()) by.push_back(author);
  if (std::string time = Str(commit, "time"); !time.empty()) by.push_back(time);
  if (!by.empty()) {
    const std::string joined = Join(by, ", ");
    out += " (" + (markdown ? Md(joined) : Clean(joined)) + ")";
  }
  return out;
}

std::vector<std::string> EnvironmentLines(const json& alert) {
  std::vector<std::string> lines;
  const json& env = Obj(alert, "environment_change");
  if (env.is_null()) return lines;
  const json& before = Obj(env, "before");
  const json& after = Obj(env, "after");
  for (const std::string& name : Strings(env, "changed")) {
    const json* b = Get(before, name.c_str());
    const json* a = Get(after, name.c_str());
    lines.push_back(name + ": " + (b ? AnyText(*b) : "-") + " -> " + (a ? AnyText(*a) : "-"));
  }
  if (lines.empty()) lines.push_back("the testbed's fingerprint changed");
  return lines;
}

}  // namespace alerts_internal

std::string FormatAlertChange(const json& alert) {
  const std::optional<double> magnitude = Num(alert, "magnitude");
  if (!magnitude) return "-";
  std::string out = Percent(*magnitude);
  const json* ci = Get(alert, "ci");
  if (ci != nullptr && ci->is_array() && ci->size() == 2 && (*ci)[0].is_number() &&
      (*ci)[1].is_number()) {
    const double lo = (*ci)[0].get<double>();
    const double hi = (*ci)[1].get<double>();
    if (std::isfinite(lo) && std::isfinite(hi))
      out += " [" + Percent(lo) + ", " + Percent(hi) + "]";
  }
  return out;
}

std::string AlertKindLabel(const json& alert) {
  if (Str(alert, "cause") == "environment") return "environment";
  return OrDash(Clean(Str(alert, "kind")));
}

std::string AlertRangeKey(const json& alert) {
  if (std::string group = Str(alert, "group"); !group.empty()) return Clean(group);
  const std::string good = ShortSha(Str(LastGood(alert), "sha"), 12);
  const std::string bad = ShortSha(Str(FirstBad(alert), "sha"), 12);
  return Clean((good.empty() ? std::string("(first point)") : good) + ".." +
               (bad.empty() ? std::string("?") : bad));
}

std::string BisectCommand(const json& alert) {
  const std::string good = Str(LastGood(alert), "sha");
  const std::string bad = Str(FirstBad(alert), "sha");
  if (good.empty() || bad.empty()) return "";
  const json& series = Obj(alert, "series");
  std::string out = "perfgate bisect --good " + ShellWord(good) + " --bad " + ShellWord(bad);
  if (std::string b = Str(series, "benchmark"); !b.empty()) out += " --benchmark " + ShellWord(b);
  if (std::string m = Str(series, "metric"); !m.empty()) out += " --metric " + ShellWord(m);
  return Clean(out);
}

}  // namespace perfgate::report
