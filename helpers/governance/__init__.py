"""Lifecycle and governance: federated learning, secure aggregation and differential privacy, cross-cluster sync
(chapter 17); segmentation, RBAC, encryption, TLS and audit logs (chapter 20); pipelines, model registry, A/B tests,
drift and data versioning (chapter 22)."""
