"""The verbs simulator against the rules of ibv_modify_qp(3), ibv_reg_mr(3), ibv_post_send(3)/ibv_post_recv(3)."""
import pytest

from helpers.network import verbs
from helpers.network.verbs import LOCAL_WRITE, REMOTE_READ, REMOTE_WRITE, QPState


def pair(access=LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ, rnr_retry=7):
    a, b = verbs.Host("a"), verbs.Host("b")
    qa, qb = verbs.QueuePair(a), verbs.QueuePair(b)
    verbs.connect(qa, qb, access=access, rnr_retry=rnr_retry)
    return a, b, qa, qb


def test_state_machine_forward_path_only():
    qp = verbs.QueuePair(verbs.Host("h"))
    with pytest.raises(verbs.VerbsError, match="not a legal transition"):
        qp.modify(QPState.RTS, sq_psn=0, timeout=1, retry_cnt=1, rnr_retry=1)
    with pytest.raises(verbs.VerbsError, match="needs"):
        qp.modify(QPState.INIT, port_num=1)
    qp.modify(QPState.INIT, pkey_index=0, port_num=1, qp_access_flags=0)
    with pytest.raises(verbs.VerbsError, match="dest_qp_num"):
        qp.modify(QPState.RTR, rq_psn=0, path_mtu=4096, ah_attr={})
    qp.modify(QPState.RESET)                       # any state may go back to RESET
    assert qp.state is QPState.RESET


def test_post_rules():
    h = verbs.Host("h")
    qp, mr = verbs.QueuePair(h), h.reg_mr(64, LOCAL_WRITE)
    with pytest.raises(verbs.VerbsError, match="RESET"):
        qp.post_recv(1, mr)
    qp.modify(QPState.INIT, pkey_index=0, port_num=1, qp_access_flags=0)
    qp.post_recv(1, mr)                            # legal in INIT
    with pytest.raises(verbs.VerbsError, match="only in RTS"):
        qp.post_send(2, "SEND", mr)


def test_reg_mr_remote_write_needs_local_write():
    with pytest.raises(verbs.VerbsError, match="LOCAL_WRITE"):
        verbs.Host("h").reg_mr(64, REMOTE_WRITE)


def test_one_sided_and_two_sided():
    rows = {r["op"]: r for r in verbs.demo(1000)}
    assert all(r["data_correct"] for r in rows.values())
    assert rows["SEND"]["target_completions"] == 1 and rows["SEND"]["target_verbs"] > 0
    for op in ("RDMA_WRITE", "RDMA_READ"):
        assert rows[op]["target_verbs"] == 0 and rows[op]["target_completions"] == 0


def test_bad_rkey_and_missing_access_are_remote_access_errors():
    a, b, qa, qb = pair()
    src, ro = a.reg_mr(32, LOCAL_WRITE), b.reg_mr(32, REMOTE_READ)
    qa.post_send(1, "RDMA_WRITE", src, rkey=ro.rkey)         # region allows reads only
    (wc,) = a.poll_cq()
    assert wc.status == "IBV_WC_REM_ACCESS_ERR" and qa.state is QPState.ERR
    a, b, qa, qb = pair()
    src, dst = a.reg_mr(32, LOCAL_WRITE), b.reg_mr(16, LOCAL_WRITE | REMOTE_WRITE)
    qa.post_send(1, "RDMA_WRITE", src, rkey=dst.rkey)        # 32 bytes into a 16-byte region
    assert a.poll_cq()[0].status == "IBV_WC_REM_ACCESS_ERR"
    a, b, qa, qb = pair(access=LOCAL_WRITE)                  # QP itself without remote access
    src, dst = a.reg_mr(8, LOCAL_WRITE), b.reg_mr(8, LOCAL_WRITE | REMOTE_WRITE)
    qa.post_send(1, "RDMA_WRITE", src, rkey=dst.rkey)
    assert a.poll_cq()[0].status == "IBV_WC_REM_ACCESS_ERR"


def test_send_without_receive_is_rnr_then_error():
    a, b, qa, qb = pair(rnr_retry=1)
    src = a.reg_mr(8, LOCAL_WRITE)
    qa.post_send(1, "SEND", src)                   # first RNR NAK: retried
    assert a.poll_cq() == []
    qa.post_send(2, "SEND", src)
    assert a.poll_cq()[0].status == "IBV_WC_RNR_RETRY_EXC_ERR"


def test_receive_too_small_and_flush():
    a, b, qa, qb = pair()
    src, small, other = a.reg_mr(64, LOCAL_WRITE), b.reg_mr(16, LOCAL_WRITE), b.reg_mr(64, LOCAL_WRITE)
    qb.post_recv(10, small)
    qb.post_recv(11, other)
    qa.post_send(1, "SEND", src)
    statuses = [w.status for w in b.poll_cq()]
    assert statuses == ["IBV_WC_LOC_LEN_ERR", "IBV_WC_WR_FLUSH_ERR"]
    assert a.poll_cq()[0].status == "IBV_WC_REM_INV_REQ_ERR"


def test_detect_rxe_says_why():
    ok, note = verbs.detect_rxe()
    assert isinstance(ok, bool) and note


def test_pingpong_refuses_without_a_device():
    ok, _ = verbs.detect_rxe()
    if ok:
        pytest.skip("this host has an RDMA device")
    with pytest.raises(ValueError, match="no RDMA device"):
        verbs.pingpong()
