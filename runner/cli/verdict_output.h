// SPDX-License-Identifier: Apache-2.0
// What `perfwarden gate` and `perfwarden publish` make of the verdict the server stored: the
// verdict on stdout (text, Markdown or JSON), the Markdown step summary, the PR/MR comment body,
// JUnit and GitLab's metrics report, all rendered by runner/report/ from the decoded verdict.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "wire/verdict.h"

namespace perfwarden::cli {

struct VerdictOutputs {
  std::string comment_file;
  std::string junit_file;
  std::string gitlab_metrics_file;
  std::string summary_file;  // "" : $GITHUB_STEP_SUMMARY when set
  std::string format = "text";
  std::string color = "auto";
};

// --comment-file, --junit, --gitlab-metrics, --summary-file, --format and --color.
void AddVerdictOutputOptions(CLI::App* verb, VerdictOutputs* outputs);

// Prints the verdict in outputs.format and writes the files asked for (a file that cannot be
// written is a warning). `project` goes into the comment's marker line.
void WriteVerdictOutputs(const wire::Verdict& verdict, const std::string& project,
                         const VerdictOutputs& outputs);

// The exit code of a paired verdict as `perfwarden gate` gives it: 3 (after saying why on stderr)
// when every regression was measured on throttled GPUs, 1 on a regression, else 0.
int PairedVerdictExitCode(const wire::Verdict& verdict);

// Whether the verdict is a noisy environment (report/verdict_model.h), said on stderr when it is:
// neither a pass nor the code's fault, exit 3 so that CI retries the job on another host.
bool ReportNoisyEnvironment(const wire::Verdict& verdict);

}  // namespace perfwarden::cli
