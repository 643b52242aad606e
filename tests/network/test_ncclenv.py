"""helpers.network.ncclenv: the NCCL variable table and the job-script linter (chapter 03)."""
from helpers.network import ncclenv


def test_nccl_env_lint():
    env = ncclenv.parse_exports("export NCCL_IB_DISABLE=1\nNCCL_ALGO=Rings\nexport NCCL_BUFSIZE=1\n"
                                "export NCCL_SOCKET_IFNAME=eth0\n")
    msgs = " | ".join(ncclenv.lint(env))
    assert "TCP sockets" in msgs and "unknown algorithm" in msgs and "NCCL_BUFSIZE" in msgs
    assert "SOCKET_IFNAME" not in msgs
    assert ncclenv.lint({"NCCL_ALGO": "Ring,Tree"})[0].startswith("NCCL_ALGO=Ring,Tree: restricts")
    assert len(ncclenv.table()) == len(ncclenv.rows()) >= 20
