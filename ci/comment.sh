#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Creates or updates perfwarden's pull/merge request comment. `perfwarden gate --comment-file F`
# writes a body whose first line is the marker `<!-- perfwarden:gate project=<p> testbed=<tb> -->`;
# the comment whose body starts with that same line is edited in place, so every push to a pull
# request updates one comment per project and testbed instead of adding another. Only a comment
# written by this token's own identity is edited: anyone may post a comment that starts with the
# marker, and such a comment is left alone (a new one is created).
#
# usage: comment.sh github BODY_FILE PR_NUMBER
#          needs gh (on GitHub's runners); env GH_TOKEN (or GITHUB_TOKEN): a token that may write
#          pull request comments (the job's token with `permissions: pull-requests: write`);
#          GITHUB_REPOSITORY (owner/name, set by Actions). The author whose comments are edited:
#          PERFWARDEN_COMMENT_AUTHOR when set (a GitHub App's "<slug>[bot]"), else the token's user
#          (`gh api user`, for a personal access token), else github-actions[bot] (the job's
#          GITHUB_TOKEN, an installation token that /user refuses).
#        comment.sh gitlab BODY_FILE [MR_IID]
#          needs curl and jq; env PERFWARDEN_GITLAB_TOKEN: a project access token with the `api`
#          scope (CI_JOB_TOKEN cannot write merge request notes); CI_API_V4_URL, CI_PROJECT_ID
#          and CI_MERGE_REQUEST_IID (set by GitLab in merge request pipelines). Only notes whose
#          author is the token's user (GET /user: its id) are edited.
# Exit status: 0 created or updated, 1 the API call failed, 2 usage error. The token is never
# printed. ci/gitlab/perfwarden.gitlab-ci.yml inlines the gitlab mode (an included template cannot
# ship this file); keep the two in step.
set -euo pipefail

usage() {
  echo "comment.sh: $1" >&2
  echo "usage: comment.sh github BODY_FILE PR_NUMBER | comment.sh gitlab BODY_FILE [MR_IID]" >&2
  exit 2
}
fail() {
  echo "comment.sh: $1" >&2
  exit 1
}

[ "$#" -ge 2 ] || usage "missing arguments"
mode=$1
body=$2
[ -s "$body" ] || usage "no comment body in '$body'"
marker=$(head -n 1 -- "$body")
# The marker's names are percent-encoded by perfwarden, so it holds no quote or backslash and can
# be spliced into a jq string literal below; anything else is not perfwarden's comment.
marker_re='^<!-- perfwarden:gate [A-Za-z0-9%._~:@+/= -]+ -->$'
[[ $marker =~ $marker_re ]] || usage "'$body' does not start with the perfwarden marker line"

