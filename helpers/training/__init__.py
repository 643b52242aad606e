"""training — distributed training, run and modelled (chapters 06, 07, 08, 09, 14, 15, 18, 26, 28).

Five sub-packages a reader can name:

* ``models/``      the networks the labs train: tiny MLP/GPT (``tiny``), attention three ways (``attention``)
* ``parallel/``    one file per parallelism, run on real ranks with its communication beside it: data parallel with
                   DDP/FSDP (``dptrain``), DeepSpeed ZeRO (``dszero``), DDP buckets and hooks (``ddpcomm``),
                   Horovod tensor fusion (``tensor_fusion``), tensor (``tensorpar``), sequence (``seqpar``),
                   pipeline (``pipeline``), context (``context_parallel``), expert (``moe``), and the 2-D mesh (``mesh``)
* ``calc/``        calculators, pure functions: performance models (``perfmodel``) and the published runs they
                   are checked against (``published``), memory (``memory``), the 3D-parallel planner
                   (``planner``), Megatron flags (``megatron``), pipeline schedules (``pipeline_schedule``)
* ``profiling/``   one process measured: activation memory (``actmem``), FP8 memory (``fp8mem``), where a step's
                   time goes (``bottleneck``), a GPT's MFU (``gpt_mfu``)
* ``resilience/``  checkpoints (``ckpt``), elastic restarts and checkpoint intervals (``elastic``), loss spikes
                   (``stability``)

Sub-packages import ``core``, ``formulas`` and each other (calc before parallel; no cycles).
"""
