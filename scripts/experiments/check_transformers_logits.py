"""Checks that a model folder agentic saved (and optionally a LoRA adapter folder it saved) loads in
transformers (and PEFT) and gives the logits recorded in a logits.json ({ids, logits}, as the
fixture recorders in test/fixtures/recorders write them).

    python3 scripts/experiments/check_transformers_logits.py FOLDER LOGITS_JSON [ADAPTER_FOLDER]

Prints the classes transformers (and PEFT) chose and the largest absolute logit difference; exits 1
when it is 1e-4 or more. Needs torch and transformers, and peft for an adapter.
"""
import json
import sys

import torch
from transformers import AutoModelForCausalLM

folder, recorded = sys.argv[1], json.load(open(sys.argv[2]))
model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
described = type(model).__name__
if len(sys.argv) > 3:
    from peft import PeftModel

    model = PeftModel.from_pretrained(model, sys.argv[3])
    described += f" + {type(model).__name__} ({type(model.peft_config['default']).__name__}, r={model.peft_config['default'].r}, " \
                 f"alpha={model.peft_config['default'].lora_alpha}, targets={sorted(model.peft_config['default'].target_modules)})"
model.eval()
with torch.no_grad():
    logits = model(torch.tensor(recorded["ids"])).logits
gap = float((logits - torch.tensor(recorded["logits"])).abs().max())
print(f"{described}: largest logit difference {gap:.3g}")
sys.exit(0 if gap < 1e-4 else 1)
