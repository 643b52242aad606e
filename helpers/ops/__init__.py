"""Operations on real servers: GPU partitioning (MIG, time-slicing), passthrough, Kubernetes manifests, monitoring
(exporter, Prometheus), scheduling (simulator, real Slurm), automation (Ansible, BMC, logs, health checks).

Used by chapter 05 (virtualisation), chapter 12 (monitoring), chapter 13 (scheduling) and chapter 27 (automation).
"""
