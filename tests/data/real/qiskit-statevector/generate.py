# Run with qiskit 2.6.1: builds each circuit in qiskit from the op list and stores Statevector(qc).data
import json, math, sys
from qiskit import QuantumCircuit
from qiskit.quantum_info import Statevector
import qiskit
cases = {
  "ghz3": (3, [["h",[0]],["cx",[0,1]],["cx",[1,2]]]),
  "qft4_noswap": (4, None),
  "mixed4": (4, [["h",[0]],["rx",[1],[0.3]],["ry",[2],[1.1]],["s",[3]],["t",[0]],["y",[1]],["cz",[0,2]],
                 ["cp",[3,1],[0.7]],["rz",[2],[2.5]],["cx",[2,0]],["p",[3],[0.4]],["x",[2]],["z",[1]]]),
}
# qft4 as qiskit's own QFT (do_swaps=False) to test our construction against the library's
from qiskit.circuit.library import QFT
out = {"qiskit_version": qiskit.__version__, "cases": {}}
for name, (n, ops) in cases.items():
    if ops is None:
        qc = QuantumCircuit(n); qc.x(0); qc.x(2); qc.compose(QFT(n, do_swaps=False), inplace=True)
        ops_store = "x(0), x(2), then qiskit.circuit.library.QFT(4, do_swaps=False)"
    else:
        qc = QuantumCircuit(n)
        for op in ops:
            g, qs = op[0], op[1]; ps = op[2] if len(op) > 2 else []
            getattr(qc, g)(*ps, *qs)
        ops_store = ops
    sv = Statevector(qc).data
    out["cases"][name] = {"qubits": n, "ops": ops_store, "re": sv.real.tolist(), "im": sv.imag.tolist()}
json.dump(out, open(sys.argv[1], "w"), indent=1)
