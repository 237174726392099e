#!/usr/bin/env bash
# tree_id.sh — a fingerprint of the working tree's files, for benchmark logs.
# Prints "tree ID (N files)": ID = the first 12 hex digits of the md5 of the
# sorted list of (md5, path) over every file git would carry, tracked or
# untracked but not ignored.  A device machine's copy of the checkout can
# carry a stale .git (its `git log` names an older commit) while its files
# are current; the file contents still give the same ID as here, so a
# figure can be tied to the tree it ran on: run this script here and compare.
# Run from anywhere inside the repository; exit 1 outside a git work tree.
set -euo pipefail
export LC_ALL=C # the sort order (and so the ID) must not depend on the locale
top=$(git rev-parse --show-toplevel 2>/dev/null) || { echo "tree_id.sh: not in a git work tree" >&2; exit 1; }
cd "$top"
list=$(git ls-files -co --exclude-standard -z | sort -z | xargs -0 -r md5sum)
n=$(printf '%s\n' "$list" | grep -c . || true)
echo "tree $(printf '%s\n' "$list" | md5sum | cut -c1-12) ($n files)"
