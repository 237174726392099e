#!/usr/bin/env bash
# CLI basics: --version, --help of every subcommand, --set overrides a key
# (visible in `info`), an unknown command or option exits 2.
set -u
fail=0
check() { if ! eval "$1"; then echo "FAIL: $1"; fail=1; fi; }
check '"$PJDS_BIN" --version | grep -Eq "^pjds-lanczos [0-9]+\.[0-9]+\.[0-9]+"'
for c in info solve bench export; do
  check '"$PJDS_BIN" $c --help | grep -q "usage: pjds-lanczos $c"'
  check '"$PJDS_BIN" $c --help | grep -q -- "--set section.key=value"'
done
check '"$PJDS_BIN" --help | grep -q "info"'
"$PJDS_BIN" frobnicate >/dev/null 2>&1; check '[ $? -eq 2 ]'
"$PJDS_BIN" info --bogus "$PJDS_SRC/configs/quickstart.ini" >/dev/null 2>&1; check '[ $? -eq 2 ]'
"$PJDS_BIN" info >/dev/null 2>&1; check '[ $? -eq 2 ]'
# --set changes the matrix: 4 sites 2+2 with M = 0 has 36 rows
check '"$PJDS_BIN" info "$PJDS_SRC/configs/quickstart.ini" --set model.max_phonons=0 | grep -qx "rows: 36"'
check '"$PJDS_BIN" info "$PJDS_SRC/configs/quickstart.ini" --set model.max_phonons=0 --set spmv.chunk_height=4 | grep -qx "chunk_height: 4"'
exit $fail
