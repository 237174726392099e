#!/usr/bin/env bash
# Every file of the broken-matrix corpus (tests/h5matrix/make_corpus.py)
# through the CLI: `info` exits 2 with one line on stderr naming the file and
# the problem, never a crash.
set -u
"$PJDS_PYTHON" -c "import h5py" 2>/dev/null || { echo "skipped: h5py missing"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$PJDS_PYTHON" "$PJDS_SRC/tests/h5matrix/make_corpus.py" "$dir/corpus" >"$dir/list" || { echo "FAIL: corpus"; exit 1; }
fail=0; n=0
while IFS=$'\t' read -r f frag; do
  [ -n "$f" ] || continue
  case "$frag" in ""|OK|ok) continue ;; esac
  path=$f; [ -f "$path" ] || path=$dir/corpus/$f
  printf '[model]\ntype = hdf5\n[matrix]\nfile = %s\n' "$path" >"$dir/c.ini"
  "$PJDS_BIN" info "$dir/c.ini" >/dev/null 2>"$dir/err"; st=$?
  n=$((n + 1))
  if [ $st -ne 2 ] || [ "$(wc -l <"$dir/err")" -ne 1 ] || ! grep -qF -- "$frag" "$dir/err"; then
    echo "FAIL: $f: exit $st, stderr: $(cat "$dir/err") (expected fragment: $frag)"; fail=1
  fi
done <"$dir/list"
echo "$n broken files checked"
[ $n -ge 20 ] || { echo "FAIL: only $n files"; fail=1; }
exit $fail
