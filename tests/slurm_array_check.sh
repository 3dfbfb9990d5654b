#!/usr/bin/env bash
# The Slurm path of docs/cluster.md for real: a one-node Slurm cluster on this machine (munge,
# slurmctld, slurmd from Debian's packages), scripts/cluster/slurm/submit.sh submits a 3-task
# array of a capacity-only preset (host simulation: no GPU) plus the dependent merge job, and the
# merged points must equal an unsharded run's (ids and values; run timings and meta ignored).
#   tests/slurm_array_check.sh SOURCE_DIR WORK_DIR DECODE_BENCH_EXE
# Exit 77 (ctest SKIP_RETURN_CODE) with the reason when it cannot run: not root, no apt-get, the
# packages cannot be installed, or the daemons do not come up in a container without the rights.
set -euo pipefail
src=${1:?usage: slurm_array_check.sh SOURCE_DIR WORK_DIR DECODE_BENCH_EXE}
work=${2:?usage}
exe=${3:?usage}
skip() { echo "SKIPPED: $*"; exit 77; }
t_start=$(date +%s)

[[ $(id -u) == 0 ]] || skip "not root (installing Slurm and starting its daemons needs root)"
command -v apt-get >/dev/null || skip "no apt-get (Slurm is installed from Debian's packages)"
command -v python3 >/dev/null || skip "no python3 (compares the results)"
packages=(munge slurmctld slurmd slurm-client)
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null ||
   ! command -v munged >/dev/null; then
  echo "installing ${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${packages[@]}"; } >"$work.apt.log" 2>&1 ||
    { tail -5 "$work.apt.log"; skip "apt-get install ${packages[*]} failed (log: $work.apt.log)"; }
fi
echo "slurm packages ready after $(($(date +%s) - t_start)) s"

rm -rf "$work"
mkdir -p "$work"/{state,spool,run}
work=$(cd "$work" && pwd)
exe=$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")

pids=()
started_munge=""
cleanup() {
  set +e
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  if [[ -n $started_munge ]]; then
    kill "$started_munge" 2>/dev/null
  fi
}
trap cleanup EXIT

# munge: reuse a running munged (the host's), else start one with the packaged key.
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  [[ -s /etc/munge/munge.key ]] || mungekey --create >/dev/null 2>&1 || skip "no munge key and mungekey failed"
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown -R munge: /run/munge /var/log/munge /var/lib/munge /etc/munge 2>/dev/null || true
  runuser -u munge -- munged --force >"$work/munged.log" 2>&1 || { cat "$work/munged.log"; skip "munged did not start"; }
  started_munge=$(cat /run/munge/munged.pid 2>/dev/null || true)
  for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n </dev/null | unmunge >/dev/null || skip "munge credentials do not round-trip"
fi

# Ports of our own, so a Slurm already on this machine (or a second run) is not disturbed.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
host=$(hostname -s)
cat >"$work/slurm.conf" <<EOF
ClusterName=decodebench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerParameters=sched_interval=1
MinJobAge=600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
export SLURM_CONF=$work/slurm.conf
touch "$work/cgroup.conf"  # some builds read it even with task/none; an empty one means defaults

slurmctld -D -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$work/slurmd.out" 2>&1 &
pids+=($!)
ready=""
for _ in $(seq 150); do
  if grep -qE '^(idle|mix|alloc)' <<<"$(sinfo -h -N -o '%t' 2>/dev/null)"; then ready=1; break; fi
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || break 2; done
  sleep 0.2
done
if [[ -z $ready ]]; then
  tail -n 20 "$work"/slurmctld.out "$work"/slurmd.out "$work"/slurmctld.log "$work"/slurmd.log 2>/dev/null
  skip "the one-node Slurm cluster did not come up (logs above; a container may lack the rights slurmd needs)"
fi
echo "cluster up after $(($(date +%s) - t_start)) s"

preset=$src/tests/data/capacity_only_preset.json
"$exe" sweep --preset "$preset" --output "$work/unsharded.json" 2>"$work/unsharded.log" >/dev/null ||
  { cat "$work/unsharded.log"; echo "FAILED: the unsharded run"; exit 1; }

read -r array merge < <(DECODE_BENCH=$exe "$src/scripts/cluster/slurm/submit.sh" 3 "$work/out" --preset "$preset")
echo "submitted array job $array and merge job $merge"
deadline=$(($(date +%s) + 300))
while grep -q . <<<"$(squeue -h -j "$array,$merge" -t PD,R,CG,CF 2>/dev/null)"; do
  if (($(date +%s) > deadline)); then
    squeue -j "$array,$merge"
    echo "FAILED: the jobs did not finish within 300 s"
    exit 1
  fi
  sleep 1
done
states=$(scontrol -o show job "$array"; scontrol -o show job "$merge")
while read -r line; do grep -oE '(JobName|ArrayTaskId|JobState|ExitCode)=[^ ]+' <<<"$line" | paste -sd' '; done <<<"$states"
if grep -vq 'JobState=COMPLETED' <<<"$states"; then
  tail -n 20 "$work"/out/*.out 2>/dev/null
  echo "FAILED: a job did not complete"
  exit 1
fi

python3 - "$work/unsharded.json" "$work/out/merged.json" <<'EOF'
import json, sys
def points(path):
    doc = json.load(open(path))
    return doc, [{k: v for k, v in p.items() if k != "run"} for p in doc["points"]]
full_doc, full = points(sys.argv[1])
merged_doc, merged = points(sys.argv[2])
ids = [p["id"] for p in full]
assert len(ids) == 8, f"the preset has 8 points, the unsharded run {len(ids)}"
assert [p["id"] for p in merged] == ids, f"merged ids differ:\n{[p['id'] for p in merged]}\n{ids}"
for a, b in zip(full, merged):
    assert a == b, f"point {a['id']} differs:\n{json.dumps(a)}\n{json.dumps(b)}"
assert all(p["status"] == "ok" for p in full), [p["status"] for p in full]
sweep = merged_doc["meta"]["sweep"]
assert sweep["complete"] and sweep["missing_shards"] == [], sweep
shards = sorted(m["shard"] for m in merged_doc["meta"]["merged_from"])
assert shards == ["0/3", "1/3", "2/3"], shards
print(f"merged == unsharded: {len(ids)} points from shards {shards}")
EOF
echo "PASSED in $(($(date +%s) - t_start)) s"
