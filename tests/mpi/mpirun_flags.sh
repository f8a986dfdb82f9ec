# Sourced by the scripts that start Open MPI jobs: sets mpirun_cmd (an array) for NP ranks on
# this one machine, in a container: no ssh, no network but loopback, 2 cores, maybe as root.
#   --oversubscribe --bind-to none   more ranks than cores; no core binding (it fails then)
#   --mca plm_rsh_agent false         never look for ssh/rsh: every rank is local
#   --mca oob_tcp_if_include lo       the runtime's own wiring over loopback only (its PMIx
#                                     server needs 127.0.0.1 up; nothing leaves the machine)
#   --mca btl self,vader              MPI messages through shared memory only
#   btl_vader_single_copy_mechanism none   no cross-memory attach (ptrace is denied in most
#                                     containers, which makes vader print warnings or fail)
#   --allow-run-as-root               CI runs as root
# OZDGEMM_MPIRUN overrides the mpirun binary (an Open MPI installed elsewhere).
mpirun_cmd=("${OZDGEMM_MPIRUN:-mpirun}" -np "${NP:-4}" --oversubscribe --bind-to none
            --mca plm_rsh_agent false --mca oob_tcp_if_include lo --mca btl self,vader
            --mca btl_vader_single_copy_mechanism none)
if ((EUID == 0)); then
  mpirun_cmd+=(--allow-run-as-root)
fi

# Why mpirun may not start here, for the failure message.
mpirun_diagnosis() {
  local flags
  flags=$(cat /sys/class/net/lo/flags 2>/dev/null || echo "")
  if [[ -n $flags ]] && (((flags & 1) == 0)); then
    echo "the loopback interface is down: Open MPI's runtime (PMIx) needs 127.0.0.1" \
         "(ip link set lo up)"
  elif ! command -v "${mpirun_cmd[0]}" >/dev/null; then
    echo "${mpirun_cmd[0]} not found (openmpi-bin; scripts/setup.sh installs it)"
  else
    echo "see mpirun's output above"
  fi
}
