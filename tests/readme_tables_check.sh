#!/usr/bin/env bash
# ctest: scripts/readme_tables.py's models region (the models preset by model) on a copy of the
# tree whose results/reference/h100/models.json is edited: one point more at 0.90 moves the count by
# one and that model's "at 0.90 or more" cell; a point without its fraction of the read floor, a
# file with no verified decode-bench point, a run that names no commit and a file that is not JSON
# are refused by name (exit status 2), before README.md is touched.
# Usage: readme_tables_check.sh SOURCE_DIR OUT_DIR
set -uo pipefail
src=$1 out=$2
source "$src/tests/script_check_lib.sh"
rm -rf "$out" && mkdir -p "$out/tree/scripts" "$out/tree/results/reference/h100"
tree=$out/tree h=$out/tree/results/reference/h100
cp "$src/scripts/readme_tables.py" "$tree/scripts/"
cp "$src/README.md" "$tree/"
cp -r "$src/configs" "$tree/"
for f in h100 peer paper ceilings models; do cp "$src/results/reference/h100/$f.json" "$h/"; done
models=$src/results/reference/h100/models.json
run() { python3 "$tree/scripts/readme_tables.py" "$@"; }
region() { sed -n '/<!-- generated:models begin -->/,/<!-- generated:models end -->/p' "$1"; }

# The committed file gives the committed region.
run --write || fail "--write on the committed files: exit status $?"
[ "$(region "$tree/README.md")" = "$(region "$src/README.md")" ] || fail "the models region differs from README.md's"
# edit PYTHON: models.json rewritten by PYTHON (d: the document, dbp: its ok decode-bench points).
edit() {
  python3 - "$models" "$h/models.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
dbp = [p for p in d["points"] if p.get("parameters", {}).get("backend", "decode-bench") == "decode-bench"
       and p.get("status") == "ok"]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
count() { grep -o '[0-9]* of [0-9]* points reach 0.90' "$tree/README.md"; }
before=$(count)
# One point below 0.90 lifted to 0.95: one more in the count and in its model's row.
edit 'p = next(p for p in dbp if p["achieved"]["fraction_of_read_floor"] < 0.9); p["achieved"]["fraction_of_read_floor"] = 0.95; print(p["experiment"])' >"$out/lifted.txt"
model=$(cat "$out/lifted.txt")
cell() { region "$tree/README.md" | grep "^| \`$model\` |" | awk -F'|' '{print $7}' | tr -d ' '; }
cell_before=$(cell)
run --write || fail "--write with one point lifted: exit status $?"
read -r reached total _ <<<"$(count | tr -d 'a-z')"
read -r reached0 total0 _ <<<"$(echo "$before" | tr -d 'a-z')"
[ "$reached" = $((reached0 + 1)) ] && [ "$total" = "$total0" ] || fail "count '$before' -> '$(count)': not one more of as many"
[ "$(cell)" = $((cell_before + 1)) ] || fail "$model's at-0.90 cell $cell_before -> $(cell)"
echo "lifted one $model point: '$before' -> '$(count)'"

cp "$tree/README.md" "$out/readme-before-refusals.md"
edit 'del dbp[3]["achieved"]["fraction_of_read_floor"]; print(dbp[3]["id"])' >"$out/id.txt"
expect_refused "$out/no-floor.txt" "results/reference/h100/models.json: $(cat "$out/id.txt"): no achieved.fraction_of_read_floor" \
  "a point without its fraction of the read floor" -- run --write
edit 'for p in dbp: p["status"] = "verification_failed"'
expect_refused "$out/none.txt" "results/reference/h100/models.json: no verified decode-bench point" "no verified point" -- run --write
edit 'd["meta"]["git"]["sha"] = "unknown"'
expect_refused "$out/sha.txt" "results/reference/h100/models.json: meta.git.sha is unknown" "a run with no commit" -- run --write
echo '{"points": [' >"$h/models.json"
expect_refused "$out/json.txt" "results/reference/h100/models.json: not a readable JSON document" "a file that is not JSON" -- run --write
run --write >/dev/null 2>&1
[ $? = 2 ] || fail "a refusal's exit status is not 2"
cmp -s "$tree/README.md" "$out/readme-before-refusals.md" || fail "a refused run changed README.md"
echo "readme_tables: ok"
