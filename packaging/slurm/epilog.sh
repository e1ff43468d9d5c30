#!/bin/sh
# slurm.conf: Epilog=/usr/share/gpuwarden/slurm/epilog.sh. Writes the job's GPU report and
# AdminComment (kept only with AccountingStorageType=accounting_storage/slurmdbd: Slurm
# refuses to change a finished job otherwise); always exits 0 (a failing epilog would drain
# the node).
exec /usr/bin/gpuwarden slurm epilog
