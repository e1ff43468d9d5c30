#!/bin/sh
# slurm.conf: HealthCheckProgram=/usr/share/gpuwarden/slurm/healthcheck.sh (docs/slurm.md).
# Slurm runs it as root with no PATH; gpuwarden drains/resumes the node itself.
exec /usr/bin/gpuwarden check --drain
