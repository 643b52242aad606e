"""INT8 weight quantisation and ONNX Runtime for the tiny GPT, each compared with plain torch (chapter 19).

* :func:`int8_dynamic` — ``torch.ao.quantization.quantize_dynamic``: Linear weights stored as int8 with one scale
  per output channel, activations quantised on the fly (CPU kernels: fbgemm/x86). torch marks this API deprecated
  in favour of torchao's ``quantize_``; it still runs and needs no extra package, so the warning is caught here.
* :func:`onnx_roundtrip` — ``torch.onnx.export`` (the dynamo exporter, needs ``onnxscript``) with a dynamic batch,
  then ``onnxruntime.InferenceSession`` on the CPU; both imported lazily, absence reported in one line.
"""
from __future__ import annotations

import io
import logging
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch


def state_bytes(model: torch.nn.Module) -> int:
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.getbuffer().nbytes


def int8_dynamic(model: torch.nn.Module) -> torch.nn.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.ao.quantization import quantize_dynamic
        return quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


@dataclass(frozen=True)
class Compared:
    variant: str
    size_bytes: int
    time_s: float
    max_abs_logit_diff: float
    top1_agreement: float          # fraction of positions whose argmax token equals fp32's


def compare_int8(model, x) -> list[Compared]:
    from helpers.core import timing
    model = model.eval()
    q = int8_dynamic(model)
    with torch.inference_mode():
        ref, out = model(x), q(x)
        t_ref = timing.time_fn(lambda: model(x), warmup=2, repeats=5).median_s
        t_q = timing.time_fn(lambda: q(x), warmup=2, repeats=5).median_s
    agree = (ref.argmax(-1) == out.argmax(-1)).float().mean().item()
    return [Compared("fp32", state_bytes(model), t_ref, 0.0, 1.0),
            Compared("int8 dynamic (torch.ao)", state_bytes(q), t_q, (ref - out).abs().max().item(), agree)]


def onnx_available() -> tuple[bool, str]:
    try:
        import onnxruntime  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError as e:
        return False, f"ONNX path skipped: {e.name} is not installed (pip install onnx onnxruntime onnxscript)"
    return True, f"onnxruntime {onnxruntime.__version__}"


def onnx_roundtrip(model, x) -> dict:
    """Export with a dynamic batch dimension, run in ONNX Runtime (CPU), compare with torch at two batch sizes."""
    import onnxruntime as ort

    from helpers.core import timing
    model = model.eval()
    with tempfile.TemporaryDirectory(prefix="book-onnx-") as d:
        path = Path(d) / "tiny_gpt.onnx"
        batch = torch.export.Dim("batch", min=1, max=1024)
        quiet = logging.getLogger("torch.onnx")          # "torchvision is not installed" notes go to stderr
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (x,), str(path), dynamic_shapes=({0: batch},), verbose=False,
                              report=False, dynamo=True)
        quiet.setLevel(level)
        size = path.stat().st_size + sum(p.stat().st_size for p in Path(d).glob("*.data"))
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        diffs = {}
        for b in (x.shape[0], 2 * x.shape[0]):
            xb = x.repeat(b // x.shape[0], 1)
            with torch.inference_mode():
                ref = model(xb).numpy()
            diffs[b] = float(abs(sess.run(None, {name: xb.numpy()})[0] - ref).max())
        xn = x.numpy()
        t_ort = timing.time_fn(lambda: sess.run(None, {name: xn}), warmup=2, repeats=5).median_s
    with torch.inference_mode():
        t_torch = timing.time_fn(lambda: model(x), warmup=2, repeats=5).median_s
    return {"onnx_bytes": size, "max_abs_diff_by_batch": diffs, "ort_time_s": t_ort, "torch_time_s": t_torch}
