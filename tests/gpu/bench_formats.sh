#!/bin/sh
# bench_formats.sh — `bench` on the GPU: every format and every kernel
# variant agrees with the host CSR reference (rel. error column without
# "!", no "failed" note, no "x" in the sweep), and the vector-ops table ran
# both implementations with agreeing gemv_t results.  $1: test_cuda_backend.
set -u
count=$("$1" --device-count 2>/dev/null || echo 0)
if [ "${count:-0}" -eq 0 ]; then echo "skipped: no CUDA device"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PJDS_BENCH_JSON="$tmp/b.json" "$PJDS_BIN" bench "$PJDS_SRC/configs/quickstart.ini" --quiet \
    --set spmv.backend=cuda --set spmv.repeats=5 --set model.max_phonons=10 > "$tmp/out" 2> "$tmp/err"
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || { echo "bench failed ($rc)"; cat "$tmp/err"; exit 1; }
fail=0
grep -q "cuSPARSE CSR" "$tmp/out" || { echo "no cuSPARSE CSR row"; fail=1; }
grep -q "ELLPACK-R" "$tmp/out" || { echo "no ELLPACK-R row"; fail=1; }
if grep -E 'failed|[0-9]!' "$tmp/out"; then echo "a format failed or disagrees"; fail=1; fi
if grep -E '^[a-z0-9-]+ .* x( |$)' "$tmp/out"; then echo "a kernel variant gave a wrong result"; fail=1; fi
"${PJDS_PYTHON:-/usr/bin/python3}" -c "import json,sys; d=json.load(open('$tmp/b.json')); assert len(d['formats'])>=5, d
v=d['vecops']; assert len(v)>=11, v
assert all(r['ours_ms'] and r['cublas_ms'] for r in v if r['op'] in ('gemv_t','gemv_n','gemm')), v
assert all(r['diff'] is not None and r['diff']<1e-12 for r in v if r['op']=='gemv_t'), v" ||
    { echo "bad JSON"; fail=1; }
exit $fail
