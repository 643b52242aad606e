"""helpers.governance.nvflare_run and fl_client: NVFlare is optional; without it the run says why, and the client
script the simulator executes is where run() points."""
import importlib.util

from helpers.governance import fl_client, nvflare_run


def test_availability_is_reported_and_the_client_script_is_this_module():
    ok, why = nvflare_run.available()
    assert ok == (importlib.util.find_spec("nvflare") is not None)
    assert ("nvflare" in why) and (ok or "pip install" in why)
    assert nvflare_run.CLIENT.resolve() == __import__("pathlib").Path(fl_client.__file__).resolve()
    assert callable(fl_client.train_loop)
