// SPDX-License-Identifier: Apache-2.0
#include "runner/cli/verdict_output.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "runner/cli/commands.h"
#include "runner/report/verdict_render.h"

namespace perfwarden::cli {
namespace {

void WriteFile(const std::string& path, const std::string& text, bool append = false) {
  if (path.empty()) return;
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  out << text;
  if (!out) std::cerr << "perfwarden: warning: cannot write " << path << "\n";
}

}  // namespace

void AddVerdictOutputOptions(CLI::App* verb, VerdictOutputs* outputs) {
  verb->add_option("--comment-file", outputs->comment_file,
                   "Write a PR/MR comment body (Markdown) here");
  verb->add_option("--junit", outputs->junit_file, "Write JUnit XML here");
  verb->add_option("--gitlab-metrics", outputs->gitlab_metrics_file,
                   "Write GitLab's metrics report here");
  verb->add_option("--summary-file", outputs->summary_file,
                   "Append the Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)");
  verb->add_option("--format", outputs->format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  verb->add_option("--color", outputs->color, "Colour the text table")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
}

void WriteVerdictOutputs(const wire::Verdict& verdict, const std::string& project,
                         const VerdictOutputs& outputs) {
  const bool color =
      outputs.color == "always" ||
      (outputs.color == "auto" && isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr);
  if (outputs.format == "json") {
    nlohmann::json out = {{"outcome", std::string(wire::OutcomeName(verdict.outcome))},
                          {"run_id", verdict.run_id},
                          {"verdict_id", verdict.id},
                          {"mode", verdict.paired ? "paired" : "unpaired"},
                          {"regressions", verdict.counts.regression},
                          {"unstable", verdict.counts.unstable}};
    std::cout << out.dump(2) << "\n";
  } else if (outputs.format == "markdown") {
    std::cout << report::RenderMarkdown(verdict);
  } else {
    report::TextOptions options;
    options.color = color;
    std::cout << report::RenderText(verdict, options);
  }
  std::string summary = outputs.summary_file;
  if (summary.empty()) {
    const char* env = std::getenv("GITHUB_STEP_SUMMARY");
    if (env != nullptr) summary = env;
  }
  report::MarkdownOptions markdown;
  markdown.project = project;
  WriteFile(summary, report::RenderMarkdown(verdict, markdown), /*append=*/true);
  markdown.comment = true;
  WriteFile(outputs.comment_file, report::RenderMarkdown(verdict, markdown));
  WriteFile(outputs.junit_file, report::RenderJUnit(verdict));
  WriteFile(outputs.gitlab_metrics_file, report::RenderGitLabMetrics(verdict));
}

bool ReportNoisyEnvironment(const wire::Verdict& verdict) {
  if (!report::IsNoisyEnvironment(verdict)) return false;
  std::cerr << "perfwarden: every regression was measured on throttled GPUs (power or thermal "
               "caps): repeat the run on a healthy host\n";
  return true;
}

int PairedVerdictExitCode(const wire::Verdict& verdict) {
  if (ReportNoisyEnvironment(verdict)) return kExitInfrastructure;
  return report::HasRegression(verdict) ? kExitRegression : kExitPass;
}

}  // namespace perfwarden::cli
