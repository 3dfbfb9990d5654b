# Checks for a study's run script, sourced after scripts/gpu_run_prelude.sh (which built build/
# and defines F and save):
#   sanitize FILTER SECONDS      compute-sanitizer memcheck, then racecheck, on the gtest filter
#                                FILTER into F/sanitizer-<tool>.log, each within SECONDS
#   row_checks TESTS_SECONDS SANITIZER_SECONDS
#                                the 26 warpgroup-MMA row tests (RowAttentionWgmmaGpu,
#                                RowAttentionStreamGpu, RowAttentionMqaGpu, DecodeVariantsWgmmaGpu,
#                                RowAttentionRaggedGpu; ctest -j6) into F/tests.log, then sanitize
#                                on their four Small cases
# Each step prints its exit status and last line, and saves F.
sanitize() {
  local filter=$1 seconds=$2 tool
  for tool in memcheck racecheck; do
    timeout "$seconds" compute-sanitizer --tool $tool --error-exitcode 1 build/tests/decode_tests \
        --gtest_filter="$filter" > "$F/sanitizer-$tool.log" 2>&1
    echo "$tool rc=$? at $SECONDS s"; tail -1 "$F/sanitizer-$tool.log"; save
  done
}
row_checks() {
  local tests_s=$1 sanitizer_s=$2
  timeout "$tests_s" ctest --test-dir build -j6 --output-on-failure \
      -R '^(RowAttentionWgmmaGpu|RowAttentionStreamGpu|RowAttentionMqaGpu|DecodeVariantsWgmmaGpu|RowAttentionRaggedGpu)\.' \
      > "$F/tests.log" 2>&1
  echo "tests rc=$? at $SECONDS s"; grep -E "tests passed|tests failed" "$F/tests.log"; save
  sanitize 'RowAttentionWgmmaGpu.Small:RowAttentionStreamGpu.Small:RowAttentionMqaGpu.HostLengthTwinSmall:DecodeVariantsWgmmaGpu.Small' \
      "$sanitizer_s"
}
