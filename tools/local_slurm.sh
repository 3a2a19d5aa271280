#!/bin/bash
# A one-node Slurm cluster on this Debian 12 machine (as root), for the test
# mpi_slurm_srun, which skips without one: installs slurmctld, slurmd, the
# client and munge, writes a minimal slurm.conf for this host's cores, and
# starts munged, slurmctld and slurmd. Stop them with: pkill slurmd; pkill slurmctld.
set -euo pipefail
DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld slurmd slurm-client munge >/dev/null
host=$(hostname -s)
cpus=$(nproc)
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=heatsolve-local
SlurmctldHost=$host
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmUser=root
SlurmdUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
chown -R munge:munge /run/munge /var/lib/munge /var/log/munge /etc/munge
pgrep -x munged >/dev/null || su -s /bin/sh munge -c /usr/sbin/munged
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 1 20); do sinfo -h -o %a 2>/dev/null | grep -q up && break; sleep 0.5; done
sinfo
