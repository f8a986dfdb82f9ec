#!/usr/bin/env bash
# Runs one MPI rank with libozdgemm.so preloaded and a log file of its own. OZDGEMM_LOG_FILE
# names one file, and every rank appending to it would interleave the lines, so the rank number
# (from the launcher's environment) goes into the name. LD_PRELOAD is set here, for the rank
# only, not for mpirun and its daemons.
#
# Usage: mpirun ... rank_env.sh LIBOZDGEMM LOG_PREFIX PROGRAM [ARGS...]
#   LOG_PREFIX  each rank logs (at OZDGEMM_LOG_LEVEL, default debug) to LOG_PREFIX.rank<r>.log;
#               empty: no log file
set -euo pipefail
lib=$1 prefix=$2
shift 2
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}}
if [[ -n $prefix ]]; then
  export OZDGEMM_LOG_FILE=$prefix.rank$rank.log OZDGEMM_LOG_LEVEL=${OZDGEMM_LOG_LEVEL:-debug}
fi
export LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}
exec "$@"
