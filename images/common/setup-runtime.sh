#!/bin/sh
# The runtime set-up every dljob trainer image shares (images/cpu, images/cuda), run once while the
# image is built, after its runtime packages (install-packages.sh runtime ...) and the programs
# are in /usr/local/bin (built on the host for images/cpu, by the builder stage for images/cuda):
#   - dljob-train and dljob find every shared library (check-programs.sh) and run: `dljob-train
#     --help`, and `dljob data cache --help` (the operator's cache init containers run it in the
#     job's image): a missing library or program shows up here, at build time, not in the first
#     job;
#   - sshd for the job's key (see below) and an SSH client that skips host-key checks;
#   - entrypoint.sh (next to this script) as /usr/local/bin/dljob-entrypoint;
#   - /workspace, the working directory.
# The operator runs workers as `/usr/sbin/sshd -D -e -p 2222` and the launcher's mpirun reaches
# them over SSH, with the job's SSH secret (id_rsa, authorized_keys) mounted read-only at
# /root/.ssh (operator/controller/builders.cc).
set -eu

here="$(cd "$(dirname "$0")" && pwd)"
fail() { echo "setup-runtime.sh: $*" >&2; exit 1; }

sh "$here/check-programs.sh" dljob-train dljob
/usr/local/bin/dljob-train --help >/dev/null || fail "dljob-train --help failed"
/usr/local/bin/dljob data cache --help >/dev/null || fail "dljob data cache --help failed"

# sshd: key-only root login with the job's key. The secret is mounted read-only at /root/.ssh
# (files 0600, the directory as the cluster makes it), so StrictModes is off. Host keys are made
# once per image; clients skip host-key checks (the launcher's plm_rsh_args and ssh_config below).
# /run/sshd is sshd's privilege-separation directory, needed when the command is sshd itself.
# Sessions get OMPI_ALLOW_RUN_AS_ROOT, as the image's environment has it.
mkdir -p /run/sshd /root/.ssh /etc/ssh/sshd_config.d /etc/ssh/ssh_config.d
chmod 700 /root/.ssh
ssh-keygen -A
printf '%s\n' \
  'Port 2222' \
  'PermitRootLogin prohibit-password' \
  'PubkeyAuthentication yes' \
  'AuthorizedKeysFile /root/.ssh/authorized_keys' \
  'PasswordAuthentication no' \
  'KbdInteractiveAuthentication no' \
  'StrictModes no' \
  'UsePAM no' \
  'PrintMotd no' \
  'SetEnv OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1' \
  >/etc/ssh/sshd_config.d/dljob.conf
printf '%s\n' \
  'Host *' \
  '  Port 2222' \
  '  StrictHostKeyChecking no' \
  '  UserKnownHostsFile /dev/null' \
  '  LogLevel ERROR' \
  >/etc/ssh/ssh_config.d/dljob.conf
/usr/sbin/sshd -t

install -m 0755 "$here/entrypoint.sh" /usr/local/bin/dljob-entrypoint
mkdir -p /workspace
