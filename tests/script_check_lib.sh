# Sourced by the ctest shell checks of scripts/ (tests/*_check.sh): their failure line, and the
# check that a script refuses bad input by name.

fail() { echo "FAIL: $*"; exit 1; }

# expect_refused OUT_FILE MESSAGE WHAT -- COMMAND...: COMMAND must exit non-zero and write MESSAGE
# (a fixed string) to its output, kept in OUT_FILE; WHAT names the case in a failure.
expect_refused() {
  local out_file=$1 message=$2 what=$3
  shift 4
  "$@" >"$out_file" 2>&1 && fail "$what exits 0"
  grep -qF -- "$message" "$out_file" || fail "$what: no message '$message': $(cat "$out_file")"
}
