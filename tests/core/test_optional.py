"""An absent optional package: one line naming what is skipped and the install, and True; present: False, silent."""
import importlib.util

from helpers.core import optional


def test_present_is_silent(capsys):
    assert optional.missing("json", "nothing") is False
    assert capsys.readouterr().out == ""


def test_absent_says_what_is_skipped_and_how_to_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "kubernetes_validate" else real(n, *a))
    assert optional.missing("kubernetes_validate", "Lab 5's schema validation") is True
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "kubernetes-validate is not installed" in out
    assert "Lab 5's schema validation is skipped" in out and "pip install -r requirements.txt" in out
