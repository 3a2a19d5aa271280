# A one-node Slurm's munge and configuration (as root); sourced by tools/local_slurm.sh and tools/gpu.sh slurm.
#   start_munge            key, folders and munged (if not running)
#   write_slurm_conf GPUS  slurm.conf for this host's cores; with GPUS > 0 also the
#                          node's GPUs as gres (gres.conf: /dev/nvidia0 ...)

start_munge() {
  id munge >/dev/null 2>&1 || useradd -r -s /usr/sbin/nologin munge
  mkdir -p /etc/munge /var/lib/munge /var/log/munge /run/munge
  [ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
  chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge && chmod 0400 /etc/munge/munge.key
  pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged
}

write_slurm_conf() {
  local gpus=$1 host
  host=$(hostname -s)
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
  cat > /etc/slurm/slurm.conf <<CONF
ClusterName=heatsolve-local
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
$([ "$gpus" -gt 0 ] && echo "GresTypes=gpu")
SlurmUser=root
SlurmdUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc)$([ "$gpus" -gt 0 ] && echo " Gres=gpu:$gpus") State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  if [ "$gpus" -gt 0 ]; then
    echo "Name=gpu File=/dev/nvidia[0-$((gpus - 1))]" > /etc/slurm/gres.conf
  fi
}
