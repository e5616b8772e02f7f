#!/usr/bin/env bash
# worksnap as a CI step: `pre` snapshots the work tree before a job's main step; `post`, after it, reports
# what changed since that snapshot (and can fail the job). action.yml runs it on GitHub; any CI that runs bash
# can run it too (README, "In CI").
#
#   ci-snapshot.sh pre|post
#
# Settings come from the environment (action.yml maps its inputs onto them):
#   WORKSNAP_ROOT             repository root (default: .)
#   WORKSNAP_PATHS            pre: paths to capture, space-separated (default: the whole tree)
#   WORKSNAP_EXPORT           pre: "true" writes the snapshot's deterministic bundle (output `bundle`)
#   WORKSNAP_SNAPSHOT_ID      post: the snapshot to compare with (default: the one pre took)
#   WORKSNAP_FAIL_ON_CHANGES  post: "true" exits 1 when the tree changed
#   WORKSNAP_DIFF_LIMIT       post: bytes of diff shown in the summary (default 60000; the whole diff is in `diff`)
#   WORKSNAP_BINARY           an executable to use; otherwise a release executable is downloaded and checked
#                             against the release's SHA256SUMS:
#   WORKSNAP_VERSION          release tag (v0.2.0) or "latest" (default: the action's own tag, else latest)
#   WORKSNAP_REPOSITORY       owner/name whose GitHub releases hold the executables
#   WORKSNAP_RELEASE_URL      or the base URL of the assets themselves (a mirror)
# Outputs go to $GITHUB_OUTPUT and the summary to $GITHUB_STEP_SUMMARY when they are set, to stdout otherwise.
set -euo pipefail

die() {
  echo "worksnap-ci: $*" >&2
  exit 1
}

mode="${1:-}"
[[ "$mode" == pre || "$mode" == post ]] || die "usage: ci-snapshot.sh pre|post (got '${mode}')"

root="$(cd "${WORKSNAP_ROOT:-.}" 2>/dev/null && pwd -P)" || die "root ${WORKSNAP_ROOT:-.} is not a directory"
state_base="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/worksnap-ci"
# one state file per root, so two roots in one job do not mix
state_dir="$state_base/$(printf '%s' "$root" | cksum | cut -d' ' -f1)"
state_file="$state_dir/state"
mkdir -p "$state_dir"

output() {
  if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  else
    printf '%s=%s\n' "$1" "$2"
  fi
}

state_get() {
  [[ -f "$state_file" ]] && sed -n "s/^$1=//p" "$state_file" | tail -n 1
}

sha256_check() { # verifies the files named in a SHA256SUMS-format file, in the current directory
  if command -v sha256sum >/dev/null 2>&1; then sha256sum -c "$1"; else shasum -a 256 -c "$1"; fi
}

fetch() { # url file
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 3 -o "$2" "$1"
  else
    wget -q -O "$2" "$1"
  fi
}

resolve_binary() {
  if [[ -n "${WORKSNAP_BINARY:-}" ]]; then
    [[ -x "$WORKSNAP_BINARY" ]] || die "WORKSNAP_BINARY ($WORKSNAP_BINARY) is not an executable file"
    printf '%s\n' "$WORKSNAP_BINARY"
    return
  fi
  local saved
  saved="$(state_get binary || true)"
  if [[ -n "$saved" && -x "$saved" ]]; then
    printf '%s\n' "$saved"
    return
  fi
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT) die "worksnap does not run on Windows (it relies on POSIX file operations); use a Linux or macOS runner, or WSL" ;;
    *) die "no worksnap executable for $(uname -s)" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "no worksnap executable for $(uname -m)" ;;
  esac
  local asset="worksnap-$os-$arch" base version="${WORKSNAP_VERSION:-}"
  if [[ -z "$version" ]]; then
    if [[ "${WORKSNAP_ACTION_REF:-}" =~ ^v[0-9] ]]; then version="$WORKSNAP_ACTION_REF"; else version=latest; fi
  fi
  if [[ -n "${WORKSNAP_RELEASE_URL:-}" ]]; then
    base="${WORKSNAP_RELEASE_URL%/}"
  elif [[ -n "${WORKSNAP_REPOSITORY:-}" ]]; then
    if [[ "$version" == latest ]]; then
      base="https://github.com/$WORKSNAP_REPOSITORY/releases/latest/download"
    else
      base="https://github.com/$WORKSNAP_REPOSITORY/releases/download/$version"
    fi
  else
    die "no executable: set WORKSNAP_BINARY (input binary), or WORKSNAP_REPOSITORY / WORKSNAP_RELEASE_URL to download one"
  fi
  local dir="$state_dir/bin"
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "worksnap-ci: downloading $base/$asset" >&2
  fetch "$base/SHA256SUMS" "$dir/SHA256SUMS" || die "cannot download $base/SHA256SUMS"
  fetch "$base/$asset" "$dir/$asset" || die "cannot download $base/$asset"
  grep -E "^[0-9a-f]{64}  $asset\$" "$dir/SHA256SUMS" >"$dir/expected" || die "SHA256SUMS has no line for $asset"
  if ! (cd "$dir" && sha256_check expected >&2); then
    rm -f "$dir/$asset"
    die "$asset does not match its checksum in SHA256SUMS; it was not run"
  fi
  chmod +x "$dir/$asset"
  printf '%s\n' "$dir/$asset"
}

