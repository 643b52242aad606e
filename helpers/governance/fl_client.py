"""The NVFlare client script of chapter 17: one site's local training under NVFlare's Client API.

NVFlare's simulator runs this file once per site (site-1 … site-N) in its own workspace; it receives the global
weights, trains ``epochs`` local steps on its own Dirichlet shard (``helpers.governance.fedlearn.client_shard``) and
sends the weights back with its sample count as the aggregation weight, so the server's FedAvg is n_k-weighted —
the same arithmetic as ``fedlearn.fedavg_round``. Arguments: ``--clients N --alpha A --epochs E``.
"""
from __future__ import annotations

import argparse


def train_loop(argv: list[str] | None = None) -> None:
    import nvflare.client as flare
    from nvflare.app_common.abstract.fl_model import FLModel

    from helpers.governance import fedlearn

    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, required=True)
    ap.add_argument("--alpha", type=float, required=True)
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args(argv)
    flare.init()
    site = int(flare.get_site_name().rsplit("-", 1)[-1]) - 1
    x, y = fedlearn.client_shard(site, args.clients, args.alpha)
    while flare.is_running():
        model = flare.receive()
        w = fedlearn.local_train(model.params["numpy_key"].reshape(fedlearn.DIM + 1, fedlearn.CLASSES), x, y,
                                 args.epochs)
        flare.send(FLModel(params={"numpy_key": w}, meta={"NUM_STEPS_CURRENT_ROUND": len(y)}))


if __name__ == "__main__":
    train_loop()
