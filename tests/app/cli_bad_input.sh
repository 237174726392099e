#!/usr/bin/env bash
# Bad-input tests of the CLI: each case must exit with status 2 and print
# exactly one line on stderr that names the file, the line and the key.
# Usage: cli_bad_input.sh CASE   (PJDS_BIN = the pjds-lanczos executable)
set -u
case_name=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cfg=$dir/bad.ini
base() { # a valid small model; $1 = extra lines for [model], $2 = extra sections
cat >"$cfg" <<EOT
[model]
type = holstein-hubbard
sites = 4
n_up = 2
n_down = 2
hubbard_u = 4
coupling = 0.5
phonon_basis = site
${1:-}
${2:-}
EOT
}
expect=""
args=()
cmd=info
case $case_name in
  unknown_section) base "max_phonons = 2" $'[solverr]\nnev = 2'; expect="bad.ini:11: \[solverr\] unknown section" ;;
  unknown_key)     base $'max_phonons = 2\nphonons = 3'; expect="bad.ini:10: \[model\] phonons: unknown key" ;;
  missing_key)     base ""; expect="bad.ini: \[model\] missing key 'max_phonons'" ;;
  non_number)      base "max_phonons = two"; expect="bad.ini:9: \[model\] max_phonons: 'two' is neither auto nor an integer" ;;
  non_number_real) base $'max_phonons = 2\nhopping = 1.0x'; expect="bad.ini:10: \[model\] hopping: '1.0x' is not a finite number" ;;
  n_up_gt_sites)   base "max_phonons = 2"; sed -i 's/^n_up = 2/n_up = 5/' "$cfg"; expect="bad.ini:4: \[model\] n_up: 5 > sites = 4" ;;
  negative_m)      base "max_phonons = -1"; expect="bad.ini:9: \[model\] max_phonons: must be >= 0" ;;
  basis_too_large) base "max_phonons = 2000000000"; sed -i 's/^sites = 4/sites = 60/' "$cfg"; expect="bad.ini:9: \[model\] max_phonons: .*too large" ;;
  duplicate_key)   base $'max_phonons = 2\nmax_phonons = 3'; expect="bad.ini:10: \[model\] max_phonons: key given twice" ;;
  bad_enum)        base $'max_phonons = 2\nboundary = twisted'; expect="bad.ini:10: \[model\] boundary: 'twisted' is not one of periodic\|open" ;;
  bad_set)         base "max_phonons = 2"; args=(--set model.nope=1); expect="--set model.nope=1: \[model\] nope: unknown key" ;;
  tiny_tol)        base "max_phonons = 2" $'[solver]\ntolerance = 1e-300'; expect="bad.ini:11: \[solver\] tolerance: 1e-300 is below what double precision can resolve" ;;
  ipc_on_cpu)      base "max_phonons = 2" $'[spmv]\nbackend = cpu\ntransport = ipc'; cmd=solve
                   args=(--set output.file="$dir/out.h5"); expect="\[spmv\] transport = ipc needs backend = cuda" ;;
  missing_file)    cfg=$dir/none.ini; expect="none.ini: cannot open config file" ;;
  sort_window_neg) base "max_phonons = 2" $'[spmv]\nsort_window = -3'; expect="bad.ini:11: \[spmv\] sort_window: must be >= 0 or auto" ;;
  sort_window_minus1) base "max_phonons = 2" $'[spmv]\nsort_window = -1'; expect="bad.ini:11: \[spmv\] sort_window: must be >= 0 or auto, 0 = all rows \(got -1\)" ;;
  sort_window_set) base "max_phonons = 2"; args=(--set spmv.sort_window=-2); expect="--set spmv.sort_window=-2: \[spmv\] sort_window: must be >= 0 or auto" ;;
  sort_window_word) base "max_phonons = 2" $'[spmv]\nsort_window = fast'; expect="bad.ini:11: \[spmv\] sort_window: 'fast' is neither auto nor an integer" ;;
  spec_operator)   base "max_phonons = 2" $'[spectral]\noperator = magnon'; cmd=spectral; expect="bad.ini:11: \[spectral\] operator: 'magnon'" ;;
  spec_momentum)   base "max_phonons = 2" $'[spectral]\nmomentum = 4'; cmd=spectral; expect="bad.ini:11: \[spectral\] momentum: must be in 0..3" ;;
  spec_eta)        base "max_phonons = 2" $'[spectral]\nbroadening = 0'; cmd=spectral; expect="bad.ini:11: \[spectral\] broadening: must be > 0" ;;
  spec_q0_normal)  base $'max_phonons = 2\nphonon_basis = normal' $'[spectral]\noperator = phonon_displacement'; cmd=spectral
                   sed -i '/^phonon_basis = site$/d' "$cfg"; args=(--set output.file="$dir/out.h5")
                   expect="\[spectral\] momentum: 0 with operator = phonon_displacement needs phonon_basis = site" ;;
  obs_import)      printf '[model]\ntype = hdf5\n[matrix]\nfile = m.h5\n[output]\nobservables = true\n' >"$cfg"
                   expect="bad.ini:6: \[output\] observables: needs a generated holstein-hubbard model" ;;
  kpm_moments)     base "max_phonons = 2" $'[kpm]\nmoments = 1'; cmd=dos; expect="bad.ini:11: \[kpm\] moments: must be in 2..1000000" ;;
  kpm_vectors)     base "max_phonons = 2" $'[kpm]\nrandom_vectors = 0'; cmd=dos; expect="bad.ini:11: \[kpm\] random_vectors: must be in 1..100000" ;;
  kpm_block)       base "max_phonons = 2" $'[kpm]\nblock = 65'; cmd=dos; expect="bad.ini:11: \[kpm\] block: must be in 1..64" ;;
  kpm_nonsym)      printf '[model]\ntype = block-stencil\nnx = 3\nny = 3\nnz = 3\nblock_size = 2\nconvection = 0.2\n[spmv]\nbackend = cpu\n' >"$cfg"
                   cmd=dos; args=(--set output.file="$dir/out.h5"); expect="dos: .* is nonsymmetric; the kernel polynomial method needs a real spectrum" ;;
  mem_huge)        printf '[model]\ntype = holstein-hubbard\nsites = 10\nn_up = 5\nn_down = 5\nmax_phonons = 40\n[spmv]\nbackend = cpu\n' >"$cfg"
                   cmd=solve; args=(--set output.file="$dir/out.h5")
                   expect="memory plan: each of the 1 rank\(s\) needs about [0-9.]+ PB of host memory .* but has .* available: reduce the model" ;;
  mem_gpu_cap)     nvidia-smi -L > /dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
                   base "max_phonons = 6" $'[spmv]\nbackend = cuda'; cmd=solve; args=(--set output.file="$dir/out.h5")
                   export PJDS_DEVICE_MEMORY_LIMIT=1M
                   expect="memory plan: each of the 1 rank\(s\) needs about .* of GPU memory .* but the GPU has 1.05 MB free" ;;
  format_incompressible) # a matrix with ~7e5 distinct values and ~2e5 distinct offsets: 20 + 18 bits > 32
                   "${PJDS_PYTHON:-/usr/bin/python3}" - "$dir/m.h5" <<'PYEOF' || { echo "FAIL: writing the matrix"; exit 1; }
