#!/usr/bin/env bash
# tools/tree_id.sh (docs/performance.md, "Acceptance run"): the fingerprint
# follows the files, not the commit.  A copy whose .git is stale (as the
# device machine's) but whose files are current gives the same ID as the
# up-to-date checkout; a changed or new file changes it; an ignored file
# does not; outside a git work tree the script fails with exit 1.
# usage: tree_id_test.sh PATH/TO/tree_id.sh.  Exit 0 pass, 1 fail, 77 no git.
set -u
TID=$(readlink -f "$1")
command -v git >/dev/null || { echo "skipped: no git"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1 ($2 vs $3)"; fail=1; fi; }
differ() { if [ "$2" != "$3" ]; then echo "ok: $1"; else echo "FAIL: $1 (both $2)"; fail=1; fi; }
g() { git -C "$1" -c user.name=t -c user.email=t@t -c commit.gpgsign=false "${@:2}" >/dev/null 2>&1; }
mkdir -p "$T/a/sub" && cd "$T/a" || exit 1
git init -q . && printf 'ign/\n' > .gitignore && echo one > x.txt && echo two > sub/y.txt
g . add -A && g . commit -qm 1
id1=$(bash "$TID") || { echo "FAIL: tree_id.sh exit $?"; exit 1; }
case "$id1" in tree\ [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]\ \(3\ files\)) echo "ok: format ($id1)" ;;
    *) echo "FAIL: format: '$id1'"; fail=1 ;; esac
check "the same twice" "$id1" "$(bash "$TID")"
check "from a subfolder" "$id1" "$(cd sub && bash "$TID")"
git clone -q "$T/a" "$T/b"
check "a clone elsewhere" "$id1" "$(cd "$T/b" && bash "$TID")"
mkdir -p ign && echo junk > ign/z.txt
check "an ignored file" "$id1" "$(bash "$TID")"
echo changed > x.txt && g . commit -qam 2
id2=$(bash "$TID")
differ "a changed file" "$id1" "$id2"
cp x.txt "$T/b/x.txt" # the clone's .git still names commit 1: a stale .git, current files
check "a stale .git with current files" "$id2" "$(cd "$T/b" && bash "$TID")"
echo new > n.txt && echo new > "$T/b/n.txt"
id3=$(bash "$TID")
differ "an untracked file" "$id2" "$id3"
check "an untracked file, both copies" "$id3" "$(cd "$T/b" && bash "$TID")"
mkdir -p "$T/none" && (cd "$T/none" && bash "$TID" >/dev/null 2>&1)
rc=$?
check "outside a work tree: exit 1" 1 "$rc"
exit $fail
