#!/bin/sh
# slurm.conf: Prolog=/usr/share/gpuwarden/slurm/prolog.sh. Exit 1 on a sick GPU of the job:
# Slurm then drains the node ("Prolog error") and requeues the job held.
exec /usr/bin/gpuwarden slurm prolog