json_field() { # compact canonical JSON on stdin; prints the value of a number field
  grep -o "\"$1\":[0-9]*" | head -n 1 | cut -d: -f2
}

pre() {
  local bin json id files bytes bundle=""
  bin="$(resolve_binary)"
  # shellcheck disable=SC2086 # WORKSNAP_PATHS is a space-separated list
  json="$("$bin" snapshot create --json --root "$root" ${WORKSNAP_PATHS:-})" || die "snapshot create failed"
  id="$(printf '%s' "$json" | grep -o '"snapshot_id":"sha256:[0-9a-f]\{64\}"' | cut -d'"' -f4)"
  [[ -n "$id" ]] || die "snapshot create printed no snapshot id: $json"
  files="$(printf '%s' "$json" | json_field files)"
  bytes="$(printf '%s' "$json" | json_field bytes)"
  echo "worksnap-ci: snapshot $id ($files files, $bytes bytes) of $root" >&2
  if [[ "${WORKSNAP_EXPORT:-false}" == true ]]; then
    bundle="$state_dir/worksnap-${id:7:16}.tar"
    "$bin" snapshot export "$id" -o "$bundle" --root "$root" >/dev/null || die "snapshot export failed"
    echo "worksnap-ci: bundle $bundle" >&2
  fi
  printf 'snapshot_id=%s\nbinary=%s\nroot=%s\n' "$id" "$bin" "$root" >"$state_file"
  output snapshot_id "$id"
  output bundle "$bundle"
  output binary "$bin"
}

md_path() { # a path as inline code in markdown
  # shellcheck disable=SC2016 # the backticks are markdown
  printf '`%s`' "${1//\`/\'}"
}

md_change() { # one line of `snapshot changes`: "status(padded) path[  (old -> new)]"
  local line="$1" status path modes=""
  status="${line%% *}"
  path="${line:13}"
  if [[ "$path" =~ ^(.*)\ \ \(([0-7]+\ -\>\ [0-7]+)\)$ ]]; then
    path="${BASH_REMATCH[1]}"
    modes=" (${BASH_REMATCH[2]})"
  fi
  printf -- '- %s %s%s\n' "$status" "$(md_path "$path")" "$modes"
}

post() {
  local bin id json total added modified deleted mode_changed diff summary limit
  bin="$(resolve_binary)"
  id="${WORKSNAP_SNAPSHOT_ID:-$(state_get snapshot_id || true)}"
  [[ -n "$id" ]] || die "no snapshot to compare with: run the pre step first in this job, or pass snapshot-id"
  json="$("$bin" snapshot changes "$id" worktree --json --limit 1 --root "$root")" || die "snapshot changes failed"
  total="$(printf '%s' "$json" | json_field total)"
  added="$(printf '%s' "$json" | json_field added)"
  modified="$(printf '%s' "$json" | json_field modified)"
  deleted="$(printf '%s' "$json" | json_field deleted)"
  mode_changed="$(printf '%s' "$json" | json_field mode_changed)"
  diff="$state_dir/changes.diff"
  "$bin" snapshot diff "$id" worktree --root "$root" >"$diff" || die "snapshot diff failed"
  limit="${WORKSNAP_DIFF_LIMIT:-60000}"
  summary="$state_dir/summary.md"
  {
    echo "### worksnap: changes since the pre-step snapshot"
    echo
    echo "Snapshot \`$id\` compared with the work tree of \`$(basename "$root")\`."
    echo
    if [[ "$total" == 0 ]]; then
      echo "No file changed."
    else
      echo "| added | modified | deleted | mode changed | total |"
      echo "| ---: | ---: | ---: | ---: | ---: |"
      echo "| $added | $modified | $deleted | $mode_changed | $total |"
      echo
      echo "<details><summary>Changed files ($total)</summary>"
      echo
      "$bin" snapshot changes "$id" worktree --root "$root" | head -n 500 | while IFS= read -r line; do
        md_change "$line"
      done
      [[ "$total" -le 500 ]] || echo "- … and $((total - 500)) more"
      echo
      echo "</details>"
      echo
      local size
      size="$(wc -c <"$diff" | tr -d ' ')"
      echo "<details><summary>Diff ($size bytes)</summary>"
      echo
      echo '```diff'
      if [[ "$size" -le "$limit" ]]; then
        cat "$diff"
      else
        head -c "$limit" "$diff" | sed '$d'
      fi
      echo '```'
      [[ "$size" -le "$limit" ]] || echo "The diff is cut at $limit of $size bytes; \`worksnap snapshot diff $id\` prints all of it."
      echo
      echo "</details>"
    fi
  } >"$summary"
  if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then cat "$summary" >>"$GITHUB_STEP_SUMMARY"; else cat "$summary"; fi
  echo "worksnap-ci: $total changed since $id (added $added, modified $modified, deleted $deleted, mode changed $mode_changed)" >&2
  output snapshot_id "$id"
  output changed "$total"
  output diff "$diff"
  if [[ "${WORKSNAP_FAIL_ON_CHANGES:-false}" == true && "$total" != 0 ]]; then
    die "$total files changed since the snapshot, and fail-on-changes is set"
  fi
}

"$mode"
