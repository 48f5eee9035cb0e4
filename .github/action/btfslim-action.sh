#!/bin/bash
# The steps of btfslim's GitHub Action (action.yml at the top of the repository), one subcommand each, so
# that what the tests run (tests/dist/test_action.py) is what a runner runs:
#
#   key      where the build is cached and under which key (outputs cache-path, key); empty key: no cache
#   install  btfslim from the cache, or built from source into it, or the one on PATH (outputs path)
#   run      btfslim COMMAND ARGS in the working directory; fails exactly when btfslim does (output exit-code)
#
# Inputs come as INPUT_COMMAND, INPUT_ARGS, INPUT_VERSION; the runner's GITHUB_OUTPUT, GITHUB_PATH,
# GITHUB_STEP_SUMMARY and RUNNER_TEMP as a runner sets them. INPUT_VERSION is empty for the action's own
# revision (built from the source it was checked out with), a tag, branch or commit of the btfslim
# repository (BTFSLIM_REPOSITORY, a git URL) to build, or "installed" for the btfslim already on PATH
# (a distribution package).
set -euo pipefail

action_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=${INPUT_VERSION:-}

# GitHub's workflow-command escaping: data (after ::) and property values (before it).
gh_data() { local s=${1//%/%25}; s=${s//$'\r'/%0D}; printf '%s' "${s//$'\n'/%0A}"; }
gh_property() { local s; s=$(gh_data "$1"); s=${s//:/%3A}; printf '%s' "${s//,/%2C}"; }
die() { echo "::error title=btfslim action::$(gh_data "$*")"; exit 2; }
output() { [ -z "${GITHUB_OUTPUT:-}" ] || printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; }
cache_dir() { printf '%s/btfslim-cache' "${RUNNER_TEMP:?RUNNER_TEMP is not set}"; }

# What a build depends on: the source, and the system it is built on (glibc, the libraries' versions).
# shellcheck disable=SC1091
system_id() { (. /etc/os-release && printf '%s-%s-%s' "${ID:-linux}" "${VERSION_ID:-unknown}" "$(uname -m)"); }
source_hash() {
  (cd "$1" && find meson.build meson_options.txt src include man completions -type f -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}

step_key() {
  case $version in
    installed) output cache-path ""; output key ""; return ;;
    "") key="btfslim-$(system_id)-src-$(source_hash "$action_dir")" ;;
    *)
      [[ $version =~ ^[A-Za-z0-9._/-]+$ ]] || die "version '$version' is not a tag, branch or commit"
      # A tag or branch as the commit it names now, so that moving it builds again; a commit as itself.
      local commit
      commit=$(git ls-remote "${BTFSLIM_REPOSITORY:?}" "$version" "refs/tags/$version^{}" 2>/dev/null |
        awk '{ c = $1 } END { print c }') || true
      key="btfslim-$(system_id)-ref-${commit:-$version}" ;;
  esac
  output cache-path "$(cache_dir)"
  output key "$key"
  echo "btfslim build cache key: $key"
}

# Debian and Ubuntu packages a build needs; installed (with sudo on a hosted runner) when missing.
build_deps="build-essential pkg-config meson ninja-build libbpf-dev libelf-dev zlib1g-dev libcli11-dev
  libfmt-dev nlohmann-json3-dev libtomlplusplus-dev libarchive-dev git ca-certificates"
install_build_deps() {
  local missing="" p
  for p in $build_deps; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
  done
  [ -z "$missing" ] && return
  echo "installing:$missing"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # shellcheck disable=SC2086
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# The source of VERSION from the repository, into $1: only that commit, no history.
fetch_source() {
  git init -q "$1"
  git -C "$1" fetch -q --depth 1 "${BTFSLIM_REPOSITORY:?}" "$version" || die "cannot fetch '$version' from $BTFSLIM_REPOSITORY"
  git -C "$1" -c advice.detachedHead=false checkout -q FETCH_HEAD
}

step_install() {
  local bin
  if [ "$version" = installed ]; then
    bin=$(command -v btfslim) || die "version: installed, but there is no btfslim on PATH"
  else
    local cache key=${BTFSLIM_KEY:?} src
    cache=$(cache_dir)
    bin=$cache/bin/btfslim
    if [ -x "$bin" ] && [ "$(cat "$cache/key" 2>/dev/null)" = "$key" ]; then
      echo "btfslim: using the cached build ($key)"
    else
      echo "btfslim: building $key"
      install_build_deps
      local work="$RUNNER_TEMP/btfslim-work"
      rm -rf "$work" "$cache"
      mkdir -p "$work"
      src=$action_dir
      if [ -n "$version" ]; then
        src=$work/src
        fetch_source "$src"
      fi
      # Only the binary: no tests, no manual; the defaults link libbpf, libelf, zlib and the C++ runtime
      # statically, so that a cached binary runs on a runner with none of the -dev packages.
      # Quiet when it works; on a failure, what meson or the compiler said (ninja prints it on stdout).
      meson setup "$work/build" "$src" --buildtype=release -Dtests=none -Dman=disabled >"$work/build.log" 2>&1 &&
        ninja -C "$work/build" btfslim >>"$work/build.log" 2>&1 ||
        { tail -n 100 "$work/build.log"; die "building btfslim from $src failed (the end of its log is above)"; }
      install -D -m 755 "$work/build/btfslim" "$bin"
      printf '%s\n' "$key" >"$cache/key"
      rm -rf "$work"
    fi
  fi
  "$bin" --version || die "$bin does not run"
  [ -z "${GITHUB_PATH:-}" ] || dirname "$bin" >>"$GITHUB_PATH"
  output path "$bin"
}

# Whether COMMAND takes --format github, as the binary says (btfslim __options: COMMAND, option, value,
# choices), so that a command that gains it is run with it.
github_format() {
  "$btfslim" __options 2>/dev/null |
    awk -F'\t' -v c="$1" '$1 == c && $2 ~ /^--format( |$)/ { n = split($4, v, " "); for (i = 1; i <= n; i++) if (v[i] == "github") f = 1 } END { exit !f }'
}

# Text as a Markdown code block for the step summary: HTML, so that no backtick in it ends the block.
html_pre() { printf '<pre>\n'; sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; printf '</pre>\n'; }

step_run() {
  local command=${INPUT_COMMAND:?} btfslim=${BTFSLIM:-btfslim}
  [[ $command =~ ^[a-z][a-z-]*$ ]] || die "command '$command' is not a btfslim command"
  # The arguments as a shell would split them (quotes, globs): they come from the workflow, as a run: line does.
  local -a args
  eval "args=(${INPUT_ARGS:-})"
  local github=0
  if github_format "$command"; then
    github=1
    args=(--format github "${args[@]}")
  fi
  local tmp status=0
  tmp=$(mktemp -d "${RUNNER_TEMP:-/tmp}/btfslim-run.XXXXXX")
  # stdout to the log as it comes (annotations are read from it), and kept for the summary.
  { "$btfslim" "$command" "${args[@]}" 2>"$tmp/err" || echo $? >"$tmp/status"; } | tee "$tmp/out"
  [ ! -s "$tmp/status" ] || status=$(cat "$tmp/status")
  # What btfslim says on stderr: an annotation per line when it failed, the log otherwise.
  if [ "$status" != 0 ]; then
    local line title
    title=$(gh_property "btfslim $command")
    while IFS= read -r line || [ -n "$line" ]; do
      echo "::error title=$title::$(gh_data "$line")"
    done <"$tmp/err"
    [ -s "$tmp/err" ] || [ "$github" = 1 ] ||
      echo "::error title=$title::$(gh_data "btfslim $command exited with status $status: its output is in the step summary")"
  else
    cat "$tmp/err" >&2
  fi
  # A command with --format github writes its own step summary; for the others, the table it printed.
  if [ "$github" = 0 ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    local limit=65536 size
    size=$(wc -c <"$tmp/out")
    {
      # shellcheck disable=SC2016
      printf '### `btfslim %s`: exit status %s\n\n' "$command" "$status"
      [ "$size" = 0 ] || head -c "$limit" "$tmp/out" | html_pre
      [ "$size" -le "$limit" ] || printf '\n(the first %s of %s bytes: the whole output is in the log)\n' "$limit" "$size"
      if [ "$status" != 0 ] && [ -s "$tmp/err" ]; then html_pre <"$tmp/err"; fi
    } >>"$GITHUB_STEP_SUMMARY"
  fi
  rm -rf "$tmp"
  output exit-code "$status"
  return "$status"
}

case ${1:-} in
  key) step_key ;;
  install) step_install ;;
  run) step_run ;;
  *) echo "usage: $0 key|install|run" >&2; exit 2 ;;
esac