import sys, h5py, numpy as np, scipy.sparse as sp
n = 100000
a = sp.random(n, n, density=3.0 / n, format="csr", random_state=np.random.default_rng(5))
a = (a + a.T + sp.diags(np.arange(1, n + 1) * 1e-3)).tocsr()
a.sort_indices()
with h5py.File(sys.argv[1], "w") as f:
    f["row_ptr"], f["col_idx"], f["values"] = a.indptr.astype(np.int64), a.indices.astype(np.int32), a.data
    for k, v in (("pjds_matrix_schema", np.int32(1)), ("rows", np.int64(n)), ("cols", np.int64(n)),
                 ("nnz", np.int64(a.nnz)), ("symmetric", np.int32(1)), ("storage", np.bytes_("full"))):
        f.attrs[k] = v
PYEOF
                   printf '[model]\ntype = hdf5\n[matrix]\nfile = %s/m.h5\n[spmv]\nbackend = cpu\nformat = compressed\n' "$dir" >"$cfg"
                   cmd=solve; args=(--set output.file="$dir/out.h5")
                   expect="bad.ini:7: \[spmv\] format = compressed: the matrix cannot be compressed: [0-9]+ distinct values \([0-9]+ bits\) and [0-9]+ distinct column offsets \([0-9]+ bits\) need more than 32 bits" ;;
  bad_reorth)      base "max_phonons = 2" $'[solver]\nreorthogonalization = none'; expect="bad.ini:11: \[solver\] reorthogonalization" ;;
  syntax)          base "max_phonons = 2" "this line has no equals sign"; expect="bad.ini:10: syntax error" ;;
  # the backend is made in a thread (app/app_backend.c): its errors print as before, before the build
  bad_backend)     base "max_phonons = 2" $'[spmv]\nbackend = gpu'; cmd=solve; args=(--set output.file="$dir/out.h5")
                   expect="bad.ini:11: \[spmv\] backend: 'gpu' is not one of auto\|cpu\|cuda" ;;
  cuda_no_gpu|cuda_no_gpu_dos|cuda_no_gpu_spectral)
                   nvidia-smi -L > /dev/null 2>&1 && { echo "skipped: a GPU is present"; exit 77; }
                   base "max_phonons = 2" $'[spmv]\nbackend = cuda'; args=(--set output.file="$dir/out.h5")
                   cmd=${case_name#cuda_no_gpu_}; [ "$cmd" = cuda_no_gpu ] && cmd=solve
                   expect="error: .*bad.ini:11: \[spmv\] backend = cuda, but (this build has no CUDA backend|no CUDA device is (visible|available))" ;;
  free_import)     printf '[model]\ntype = hdf5\n[matrix]\nfile = m.h5\n[spmv]\nformat = matrix_free\n' >"$cfg"
                   expect="bad.ini:6: \[spmv\] format: matrix_free needs a generated holstein-hubbard model" ;;
  # every command of pjds-lanczos that builds an operator runs matrix_free; pjds-bench times stored formats
  free_bench)      base "max_phonons = 2" $'[spmv]\nbackend = cpu\nformat = matrix_free'; cmd=bench
                   expect="bad.ini:12: \[spmv\] format: matrix_free runs \`solve\` \(and its sweeps\), \`spectral\` and \`dos\` so far; \`.*\` needs a stored matrix" ;;
  *) echo "unknown case $case_name"; exit 1 ;;
esac
"$PJDS_BIN" "$cmd" "$cfg" "${args[@]}" >"$dir/out" 2>"$dir/err"
status=$?
fail=0
if [ "$status" -ne 2 ]; then echo "FAIL: exit status $status, expected 2"; fail=1; fi
nlines=$(wc -l <"$dir/err")
if [ "$nlines" -ne 1 ]; then echo "FAIL: $nlines lines on stderr, expected 1"; fail=1; fi
if ! grep -Eq -- "$expect" "$dir/err"; then echo "FAIL: stderr does not match /$expect/"; fail=1; fi
if [ -e "$dir/out.h5" ]; then echo "FAIL: output file written"; fail=1; fi
echo "stderr: $(cat "$dir/err")"
exit $fail
