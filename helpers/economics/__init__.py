"""economics — power, energy and money: NVML power traces and energy per step (chapter 16), the clock/power-cap
energy model, PUE and facility power, cooling and rack density, carbon (chapter 16); the TCO model, dated cloud
prices, the spot-training and autoscaling simulators and the provider checklist (chapter 21); chapter 29 composes
them with the training and network models. Imports only ``core`` and itself.
"""
