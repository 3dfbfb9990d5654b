# The warpgroup-MMA row kernels' checks for a study's run script, sourced after
# scripts/gpu_run_prelude.sh (which built build/ and defines F and save):
#   row_checks TESTS_SECONDS SANITIZER_SECONDS
# runs the 26 row tests (RowAttentionWgmmaGpu, RowAttentionStreamGpu, RowAttentionMqaGpu,
# DecodeVariantsWgmmaGpu, RowAttentionRaggedGpu; ctest -j6) into F/tests.log, then
# compute-sanitizer memcheck and racecheck on their four Small cases into F/sanitizer-<tool>.log,
# each under its time limit, printing each step's exit status and saving F after each.
row_checks() {
  local tests_s=$1 sanitizer_s=$2 tool
  timeout "$tests_s" ctest --test-dir build -j6 --output-on-failure \
      -R '^(RowAttentionWgmmaGpu|RowAttentionStreamGpu|RowAttentionMqaGpu|DecodeVariantsWgmmaGpu|RowAttentionRaggedGpu)\.' \
      > "$F/tests.log" 2>&1
  echo "tests rc=$? at $SECONDS s"; grep -E "tests passed|tests failed" "$F/tests.log"; save
  local small='RowAttentionWgmmaGpu.Small:RowAttentionStreamGpu.Small:RowAttentionMqaGpu.HostLengthTwinSmall:DecodeVariantsWgmmaGpu.Small'
  for tool in memcheck racecheck; do
    timeout "$sanitizer_s" compute-sanitizer --tool $tool --error-exitcode 1 build/tests/decode_tests \
        --gtest_filter="$small" > "$F/sanitizer-$tool.log" 2>&1
    echo "$tool rc=$? at $SECONDS s"; tail -1 "$F/sanitizer-$tool.log"; save
  done
}