post_github() {
  local pr=${1:-}
  [[ $pr =~ ^[1-9][0-9]*$ ]] || usage "PR_NUMBER must be a pull request number, got '$pr'"
  command -v gh >/dev/null || fail "gh (the GitHub CLI) is not installed"
  export GH_TOKEN="${GH_TOKEN:-${GITHUB_TOKEN:-}}"
  [ -n "$GH_TOKEN" ] || usage "set GH_TOKEN (or GITHUB_TOKEN) to a token that may write comments"
  local repo=${GITHUB_REPOSITORY:-}
  [[ $repo =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || usage "GITHUB_REPOSITORY is not owner/name"
  local author=${PERFWARDEN_COMMENT_AUTHOR:-} ids id
  if [ -z "$author" ]; then
    author=$(gh api user --jq .login 2>/dev/null) || author='github-actions[bot]'
  fi
  # A GitHub login: checked, so that it can be spliced into the jq string literal below.
  [[ $author =~ ^[A-Za-z0-9][A-Za-z0-9-]*(\[bot\])?$ ]] ||
    usage "PERFWARDEN_COMMENT_AUTHOR is not a GitHub login, got '$author'"
  # gh's built-in jq, so nothing else needs installing; --paginate walks every page.
  ids=$(gh api --paginate "repos/$repo/issues/$pr/comments?per_page=100" \
    --jq ".[] | select(.user.login == \"$author\" and (.body | startswith(\"$marker\"))) | .id")
  id=${ids%%$'\n'*}
  if [ -n "$id" ]; then
    [[ $id =~ ^[0-9]+$ ]] || fail "unexpected comment id '$id'"
    gh api --method PATCH "repos/$repo/issues/comments/$id" -F "body=@$body" >/dev/null
    echo "comment.sh: updated comment $id (by $author) on $repo#$pr"
  else
    gh api --method POST "repos/$repo/issues/$pr/comments" -F "body=@$body" >/dev/null
    echo "comment.sh: created a comment on $repo#$pr (none by $author had the marker)"
  fi
}

post_gitlab() {
  local iid=${1:-${CI_MERGE_REQUEST_IID:-}}
  [[ $iid =~ ^[1-9][0-9]*$ ]] || usage "no merge request (MR_IID or CI_MERGE_REQUEST_IID)"
  command -v curl >/dev/null || fail "curl is not installed"
  command -v jq >/dev/null || fail "jq is not installed"
  # CI_JOB_TOKEN is not accepted by the notes API, so a token of the project's own is needed.
  [ -n "${PERFWARDEN_GITLAB_TOKEN:-}" ] ||
    usage "set PERFWARDEN_GITLAB_TOKEN to a project access token with the api scope"
  [ -n "${CI_API_V4_URL:-}" ] && [ -n "${CI_PROJECT_ID:-}" ] ||
    usage "CI_API_V4_URL and CI_PROJECT_ID must be set (GitLab sets them in a job)"
  local api="$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$iid/notes"
  local page=1 id="" me
  tmp=$(mktemp -d)  # global: the EXIT trap runs after this function has returned
  trap 'rm -rf "$tmp"' EXIT
  # A header file keeps the token out of the process list.
  (umask 077 && printf 'PRIVATE-TOKEN: %s\n' "$PERFWARDEN_GITLAB_TOKEN" >"$tmp/auth")
  # The token's own user (a project access token's bot user): only its notes are edited.
  curl -sS --fail -H "@$tmp/auth" -o "$tmp/user.json" "$CI_API_V4_URL/user"
  me=$(jq -r '.id // empty' "$tmp/user.json")
  [[ $me =~ ^[0-9]+$ ]] || fail "GET /user did not say which user the token is"
  while [ -n "$page" ] && [ -z "$id" ]; do
    curl -sS --fail -H "@$tmp/auth" -D "$tmp/headers" -o "$tmp/notes.json" \
      "$api?per_page=100&page=$page&sort=asc&order_by=created_at"
    id=$(jq -r --arg m "$marker" --argjson me "$me" \
      'first(.[] | select(.author.id == $me and (.body | startswith($m))) | .id) // empty' \
      "$tmp/notes.json")
    page=$(tr -d '\r' <"$tmp/headers" | sed -n 's/^[Xx]-[Nn]ext-[Pp]age: *\([0-9]*\)$/\1/p')
  done
  if [ -n "$id" ]; then
    [[ $id =~ ^[0-9]+$ ]] || fail "unexpected note id '$id'"
    curl -sS --fail -o /dev/null -X PUT -H "@$tmp/auth" --data-urlencode "body@$body" "$api/$id"
    echo "comment.sh: updated note $id on merge request !$iid"
  else
    curl -sS --fail -o /dev/null -X POST -H "@$tmp/auth" --data-urlencode "body@$body" "$api"
    echo "comment.sh: created a note on merge request !$iid"
  fi
}

case "$mode" in
  github) post_github "${3:-}" ;;
  gitlab) post_gitlab "${3:-}" ;;
  *) usage "unknown mode '$mode' (github or gitlab)" ;;
esac
