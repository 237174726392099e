#!/bin/bash
# akw_bench.sh — the issue-30 A(k, w) target on one GPU: HMEp's electron removal
# (configs/hmep.ini, 6.2 M rows; spin up: the N - 1 sector has 300 x 15504 =
# 4.65 M rows) for all 6 momenta, 200 steps each, against 6 x 200 SpMVs of the
# N - 1 sector's operator H' (its median product time, measured in the same
# run after the A(k, w) time, not inside it). The A(k, w) time includes
# building H' (in the active format: matrix_free under auto on one rank, then
# pjds and compressed forced), phi = c_k psi0 (on the backend on one rank),
# the recursions and the continued fractions; the ground-state solve and the
# file's write are not part of it. The log's phase line and the notes column
# split it. Goal: ratio <= 2.
#
#   BIN=build-gpu/app/pjds-lanczos OUT=/tmp/pjds-akw bash bench/akw_bench.sh
#   BIN=build/app/pjds-lanczos CFG=configs/quickstart.ini bash bench/akw_bench.sh   # a dry run on the CPU
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-build-gpu/app/pjds-lanczos}
OUT=${OUT:-/tmp/pjds-akw}
CFG=${CFG:-configs/hmep.ini}
PY=${PYTHON:-python3}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
mkdir -p "$OUT"
# runs: label:format:environment (PJDS_EL_HOST=1 makes phi on the host, PJDS_LZ_FUSED=0 takes the composed
# recursion step: the paths before 2026-11-27, for comparison; RUNS overrides)
RUNS=${RUNS:-"auto:auto: auto-host:auto:PJDS_EL_HOST=1,PJDS_LZ_FUSED=0 pjds:pjds: compressed:compressed:"}
ROWS=()
for run in $RUNS; do
    IFS=: read -r label fmt envs <<<"$run"
    f="$OUT/akw_$label.h5"
    log="$OUT/akw_$label.log"
    echo "=== $label: format = $fmt ${envs:+($envs)}"
    if ! env ${envs//,/ } timeout 300 "$BIN" spectral "$CFG" --overwrite --set output.file="$f" --set spmv.format="$fmt" \
        --set solver.nev=1 --set spectral.operator=electron_removal --set spectral.spin=up \
        --set spectral.momentum=all --set spectral.steps=200 --set spectral.omega_min=-15 \
        --set spectral.omega_max=10 --set spectral.points=2000 >"$log" 2>&1; then
        echo "$label failed (exit $?), see $log"; tail -3 "$log"; ROWS+=("$label | failed | | | | | |"); continue
    fi
    grep -E "spectral: (electron_removal|A\(k,w\) phases|the file)" "$log"
    ROWS+=("$("$PY" - "$f" "$label" <<'PYEOF'
import sys, h5py
f = h5py.File(sys.argv[1]); s = f["spectral"].attrs
nk, steps = f["spectral/akw"].shape[0], int(f["spectral/steps_done"][:].max())
fmt = f.attrs["spmv_format"]; fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
base = nk * steps * s["spmv_median_seconds"]
print(f"{sys.argv[2]} (H: {fmt}) | {int(s['sector_rows'])} | {s['sector_build_seconds']:.3f} | {s['akw_seconds']:.3f} | "
      f"{1e3 * s['spmv_median_seconds']:.3f} | {base:.3f} | {s['akw_seconds'] / base:.2f} | "
      f"{len(f['spectral/steps_done'])} recursions, mu- {s['chemical_potential']:.6f}; step "
      f"{1e3 * s['step_seconds']:.3f} ms = {s['step_seconds'] / s['spmv_median_seconds']:.2f}x SpMV; "
      f"psi0 {s.get('psi0_fetch_seconds', float('nan')):.3f} s, phi {s.get('phi_build_seconds', float('nan')):.3f} s "
      f"({s.get('phi_made_on', b'?')}), upload {s.get('phi_upload_seconds', float('nan')):.3f} s, "
      f"recursions {s['recursion_seconds']:.3f} s, fractions {s.get('fraction_seconds', float('nan')):.3f} s")
PYEOF
)")
done
echo
echo "A(k, w), $CFG electron removal (up), all momenta, 200 steps; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
echo "run | H' rows | H' build s | A(k,w) s | H' SpMV median ms | nk x 200 SpMVs s | ratio (goal <= 2) | notes"
echo "--- | --- | --- | --- | --- | --- | --- | ---"
for r in "${ROWS[@]}"; do echo "$r"; done
