. bench/device_deps.sh; export NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=8
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPJDS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/cmake.log 2>&1 && cmake --build build-gpu -j 16 > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build ok $SECONDS s"
PJDS_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/gpu/test_cuda_backend > $OUT/mc1.log 2>&1; echo "memcheck test_cuda_backend exit $?"; grep -E 'ERROR SUMMARY' $OUT/mc1.log
for ex in vector task; do
PJDS_SHARE_GPUS=1 timeout 200 mpirun --allow-run-as-root --oversubscribe --bind-to none -n 2 -x PJDS_SHARE_GPUS -x OMP_NUM_THREADS -x NCCL_NVLS_ENABLE compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/app/pjds-lanczos solve configs/quickstart.ini --set model.max_phonons=8 --set spmv.backend=cuda --set spmv.transport=ipc --set spmv.exchange=$ex --set output.file=/tmp/q-$ex.h5 --overwrite > $OUT/mc-$ex.log 2>&1; echo "memcheck 2-rank ipc $ex exit $?"; grep -E 'ERROR SUMMARY|eigenvalue\[0\]' $OUT/mc-$ex.log
done
echo "all done $SECONDS s"
