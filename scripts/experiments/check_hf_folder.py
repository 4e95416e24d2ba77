"""Checks that a model folder agentic wrote (a run's model/, a checkpoint's actor/) is one Hugging
Face transformers reads as Qwen2: the config, the tokenizer and its chat template, and every weight
by the name and shape Qwen2ForCausalLM expects. With PyTorch installed it also loads the model and
prints its greedy next token after a FrozenLake prompt.

    python3 scripts/experiments/check_hf_folder.py output/agentic/checkpoints/checkpoint-50/actor

Prints the prompt's token ids, so they can be compared with agentic's own (they must be equal).
Exits 1 when a weight is missing, unexpected or of the wrong shape.
"""
import sys

from safetensors.numpy import load_file
from transformers import AutoConfig, AutoTokenizer

folder = sys.argv[1]
config = AutoConfig.from_pretrained(folder)
print(f"config: {type(config).__name__}, {config.num_hidden_layers} layers of {config.hidden_size}, "
      f"{config.num_attention_heads} heads ({config.num_key_value_heads} kv), vocabulary {config.vocab_size}")
tokenizer = AutoTokenizer.from_pretrained(folder)
messages = [{"role": "system", "content": "Reach G."}, {"role": "user", "content": "P___\n_O__\n__G_\n____"}]
prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
ids = tokenizer(prompt)["input_ids"]
print(f"tokenizer: {type(tokenizer).__name__}, {len(tokenizer)} ids; chat prompt of {len(ids)} tokens: {ids}")

hidden, layers, inner = config.hidden_size, config.num_hidden_layers, config.intermediate_size
kv = config.num_key_value_heads * (hidden // config.num_attention_heads)
expected = {"model.embed_tokens.weight": (config.vocab_size, hidden), "model.norm.weight": (hidden,)}
for i in range(layers):
    at = f"model.layers.{i}."
    for name, shape in {
        "self_attn.q_proj.weight": (hidden, hidden), "self_attn.q_proj.bias": (hidden,),
        "self_attn.k_proj.weight": (kv, hidden), "self_attn.k_proj.bias": (kv,),
        "self_attn.v_proj.weight": (kv, hidden), "self_attn.v_proj.bias": (kv,),
        "self_attn.o_proj.weight": (hidden, hidden),
        "mlp.gate_proj.weight": (inner, hidden), "mlp.up_proj.weight": (inner, hidden), "mlp.down_proj.weight": (hidden, inner),
        "input_layernorm.weight": (hidden,), "post_attention_layernorm.weight": (hidden,),
    }.items():
        expected[at + name] = shape
if not config.tie_word_embeddings:
    expected["lm_head.weight"] = (config.vocab_size, hidden)
found = {name: tuple(tensor.shape) for name, tensor in load_file(f"{folder}/model.safetensors").items()}
missing = sorted(set(expected) - set(found))
unexpected = sorted(set(found) - set(expected))
wrong = sorted(name for name in expected if name in found and found[name] != expected[name])
print(f"weights: {len(found)} tensors; missing {missing}, unexpected {unexpected}, wrong shape {wrong}")

try:
    import torch
    from transformers import AutoModelForCausalLM
except ImportError:
    print("model: PyTorch is not installed, so the forward pass is not checked")
else:
    model = AutoModelForCausalLM.from_pretrained(folder)
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, -1]
    print(f"model: {type(model).__name__}; greedy next token {int(logits.argmax())} {tokenizer.decode([int(logits.argmax())])!r}")
sys.exit(1 if missing or unexpected or wrong else 0)
